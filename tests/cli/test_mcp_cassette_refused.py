"""``mcp record`` when the cassette refuses a write (a file size limit, as a full disk):
the proxy relays first, so the host still gets every byte of every answer (the one being
recorded included, its newline too) and the session goes on, unrecorded; the cassette
ends at its last whole line, every entry before kept; stderr names the cassette and the
OS error; the exit status is ``EXIT_BAD_INPUT``. Over stdio and over Streamable HTTP, a
real proxy process under ``RLIMIT_FSIZE`` (SIGXFSZ ignored: the write fails with EFBIG)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.constants import EXIT_BAD_INPUT
from support.mcp_session import HANDSHAKE, TIMEOUT, RawSession, record_cmd, tool_call

#: the cassette may not grow past this (the proxy's files: the sidecar stays small)
LIMIT = 2 << 20
BIG = 3 << 20
TEXT = ("The quick brown fox: 0123456789 /-_.,;[]{} " * (BIG // 40))[:BIG]

#: a raw server: ``initialize`` gets {}; a tools/call of ``big`` the bytes of the file
#: ``ANSWER`` (its ``{id}`` the call's id); any other tools/call a small text result
SERVER = """
import json, os, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    req = json.loads(line)
    if "id" not in req:
        continue
    if req.get("method") == "tools/call" and req["params"]["name"] == "big":
        with open(os.environ["ANSWER"], "rb") as fh:
            data = fh.read().replace(b"{id}", json.dumps(req["id"]).encode())
    else:
        result = {}
        if req.get("method") == "tools/call":
            result = {"content": [{"type": "text", "text": "small"}], "isError": False}
        data = json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}).encode() + b"\\n"
    out.write(data)
    out.flush()
"""
SHAPES = {
    # written ahead of its end as it streams (``AnswerAhead``)
    "plain": b'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}\n',
    # an escape: read whole, the entry written at the answer's end
    "escape": b'{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s\\n"}]}}\n',
}


def limited(size: int = LIMIT) -> None:
    """``preexec_fn``: files may not grow past ``size`` bytes; SIGXFSZ ignored, so a write
    past it fails with EFBIG (as ``ulimit -f`` under a shell that ignores it)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _server(tmp_path: Path, answer: bytes) -> tuple[list[str], dict[str, str]]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    (tmp_path / "answer").write_bytes(answer)
    return [sys.executable, str(script)], {**os.environ, "ANSWER": str(tmp_path / "answer")}


def _check_cassette(cassette: Path, stderr: bytes) -> None:
    """One whole line (seq 1), and the message naming the file, the error and the seq."""
    written = cassette.read_bytes()
    assert written.endswith(b"\n") and written.count(b"\n") == 1, written[-200:]
    [entry] = load(cassette)
    assert (entry.seq, entry.tool, entry.args) == (1, "small", {"n": 1})
    said = stderr.decode()
    assert f"cannot write to cassette {cassette}: File too large (EFBIG, errno 27)" in said
    assert "the recording stopped at seq 2 (the 1 entry before it is kept)" in said
    assert "the session goes on unrecorded" in said
    assert "Traceback" not in said and "exited" not in said, said


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_stdio_answer_refused_reaches_the_host_whole(tmp_path: Path, shape: str) -> None:
    answer = SHAPES[shape].replace(b"%s", TEXT.encode())
    command, env = _server(tmp_path, answer)
    cassette = tmp_path / "run.jsonl"
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        record_cmd(cassette, command, "--report", str(report)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=limited,
    )
    messages = [
        HANDSHAKE[0],
        HANDSHAKE[1],
        tool_call(2, "small", {"n": 1}),
        tool_call(3, "big", {"path": "a.txt"}),
        tool_call(4, "small", {"n": 2}),  # after the failure: relayed, not recorded
    ]
    sent = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    out, err = proc.communicate(sent, timeout=TIMEOUT)
    # every byte of every answer, in order, the big one's newline included
    small = b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "small"}], "isError": false}}\n'
    expected = [
        b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n',
        small % 2,
        answer.replace(b"{id}", b"3"),
        small % 4,
    ]
    assert out == b"".join(expected), (len(out), err.decode())
    assert proc.returncode == EXIT_BAD_INPUT, err.decode()
    _check_cassette(cassette, err)
    mcp = json.loads(report.read_text())["mcp"]
    assert mcp["write_error"] is not None and str(cassette) in mcp["write_error"]
    assert not mcp["server_crashed"]


def test_stdio_big_call_refused_reaches_the_server_whole(tmp_path: Path) -> None:
    """A 5 MB call line, its entry's start and args written ahead of its answer (the
    host's thread): the server gets the whole line, the host its answer."""
    answer = b'{"jsonrpc":"2.0","id":{id},"result":{"content":[],"isError":false}}\n'
    command, env = _server(tmp_path, answer)
    cassette = tmp_path / "run.jsonl"
    long = (TEXT * 2)[: 5 << 20]
    messages = [
        HANDSHAKE[0],
        HANDSHAKE[1],
        tool_call(2, "small", {"n": 1}),
        tool_call(3, "big", {"text": long}),
        tool_call(4, "small", {"n": 2}),
    ]
    session = RawSession(record_cmd(cassette, command), env=env, preexec_fn=limited)
    try:
        for m in messages:
            if "id" in m:
                session.request(m)
            else:
                session.send(m)
    finally:
        status = session.close()
    assert session.received[2] == answer.replace(b"{id}", b"3")
    assert json.loads(session.received[3])["result"]["content"][0]["text"] == "small"
    assert status == EXIT_BAD_INPUT, session.stderr.decode()
    _check_cassette(cassette, session.stderr)


def test_http_answer_refused_reaches_the_host_whole(tmp_path: Path) -> None:
    import httpx2

    from tests.cli.test_mcp_http import free_port, wait_listening
    from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, SERVER, call

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    cassette = tmp_path / "run.jsonl"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("echo", {"n": 1}),
        ("fill", {"size": BIG}),  # refused: the recording stops
        ("echo", {"n": 2}),
    ]
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        proxy = subprocess.Popen(
            [*CLI, "mcp", "record", "--url", remote, "-o", str(cassette)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=limited,
        )
        assert proxy.stdout is not None and proxy.stderr is not None
        url = proxy.stdout.readline().decode().strip()
        try:
            with httpx2.Client(timeout=TIMEOUT) as client:
                for n, (tool, args) in enumerate(calls, start=1):
                    body = json.dumps(call(n, tool, args)).encode()
                    through = client.post(url, content=body, headers=HEADERS)
                    straight = client.post(remote, content=body, headers=HEADERS)
                    assert through.status_code == straight.status_code == 200
                    assert through.content == straight.content
        finally:
            proxy.send_signal(signal.SIGINT)
            status = proxy.wait(timeout=TIMEOUT)
        stderr = proxy.stderr.read()
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
    assert status == EXIT_BAD_INPUT, stderr.decode()
    written = cassette.read_bytes()
    assert written.endswith(b"\n") and written.count(b"\n") == 1
    [entry] = load(cassette)
    assert (entry.seq, entry.tool, entry.args) == (1, "echo", {"n": 1})
    said = stderr.decode()
    assert f"cannot write to cassette {cassette}: File too large (EFBIG, errno 27)" in said
    assert "the recording stopped at seq 2" in said and "Traceback" not in said
