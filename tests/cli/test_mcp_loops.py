"""``mcp record --url`` and ``mcp replay --http`` on uvloop and on asyncio's own loop
(``mcp/_loop.py``, issue 31): for calls of every shape the recorder meets (a small call,
a notification, a batch, a body that is not JSON, bytes that are not UTF-8, big requests
announced, chunked and with escapes, big answers), the host gets the same bytes from a
recorder on either loop, both cassettes hold the same bytes but for the time fields
(``recorded_at``, ``duration_ms``), and the replay of the cassette answers the same on
either loop. The uvloop side runs with uvloop's policy set as well, so an older tree (whose
``asyncio.run`` takes the policy's loop) runs on uvloop too; the asyncio side hides uvloop
(the fallback when it is not installed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import free_port, started, stop, wait_listening
from tests.cli.test_mcp_http_bad_input import HEADERS, SERVER, call, content

pytest.importorskip("uvloop")
if not sys.platform.startswith("linux"):
    pytest.skip("uvloop is taken on Linux only", allow_module_level=True)

BIG = 3 << 19  # past STREAM_FROM (1 MB): streamed, watched, written ahead
_RUN_CLI = "sys.argv[0] = 'cassette-tui'\nrunpy.run_module('cassette_tui.tui.cli', run_name='__main__')\n"
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
    """The answers to ``POSTS`` through ``cassette-tui ARGS`` on ``loop``, and its exit."""
    proc, url = started([sys.executable, "-c", LOOPS[loop], *args])
    try:
        got = _posts(url)
    finally:
        status = stop(proc)
    return got, status


def test_recorded_and_replayed_the_same_on_uvloop_and_asyncio(tmp_path: Path) -> None:
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

    replayed = {
        loop: _through(loop, ["mcp", "replay", "--http", str(tmp_path / "uvloop.jsonl")])
        for loop in LOOPS
    }
    assert replayed["uvloop"] == replayed["asyncio"]
    assert replayed["uvloop"][1] == 0
