"""``mcp record --url`` reading into its connections' own buffers (``mcp/_read_into.py``,
issue 31) against the same recorder reading as before, by asyncio's fresh ``bytes`` per read
(asyncio takes a protocol as buffered by ``asyncio.protocols.BufferedProtocol``, hidden in
the second run): for big messages both ways (a request announced and one chunked, answers
of several MB, one whose long string has an escape, a small call between), the host gets
the same bytes from both and from the server straight, and both cassettes hold the same
bytes but for the time fields (``recorded_at``, ``duration_ms``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import free_port, started, stop, wait_listening
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, SERVER, call, content

BIG = 3 << 20
#: the recorder with asyncio's plain reads: no protocol is taken as buffered
PLAIN_READS = (
    "import asyncio.protocols, runpy, sys\n"
    "asyncio.protocols.BufferedProtocol = type('NotBuffered', (), {})\n"
    "sys.argv[0] = 'cassette-tui'\n"
    "runpy.run_module('cassette_tui.tui.cli', run_name='__main__')\n"
)
CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("echo", {"text": "x" * BIG, "n": 1}, False),  # announced: passed on as it comes
    ("echo", {"text": "a\\b\n" * (BIG // 4), "n": 2}, False),  # escapes: read whole
    ("echo", {"text": "z" * BIG, "n": 3}, True),  # chunked: read whole first
    ("fill", {"size": BIG}, False),  # a big answer
    ("echo", {"small": True}, False),
    ("fill", {"size": 2 * BIG + 7}, False),
]
_TIMES = re.compile(rb'"(recorded_at|duration_ms)":("[^"]*"|[0-9.e+-]+)')


def _session(command: list[str], remote: str, run: Path) -> list[bytes]:
    """Every call through a recorder started by ``command``: the bytes the host got."""
    import httpx2

    recorder, url = started([*command, "mcp", "record", "--url", remote, "-o", str(run)])
    got: list[bytes] = []
    try:
        with httpx2.Client(timeout=TIMEOUT) as client:
            for n, (tool, args, chunked) in enumerate(CALLS, start=1):
                body = json.dumps(call(n, tool, args)).encode()
                answer = client.post(url, content=content(body, chunked), headers=HEADERS)
                assert answer.status_code == 200
                got.append(answer.content)
    finally:
        assert stop(recorder) == 0
    return got


def test_big_messages_read_into_own_buffers_are_relayed_and_recorded_as_before(
    tmp_path: Path,
) -> None:
    import httpx2

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        buffered = _session(CLI, remote, tmp_path / "buffered.jsonl")
        plain = _session([sys.executable, "-c", PLAIN_READS], remote, tmp_path / "plain.jsonl")
        with httpx2.Client(timeout=TIMEOUT) as client:
            straight = [
                client.post(remote, json=call(n, tool, args), headers=HEADERS).content
                for n, (tool, args, _) in enumerate(CALLS, start=1)
            ]
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)
    assert buffered == plain
    assert [json.loads(b) for b in buffered] == [json.loads(s) for s in straight]
    ours = (tmp_path / "buffered.jsonl").read_bytes()
    before = (tmp_path / "plain.jsonl").read_bytes()
    assert len(ours.splitlines()) == len(CALLS)
    assert _TIMES.sub(b"", ours) == _TIMES.sub(b"", before)
