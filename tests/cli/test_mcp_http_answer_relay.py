"""A big answer's way back to the host through ``mcp record --url`` (issue 31, session 17:
``http._Relayed``): it goes with the length the remote announced, not re-framed in chunks
(the bytes as the server sent them, and the same head as straight), and a host that
leaves in the middle of it does not lose the call: the answer is read from the remote
whole and recorded, as the server gave it. Against the hand-written server on loopback
(``support/mcp_raw_http_server.py``); every process bounded."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path

from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

BIG = 3 << 20
#: far more than the loopback socket buffers between the proxy and a host that reads
#: nothing (a few MB each way): the proxy is still passing it on when the host leaves
HUGE = 40 << 20


@contextlib.contextmanager
def _proxied(remote: str, run: Path) -> Iterator[str]:
    """``mcp record --url`` in front of ``remote``, recording to ``run``: its URL; the
    recorder stopped after (status 0)."""
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    try:
        yield url
    finally:
        assert stop(recorder) == 0


def test_a_big_answer_reaches_the_host_with_the_length_the_remote_announced(
    tmp_path: Path, raw_remote: str
) -> None:
    import httpx2

    run = tmp_path / "length.jsonl"
    with _proxied(raw_remote, run) as url, httpx2.Client(timeout=TIMEOUT) as client:
        body = json.dumps(call(1, "fill", {"size": BIG})).encode()
        through = client.post(url, content=body, headers=HEADERS)
        straight = client.post(raw_remote, content=body, headers=HEADERS)
    assert through.status_code == straight.status_code == 200
    assert through.content == straight.content
    assert len(through.content) > BIG
    # main re-framed it in chunks (no length: the host parsed a chunk head per piece)
    assert "transfer-encoding" not in through.headers
    assert through.headers["content-length"] == straight.headers["content-length"]
    assert through.headers["content-length"] == str(len(straight.content))
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [(e["seq"], e["tool"]) for e in entries] == [(1, "fill")]
    assert entries[0]["response"]["content"][0]["text"] == "y" * BIG


def test_a_host_that_leaves_mid_answer_does_not_lose_the_call(
    tmp_path: Path, raw_remote: str
) -> None:
    import httpx2

    run = tmp_path / "left.jsonl"
    with _proxied(raw_remote, run) as url:
        host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
        body = json.dumps(call(1, "fill", {"size": HUGE})).encode()
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            head = (
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
                "content-type: application/json\r\n"
                "accept: application/json, text/event-stream\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            ).encode()
            sock.sendall(head + body)
            got = b""
            while b"\r\n\r\n" not in got:  # the answer's head, then the host leaves
                piece = sock.recv(65536)
                assert piece, "the proxy closed before its answer's head"
                got += piece
            assert got.startswith(b"HTTP/1.1 200")
        # the session goes on: the next call is answered and recorded after it
        with httpx2.Client(timeout=TIMEOUT) as client:
            after = client.post(url, content=json.dumps(call(2, "echo", {"n": 2})), headers=HEADERS)
            assert after.status_code == 200
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    # main: the answer's reading was cancelled when the host left, its call not recorded.
    # Its answer may end after the next call's (still read when that one came): the seqs
    # follow the answers' order, as over stdio
    assert sorted(e["seq"] for e in entries) == [1, 2]
    by_tool = {e["tool"]: e for e in entries}
    assert sorted(by_tool) == ["echo", "fill"]
    assert by_tool["echo"]["args"] == {"n": 2}
    assert by_tool["fill"]["args"] == {"size": HUGE}
    assert by_tool["fill"]["response"] == {
        "content": [{"type": "text", "text": "y" * HUGE}],
        "isError": False,
    }
