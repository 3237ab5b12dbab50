"""The cassette writer when the file refuses a write (ENOSPC: a full disk, simulated by a
test double of the file that takes so many bytes and refuses the rest): the recording
stops there, the file ends at its last whole line (every entry before kept, byte for byte
what the writer wrote), ``failure`` names the file, the error and the seq, nothing is
raised; and the proxy, in process, relays every byte to the host, says it, exits 2."""

from __future__ import annotations

import errno
import io
import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.constants import EXIT_BAD_INPUT
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp.record import AnswerAhead, CassetteWriter, RecordingProxy
from hypothesis import given, settings
from hypothesis import strategies as st


class FullDisk:
    """A cassette's file object that takes ``room`` bytes more, part of a write included,
    then refuses every write with ENOSPC (as a full disk does)."""

    def __init__(self, fh: Any, room: int) -> None:
        self._fh = fh
        self.room = room

    def write(self, data: Any) -> int:
        data = memoryview(data).cast("B")
        taken = self._fh.write(data[: max(self.room, 0)])
        self.room -= taken
        if taken < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return taken

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


def full_disk(writer: CassetteWriter, room: int) -> None:
    writer._fh = FullDisk(writer._fh, room)  # type: ignore[assignment]


ARGS = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=300), max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.lists(ARGS, min_size=1, max_size=6), st.integers(0, 3000))
def test_refused_write_leaves_the_whole_lines_before(
    calls: list[dict[str, Any]], room: int
) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        path = tmp / "run.jsonl"
        reference = tmp / "reference.jsonl"
        ref = CassetteWriter(reference, NormalizationRules())
        writer = CassetteWriter(path, NormalizationRules())
        full_disk(writer, room)
        seqs = []
        extra = {"recorded_at": "2026-01-01T00:00:00Z", "duration_ms": 1.0}
        for args in calls:
            seqs.append(writer.write("tool", args, {"ok": args}, None, extra))
            ref.write("tool", args, {"ok": args}, None, extra)
        writer.close()
        ref.close()
        kept = next((i for i, s in enumerate(seqs) if s is None), len(seqs))
        # the writes that said a seq, then none: the file is their lines, nothing more
        assert seqs == [*range(1, kept + 1), *[None] * (len(seqs) - kept)]
        lines = reference.read_bytes().splitlines(keepends=True)
        assert path.read_bytes() == b"".join(lines[:kept])
        if kept < len(seqs):
            failure = writer.failure
            assert failure is not None and failure.seq == kept + 1 and not failure.cut_left
            assert failure.error.errno == errno.ENOSPC
            message = failure.message()
            assert f"cannot write to cassette {path}: No space left on device" in message
            assert f"(ENOSPC, errno 28); the recording stopped at seq {kept + 1}" in message
        else:
            assert writer.failure is None


def test_refused_while_written_ahead(tmp_path: Path) -> None:
    """An answer's entry written ahead of its end (``open_answer``, ``append``): refused
    midway, the line is cut back and its end writes nothing."""
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path, NormalizationRules())
    assert writer.write("first", {}, {"ok": True}, None, {}) == 1
    first = path.read_bytes()
    full_disk(writer, 1000)
    ahead = AnswerAhead(2, b'{"seq":2,"tool":"t","args":{},"args_digest":"x","response":"', 0)
    assert writer.open_answer(ahead)
    assert writer.append(ahead, b"y" * 500)
    assert not writer.append(ahead, b"y" * 5000)  # refused: the recording stops
    assert path.read_bytes() == first
    assert writer.write("t", {}, "y" * 5500, None, {}, ahead=ahead) is None
    assert not writer.open_answer(AnswerAhead(2, b"{", 0))
    writer.close()
    assert path.read_bytes() == first
    assert writer.failure is not None and writer.failure.seq == 2
    assert [e.tool for e in load(path)] == ["first"]


SERVER = """
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    req = json.loads(line)
    if "id" not in req:
        continue
    result = {}
    if req.get("method") == "tools/call":
        size = req["params"]["arguments"]["size"]
        result = {"content": [{"type": "text", "text": "x" * size}], "isError": False}
    out.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}).encode() + b"\\n")
    out.flush()
"""


def run_proxy(
    tmp_path: Path, sizes: list[int], full: str, room: int
) -> tuple[RecordingProxy, bytes, str]:
    """A session in process: ``initialize``, then a tools/call answered with a text of
    each size; the cassette's (``full="cassette"``) or the sidecar's file takes ``room``
    bytes more. ``(proxy, bytes the host got, what was said)``."""
    (tmp_path / "server.py").write_text(SERVER)
    host_in, to_proxy = os.pipe()
    from_proxy, host_out = os.pipe()
    log = io.StringIO()
    proxy = RecordingProxy(
        [sys.executable, str(tmp_path / "server.py")],
        tmp_path / "run.jsonl",
        host_in=host_in,
        host_out=host_out,
        log=log,
    )
    if full == "cassette":
        full_disk(proxy.writer, room)
    else:
        proxy.journal._fh = FullDisk(proxy.journal._fh, room)  # type: ignore[assignment]
    got = bytearray()

    def read() -> None:
        while chunk := os.read(from_proxy, 1 << 20):
            got.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    runner = threading.Thread(target=proxy.run, daemon=True)
    runner.start()
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}] + [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "fill", "arguments": {"size": size}},
        }
        for n, size in enumerate(sizes, start=2)
    ]
    for call in calls:
        os.write(to_proxy, json.dumps(call).encode() + b"\n")
    os.close(to_proxy)
    runner.join(timeout=60)
    assert not runner.is_alive()
    os.close(host_out)
    reader.join(timeout=60)
    os.close(host_in)
    os.close(from_proxy)
    answers = [json.loads(line) for line in got.splitlines()]
    assert [a["id"] for a in answers] == list(range(1, len(sizes) + 2))
    assert [len(a["result"]["content"][0]["text"]) for a in answers[1:]] == sizes
    assert got.endswith(b"\n")
    return proxy, bytes(got), log.getvalue()


def test_proxy_relays_every_byte_when_the_disk_is_full(tmp_path: Path) -> None:
    sizes = [10, 3 << 20, 20]  # the second is refused: the recording stops
    proxy, _, said = run_proxy(tmp_path, sizes, "cassette", 100_000)
    cassette = tmp_path / "run.jsonl"
    [entry] = load(cassette)
    assert entry.args == {"size": 10}
    summary = proxy.summary
    assert summary.exit_status() == EXIT_BAD_INPUT
    assert summary.entries == 1 and not summary.server_crashed
    assert f"cannot write to cassette {cassette}: No space left on device (ENOSPC" in said
    assert "the recording stopped at seq 2 (the 1 entry before it is kept)" in said
    assert summary.report()["mcp"]["write_error"] in said


def test_proxy_relays_every_byte_when_the_sidecar_is_refused(tmp_path: Path) -> None:
    """The sidecar's journal refused (its header fits, the first exchange does not):
    the session goes on unrecorded, as when the cassette is refused."""
    proxy, _, said = run_proxy(tmp_path, [10, 20], "sidecar", 0)
    summary = proxy.summary
    assert summary.exit_status() == EXIT_BAD_INPUT and summary.entries == 0
    assert f"cannot write to sidecar {summary.sidecar}: No space left on device" in said
    assert "Traceback" not in said
