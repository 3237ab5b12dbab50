"""A big answer through ``mcp record`` recorded while it streams (issue 31): the host gets
exactly the server's bytes, the cassette holds exactly the line the writer makes of the
answer read whole (also when the entry's start guessed from the first piece was wrong),
and a proxy killed mid-answer leaves a cassette whose cut last line a load reports, every
entry before it kept."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp.record import CassetteWriter
from support.mcp_session import HANDSHAKE, RawSession, record_cmd, tool_call

#: a raw server: answers ``initialize`` with {}, a tools/call with the bytes of the file
#: ``ANSWER`` (its ``{id}`` replaced by the call's id); with ``STALL`` set, a call of the
#: tool ``stall`` with the file ``STALL``'s bytes and no newline once the host's next line
#: came, then it sleeps (a server that hangs mid-answer)
SERVER = """
import json, os, sys, time
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    req = json.loads(line)
    if "id" not in req:
        continue
    if req.get("method") != "tools/call":
        out.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {}}).encode() + b"\\n")
    elif os.environ.get("STALL") and req["params"]["name"] == "stall":
        with open(os.environ["STALL"] + ".pid", "w") as fh:
            fh.write(str(os.getpid()))
        sys.stdin.buffer.readline()  # the host's next line: the proxy has noted the call
        with open(os.environ["STALL"], "rb") as fh:
            out.write(fh.read())
        out.flush()
        time.sleep(60)
    else:
        with open(os.environ["ANSWER"], "rb") as fh:
            out.write(fh.read().replace(b"{id}", json.dumps(req["id"]).encode()))
    out.flush()
