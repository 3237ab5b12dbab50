"""``mcp record --url`` and ``mcp record`` over stdio on uvloop and on asyncio's own loop
(``mcp/_loop.py``, issue 31): for messages of every shape the recorder meets (a small
call, a notification, a batch, a body that is not JSON, bytes that are not UTF-8, big
requests announced, chunked and with escapes, big answers, a server's notifications
before its answer), the host gets the same bytes from a recorder on either loop, and both
cassettes hold the same bytes but for the time fields (``recorded_at``, ``duration_ms``).
(The other CLI tests run the proxies and replays on uvloop when it is installed, as the
``mcp`` extra does.) The uvloop side runs with uvloop's policy set as well, so an older
tree (whose ``asyncio.run`` takes the policy's loop) runs on uvloop too; the asyncio side
hides uvloop (the fallback when it is not installed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_session import HANDSHAKE, TIMEOUT, TOY_SERVER, RawSession, tool_call

from tests.cli.test_mcp_http import free_port, started, stop, wait_listening
from tests.cli.test_mcp_http_bad_input import HEADERS, SERVER, call, content

RAW_SERVER = [sys.executable, str(Path(TOY_SERVER).with_name("mcp_raw_server.py"))]

pytest.importorskip("uvloop")
if not sys.platform.startswith("linux"):
    pytest.skip("uvloop is taken on Linux only", allow_module_level=True)

BIG = 3 << 19  # past STREAM_FROM (1 MB): streamed, watched, written ahead
_RUN_CLI = (
    "sys.argv[0] = 'cassette-tui'\nrunpy.run_module('cassette_tui.tui.cli', run_name='__main__')\n"
)
LOOPS = {
    "uvloop": (
        "import asyncio, runpy, sys, uvloop\n"
        "asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())\n" + _RUN_CLI
    ),
    "asyncio": "import runpy, sys\nsys.modules['uvloop'] = None\n" + _RUN_CLI,
}
#: (body, chunked): every shape of POST the recorder reads
POSTS: list[tuple[bytes, bool]] = [
    (json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).encode(), False),
    (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', False),
    (json.dumps(call(1, "echo", {"small": True})).encode(), False),
    (json.dumps([call(2, "echo", {"n": 2}), call(3, "fill", {"size": 10})]).encode(), False),
    (b"{not json", False),
    (json.dumps(call(4, "bad_utf8", {"at": "@"})).encode(), False),
    (json.dumps(call(5, "echo", {"text": "x" * BIG})).encode(), False),  # streamed
    (json.dumps(call(6, "echo", {"text": "a\\b\n" * (BIG // 4)})).encode(), False),
    (json.dumps(call(7, "echo", {"text": "z" * BIG})).encode(), True),  # chunked
    (json.dumps(call(8, "fill", {"size": BIG})).encode(), False),  # a big answer
    (json.dumps(call(9, "fill", {"size": 2 * BIG + 7})).encode(), False),
]
_TIMES = re.compile(rb'"(recorded_at|duration_ms)":("[^"]*"|[0-9.e+-]+)')


def _posts(url: str) -> list[tuple[int, bytes]]:
    import httpx2

    with httpx2.Client(timeout=TIMEOUT) as client:
        return [
            (answer.status_code, answer.content)
            for answer in (
                client.post(url, content=content(body, chunked), headers=HEADERS)
                for body, chunked in POSTS
            )
        ]


def _through(loop: str, args: list[str]) -> tuple[list[tuple[int, bytes]], int]:
    """The answers to ``POSTS`` through ``cassette-tui ARGS`` on ``loop``, and its exit
    status."""
    proc, url = started([sys.executable, "-c", LOOPS[loop], *args])
    try:
        got = _posts(url)
    finally:
        status = stop(proc)
    return got, status


def test_recorded_the_same_on_uvloop_and_asyncio(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    runs: dict[str, Any] = {}
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        straight = _posts(remote)
        for loop in LOOPS:
            run = tmp_path / f"{loop}.jsonl"
            runs[loop] = _through(loop, ["mcp", "record", "--url", remote, "-o", str(run)])
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
    for loop in LOOPS:
        got, status = runs[loop]
        assert status == 0, loop
        assert got == straight, loop  # the bytes the server sent, as they were
    on_uvloop = (tmp_path / "uvloop.jsonl").read_bytes()
    on_asyncio = (tmp_path / "asyncio.jsonl").read_bytes()
    assert len(on_uvloop.splitlines()) >= 9  # every call answered is an entry
    assert _TIMES.sub(b"", on_uvloop) == _TIMES.sub(b"", on_asyncio)


#: every shape of stdio line the recorder reads (requests answered, in turn)
LINES: list[Any] = [
    *HANDSHAKE,
    tool_call(2, "echo", {"small": True}),
    [tool_call(3, "echo", {"n": 3}), tool_call(4, "echo", {"n": 4})],
    tool_call(5, "bad_utf8", {}),
    tool_call(6, "notify", {}),
    tool_call(7, "echo", {"text": "x" * BIG}),  # a big line: passed on in pieces
    tool_call(8, "echo", {"text": "a\\b\n" * (BIG // 4)}),
    tool_call(9, "nope", {}),
]


def _stdio(loop: str, run: Path) -> tuple[list[bytes], int]:
    """The lines a host got through ``mcp record`` over stdio on ``loop``, and its exit
    status."""
    session = RawSession(
        [sys.executable, "-c", LOOPS[loop], "mcp", "record", "-o", str(run), "--", *RAW_SERVER]
    )
    try:
        for message in LINES:
            if isinstance(message, list) or "id" in message:
                first = message[0] if isinstance(message, list) else message
                session.send(message)
                while True:  # up to the answer (a batch's: one array)
                    line = session.lines.get(timeout=TIMEOUT)
                    assert line is not None, session.stderr
                    session.received.append(line)
                    if isinstance(message, list) or b'"id": %d' % first["id"] in line:
                        break
            else:
                session.send(message)
        status = session.close()
    finally:
        session.kill()
    return session.received, status


def test_recorded_the_same_over_stdio_on_uvloop_and_asyncio(tmp_path: Path) -> None:
    got = {loop: _stdio(loop, tmp_path / f"{loop}.jsonl") for loop in LOOPS}
    assert got["uvloop"] == got["asyncio"]
    assert got["uvloop"][1] == 0
    on_uvloop = (tmp_path / "uvloop.jsonl").read_bytes()
    assert len(on_uvloop.splitlines()) >= 8
    assert _TIMES.sub(b"", on_uvloop) == _TIMES.sub(b"", (tmp_path / "asyncio.jsonl").read_bytes())
