"""``mcp record`` over stdio with a small line's part done by the thread that read it
(issue 31): the host's thread notes a small host line after passing it on, the server's
thread records a small server line and passes it on (a read's lines in one write), and
the event loop is not woken for either (``record._note_here``, ``record._answer_here``).
Held against the loop doing all of it, as before (the two methods patched to leave every
line to the loop): the same bytes to the host, the same cassette but for the time fields,
the same sidecar, for a session of every kind of small line the recorder meets (a
banner, the handshake, calls, a batch, invalid UTF-8, notifications before an answer, a
server's request answered by the host, an id reused in flight, an error, answers that
come after a call's, a chatty server's log)."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from cassette_tui.core.mcp.record import RecordingProxy
from support.mcp_session import HANDSHAKE, TIMEOUT, TOY_SERVER, RawSession, tool_call

RAW_SERVER = [sys.executable, str(Path(TOY_SERVER).with_name("mcp_raw_server.py"))]
_TIMES = re.compile(rb'"(recorded_at|duration_ms)":("[^"]*"|[0-9.e+-]+)')
_RUN_CLI = (
    "import runpy, sys\n"
    "sys.argv[0] = 'cassette-tui'\n"
    "runpy.run_module('cassette_tui.tui.cli', run_name='__main__')\n"
)
#: the loop does every line's part, as before (the reference)
_ALL_IN_LOOP = (
    "from cassette_tui.core.mcp.record import RecordingProxy\n"
    "RecordingProxy._note_here = lambda self, loop, *, wait: False\n"
    "RecordingProxy._answer_here = lambda self, loop, lines, out: lines\n" + _RUN_CLI
)

#: (message, what it waits for: the ids of the answers, ``"batch"``, a notification's
#: method, in order); a message that waits for nothing is not waited on
SCRIPT: list[tuple[Any, list[Any]]] = [
    (HANDSHAKE[0], [1]),
    (HANDSHAKE[1], []),
    (tool_call(2, "echo", {"small": True}), [2]),
    ([tool_call(3, "echo", {"n": 3}), tool_call(4, "echo", {"n": 4})], ["batch"]),
    (tool_call(5, "bad_utf8", {}), [5]),
    (tool_call(6, "notify", {}), [6]),
    (tool_call(7, "ask", {}), [7]),  # the server asks the host (roots/list) first
    (tool_call(8, "hold", {}), []),
    (tool_call(8, "hold", {"again": True}), []),  # reused in flight: sent under an alias
    (tool_call(9, "release", {}), [8, 8, 9]),
    (tool_call(10, "nope", {}), [10]),
    # its answer, then a notification (waited for: else the next call may come first)
    (tool_call(11, "announce_after", {}), [11, "notifications/tools/list_changed"]),
    ({"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {}}, [12]),
    (tool_call(13, "chatty", {"notes": 300}), [13]),
    *((tool_call(n, "echo", {"n": n, "text": "é" * n}), [n]) for n in range(14, 40)),
]


def _answered(line: bytes, waiting: list[Any]) -> bool:
    try:
        doc = json.loads(line.decode("utf-8", "replace"))
    except ValueError:  # the server's banner
        return False
    if isinstance(doc, list):
        return waiting[:1] == ["batch"]
    if isinstance(waiting[0], str):  # a notification's method
        return doc.get("method") == waiting[0]
    return "method" not in doc and doc.get("id") == waiting[0]


def _host(send: Any, receive: Any) -> list[bytes]:
    """Play ``SCRIPT`` (a server's request answered as it comes); every line received."""
    got: list[bytes] = []
    for message, answers in SCRIPT:
        send(json.dumps(message).encode() + b"\n")
        waiting = list(answers)
        while waiting:
            line = receive()
            assert line, "the proxy closed its stdout"
            got.append(line)
            if b'"roots/list"' in line:
                send(b'{"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}}\n')
            elif _answered(line, waiting):
                waiting.pop(0)
    return got


def _through(launcher: str, run: Path) -> list[bytes]:
    session = RawSession([sys.executable, "-c", launcher, "mcp", "record", "-o", str(run), "--",
                          *RAW_SERVER])  # fmt: skip

    def receive() -> bytes:
        return session.lines.get(timeout=TIMEOUT) or b""

    try:
        got = _host(session.send, receive)
        assert session.close() == 0, session.stderr
    finally:
        session.kill()
    return got


def test_recorded_as_when_the_loop_did_every_line(tmp_path: Path) -> None:
    runs = {"here": tmp_path / "here", "loop": tmp_path / "loop"}  # one file name in both
    for folder in runs.values():
        folder.mkdir()
    here = _through(_RUN_CLI, runs["here"] / "run.jsonl")
    loop = _through(_ALL_IN_LOOP, runs["loop"] / "run.jsonl")
    assert here == loop  # the server's bytes, in the same order
    cassette = (runs["here"] / "run.jsonl").read_bytes()
    assert len(cassette.splitlines()) >= 30 and cassette.count(b'"tool":"hold"') == 2
    assert _TIMES.sub(b"", cassette) == _TIMES.sub(b"", (runs["loop"] / "run.jsonl").read_bytes())
    sidecar = (runs["here"] / "run.mcp.json").read_bytes()
    assert b"roots/list" in sidecar and b"step 299" in sidecar
    assert sidecar == (runs["loop"] / "run.mcp.json").read_bytes()


def test_small_lines_never_wait_for_the_loop(tmp_path: Path) -> None:
    """A session of small calls: no line of the server's is handed to the loop, and the
    loop notes no line of the host's (on main, the loop did both, woken twice a call)."""
    host_in, to_proxy = os.pipe()
    from_proxy, host_out = os.pipe()
    proxy = RecordingProxy(RAW_SERVER, tmp_path / "run.jsonl", host_in=host_in,
                           host_out=host_out, log=io.StringIO())  # fmt: skip
    noted_in_loop: list[int] = []  # host lines sent when the loop noted some
    drain = proxy._drain_notes

    def counted() -> None:
        if proxy._notes:
            noted_in_loop.append(proxy._host_sent)
        drain()

    proxy._drain_notes = counted  # type: ignore[method-assign]
    reader = os.fdopen(from_proxy, "rb")
    got: list[bytes] = []

    def host() -> None:
        script = [m for m, _ in SCRIPT[:3]] + [tool_call(n, "echo", {"n": n}) for n in range(3, 50)]
        for message in script:
            os.write(to_proxy, json.dumps(message).encode() + b"\n")
            if "id" in message:
                while b'"id": %d' % message["id"] not in (line := reader.readline()):
                    got.append(line)
                got.append(line)
        os.close(to_proxy)

    playing = threading.Thread(target=host, daemon=True)
    playing.start()
    summary = proxy.run()
    playing.join(TIMEOUT)
    os.close(host_in)
    os.close(host_out)
    reader.close()
    assert summary.entries == 48 and summary.exchanges == 1
    assert got[0] == b"raw server ready\n" and len(got) == 50
    assert proxy._down_queued == 0  # every server line recorded and passed on by its thread
    # every host line noted by the host's thread, but at the start, where the server's
    # thread may be recording its banner as the first lines come (then the host's thread
    # does not wait for it: the loop is woken to note them)
    assert all(sent <= 3 for sent in noted_in_loop), noted_in_loop
