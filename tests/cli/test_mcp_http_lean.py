"""Small POSTs through ``mcp record --url`` answered by the listener itself, without the
ASGI stack (``_lean_post``, issue 31): what a raw socket host sees. Each answer carries
the remote's ``date`` and ``server`` once (through uvicorn they came twice, its own
added); two requests written at once (pipelined) are answered in their order; a request
that asks to close is answered, then the connection closed; a call in flight when the
recorder is stopped still gets its answer and its entry. Against a socket remote here
that answers each ``tools/call`` with its own id (after ``DELAY`` seconds)."""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import time
from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path
from typing import ClassVar

from support.mcp_session import TIMEOUT
from support.raw_request import echo_result, post_head, read_request, served

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, call


class _Echo(socketserver.StreamRequestHandler):
    """Answers each POST on a kept connection (JSON, its length given, the remote's own
    ``date`` and ``server``), ``DELAY`` seconds after reading it."""

    DELAY: ClassVar[float] = 0.0

    def handle(self) -> None:
        while (got := read_request(self.rfile)) is not None:
            time.sleep(self.DELAY)
            data = json.dumps(echo_result(got[1], f"id {got[1]['id']}")).encode()
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\ndate: Sat, 05 Dec 2026 04:00:00 GMT\r\nserver: remote\r\n"
                b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%b"
                % (len(data), data)
            )
            self.wfile.flush()


def _answer(stream: BufferedIOBase) -> tuple[list[bytes], bytes] | None:
    """The next answer's head lines (start line first) and body; ``None`` at the close."""
    lines: list[bytes] = []
    while (line := stream.readline()) not in (b"\r\n", b""):
        lines.append(line.rstrip(b"\r\n"))
    if not lines:
        return None
    size = next(int(ln.split(b":")[1]) for ln in lines if ln.lower().startswith(b"content-length"))
    return lines, stream.read(size)


def _request(url: str, request_id: int, extra: bytes = b"") -> tuple[tuple[str, int], bytes]:
    """The address of the listener and one whole POST of a small ``tools/call``."""
    body = json.dumps(call(request_id, "echo", {"n": request_id})).encode()
    address, head = post_head(url, len(body))
    return address, head[:-2] + extra + b"\r\n" + body


def _entries(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]


@contextlib.contextmanager
def _recording(run: Path) -> Iterator[str]:
    """``mcp record --url`` in front of ``_Echo`` (no delay) while the block runs; yields
    its URL; stopped after it, exit 0."""
    _Echo.DELAY = 0.0
    with served(_Echo) as remote:
        recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
        try:
            yield url
        finally:
            assert stop(recorder) == 0


def test_two_pipelined_calls_are_answered_in_order_with_one_date_each(tmp_path: Path) -> None:
    run = tmp_path / "lean.jsonl"
    with _recording(run) as url:
        address, first = _request(url, 1)
        _, second = _request(url, 2)
        with socket.create_connection(address, timeout=TIMEOUT) as sock:
            sock.sendall(first + second)  # one write: the second waits for the first
            stream = sock.makefile("rb")
            answers = [_answer(stream), _answer(stream)]
    ids = []
    for got in answers:
        assert got is not None
        lines, body = got
        assert lines[0] == b"HTTP/1.1 200 OK"
        names = [ln.split(b":")[0].lower() for ln in lines[1:]]
        assert names.count(b"date") == 1 and names.count(b"server") == 1, lines
        assert b"server: remote" in lines
        ids.append(json.loads(body)["id"])
    assert ids == [1, 2]
    assert [e["args"] for e in _entries(run)] == [{"n": 1}, {"n": 2}]


def test_a_call_that_asks_to_close_is_answered_then_closed(tmp_path: Path) -> None:
    with _recording(tmp_path / "close.jsonl") as url:
        address, request = _request(url, 7, b"connection: close\r\n")
        with socket.create_connection(address, timeout=TIMEOUT) as sock:
            sock.sendall(request)
            stream = sock.makefile("rb")
            got = _answer(stream)
            assert stream.read() == b""  # closed after it
    assert got is not None and b"connection: close" in got[0]
    assert json.loads(got[1])["id"] == 7


def test_a_call_in_flight_when_the_recorder_stops_gets_its_answer(tmp_path: Path) -> None:
    run = tmp_path / "stopped.jsonl"
    _Echo.DELAY = 1.0
    try:
        with served(_Echo) as remote:
            recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
            address, request = _request(url, 3)
            with socket.create_connection(address, timeout=TIMEOUT) as sock:
                sock.sendall(request)
                time.sleep(0.3)  # the call is with the remote
                status = stop(recorder)
                got = _answer(sock.makefile("rb"))
    finally:
        _Echo.DELAY = 0.0
    assert status == 0
    assert got is not None and got[0][0] == b"HTTP/1.1 200 OK"
    assert json.loads(got[1])["id"] == 3
    assert [e["args"] for e in _entries(run)] == [{"n": 3}]