"""
BIG = 3 << 20
TEXT = ("The quick brown fox: 0123456789 /-_.,;[]{} " * (BIG // 40))[:BIG]
SHAPES = {
    "plain": b'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}\n',
    "spaced": b'{"jsonrpc": "2.0", "id": {id}, "result": {"content": [{"type": "text", "text": "%s"}]}}\n',
    # the guess is wrong: the long string is replaced by a later key of the same name
    "duplicate": b'{"jsonrpc":"2.0","id":{id},"result":{"text":"%s","text":"short"}}\n',
    # the guess is wrong: a float after it, so the response's text is the standard library's
    "float": b'{"jsonrpc":"2.0","id":{id},"result":{"text":"%s","score":0.1}}\n',
    # not checked as it passes: an escape in the long string
    "escape": b'{"jsonrpc":"2.0","id":{id},"result":{"text":"%s\\n"}}\n',
}


def server(tmp_path: Path) -> list[str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    return [sys.executable, str(script)]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_big_answer_recorded_as_read_whole(tmp_path: Path, shape: str) -> None:
    answer = SHAPES[shape].replace(b"%s", TEXT.encode())
    (tmp_path / "answer").write_bytes(answer)
    cassette = tmp_path / "run.jsonl"
    env = {**os.environ, "ANSWER": str(tmp_path / "answer")}
    session = RawSession(record_cmd(cassette, server(tmp_path)), env=env)
    try:
        session.request(HANDSHAKE[0])
        args = {"path": "a.txt", "n": 3}
        session.request(tool_call(7, "read", args))
    finally:
        assert session.close() == 0, session.stderr.decode()
    # the host got the server's bytes, exactly
    assert session.received[-1] == answer.replace(b"{id}", b"7")
    written = cassette.read_bytes()
    [entry] = load(cassette)
    # the line the writer makes of the answer read whole, at the same time fields
    expected = tmp_path / "expected.jsonl"
    writer = CassetteWriter(expected, NormalizationRules())
    result = json.loads(answer.replace(b"{id}", b"7"))["result"]
    extra = {k: entry.extra[k] for k in ("recorded_at", "duration_ms")}
    writer.write("read", args, result, None, extra, None, len(answer))
    writer.close()
    assert written == expected.read_bytes()
    assert entry.response == result


def test_killed_mid_answer_leaves_a_loadable_cassette(tmp_path: Path) -> None:
    answer = SHAPES["plain"].replace(b"%s", TEXT.encode())
    (tmp_path / "answer").write_bytes(answer)
    (tmp_path / "stall").write_bytes(answer.replace(b"{id}", b"8")[: 2 * len(answer) // 3])
    cassette = tmp_path / "run.jsonl"
    env = {**os.environ, "ANSWER": str(tmp_path / "answer"), "STALL": str(tmp_path / "stall")}
    session = RawSession(record_cmd(cassette, server(tmp_path)), env=env)
    try:
        session.request(HANDSHAKE[0])
        session.request(tool_call(7, "read", {"path": "a.txt"}))
        first = cassette.read_bytes()
        session.send(tool_call(8, "stall", {}))
        session.send(HANDSHAKE[1])  # passed on once the call is noted (a request in flight)
        deadline = time.monotonic() + 60
        # the stalled answer's start and its long string written ahead
        while cassette.stat().st_size < len(first) + BIG // 2:
            assert time.monotonic() < deadline, "the answer was never written ahead"
            time.sleep(0.02)
        os.kill(session.proc.pid, signal.SIGKILL)
        session.proc.wait(timeout=60)
    finally:
        session.kill()
        stalled = tmp_path / "stall.pid"
        if stalled.exists():  # the server outlives a proxy killed outright: ended here
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(stalled.read_text()), signal.SIGKILL)
    written = cassette.read_bytes()
    assert written.startswith(first) and not written.endswith(b"\n")
    with pytest.raises(CassetteFormatError) as caught:
        load(cassette)
    assert caught.value.truncated and caught.value.line == 2
    [kept] = load(cassette, lenient=True)
    assert kept.tool == "read" and kept.seq == 1


@pytest.mark.parametrize("text", ["plain", "escape", "control"])
def test_big_request_recorded_as_read_whole(tmp_path: Path, text: str) -> None:
    """A 5 MB call line goes to the server in pieces, its long string checked as they
    pass (``LongStringWatch`` in the host's thread); the entry is the writer's line of the
    call read whole (a string with an escape or a control character is read whole)."""
    long = (TEXT * 2)[: 5 << 20]
    long = {"plain": long, "escape": long + "\n\\", "control": long + "\x01"}[text]
    answer = b'{"jsonrpc":"2.0","id":{id},"result":{"content":[],"isError":false}}\n'
    (tmp_path / "answer").write_bytes(answer)
    cassette = tmp_path / "run.jsonl"
    env = {**os.environ, "ANSWER": str(tmp_path / "answer")}
    session = RawSession(record_cmd(cassette, server(tmp_path)), env=env)
    args = {"z": 1, "text": long, "a": [1.5, None]}
    try:
        session.request(HANDSHAKE[0])
        session.request(tool_call(3, "write", args))
    finally:
        assert session.close() == 0, session.stderr.decode()
    assert session.received[-1] == answer.replace(b"{id}", b"3")
    [entry] = load(cassette)
    expected = tmp_path / "expected.jsonl"
    writer = CassetteWriter(expected, NormalizationRules())
    extra = {k: entry.extra[k] for k in ("recorded_at", "duration_ms")}
    writer.write("write", args, {"content": [], "isError": False}, None, extra, None, len(answer))
    writer.close()
    assert cassette.read_bytes() == expected.read_bytes()


def test_long_line_after_a_long_non_json_line_keeps_its_place(tmp_path: Path) -> None:
    """A server's 8 MB line that is not JSON-RPC, then a big answer: both go on in pieces
    from the server's thread, and the second may start only once the first's end (its
    newline, sent by the loop after reading the line) has gone: the host gets the server's
    bytes in order (it got the answer's start glued to the first line, the newline later)."""
    noise = b"x" * (8 << 20) + b"\n"
    answer = SHAPES["plain"].replace(b"%s", TEXT.encode())
    (tmp_path / "answer").write_bytes(noise + answer)
    cassette = tmp_path / "run.jsonl"
    env = {**os.environ, "ANSWER": str(tmp_path / "answer")}
    session = RawSession(record_cmd(cassette, server(tmp_path)), env=env)
    try:
        session.request(HANDSHAKE[0])
        session.send(tool_call(7, "read", {"path": "a.txt"}))
        got = [session.lines.get(timeout=60) for _ in range(2)]
    finally:
        assert session.close() == 0, session.stderr.decode()
    assert got == [noise, answer.replace(b"{id}", b"7")]
    [entry] = load(cassette)
    assert entry.response == json.loads(answer.replace(b"{id}", b"7"))["result"]


#: runs a command under a file size limit (``argv[1]`` bytes): writes past it fail with
#: EFBIG, as on a full disk (Python ignores SIGXFSZ, and exec keeps it ignored)
LIMITED = (
    "import os, resource, sys; n = int(sys.argv[1]);"
    " resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])"
)


def test_cassette_refusing_the_answer_written_ahead_stops_the_recording(tmp_path: Path) -> None:
    """The cassette cannot grow past 2 MB (a full disk) while a 3 MB answer is written
    ahead of its end: the host still gets the whole answer (its newline too), the cut
    line is removed, and the proxy exits with 2 (more in ``test_mcp_cassette_refused``)."""
    answer = SHAPES["plain"].replace(b"%s", TEXT.encode())
    (tmp_path / "answer").write_bytes(answer)
    cassette = tmp_path / "run.jsonl"
    env = {**os.environ, "ANSWER": str(tmp_path / "answer")}
    limit = 2 << 20
    command = [sys.executable, "-c", LIMITED, str(limit), *record_cmd(cassette, server(tmp_path))]
    session = RawSession(command, env=env)
    try:
        session.request(HANDSHAKE[0])
        session.send(tool_call(7, "read", {"path": "a.txt"}))
        got = session.lines.get(timeout=60)
    finally:
        status = session.close()
    assert b"Traceback" not in session.stderr, session.stderr.decode()
    assert status == 2, session.stderr.decode()
    assert got == answer.replace(b"{id}", b"7")
    assert cassette.read_bytes() == b""
    assert b"File too large" in session.stderr
