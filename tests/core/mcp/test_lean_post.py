"""The listener's own answer to a small POST (``_lean_post``, issue 31): which requests it
takes, and that what it writes is the HTTP/1.1 uvicorn would frame: the response's status,
headers and body read back by httptools (llhttp) as given, framed by a length or chunked,
uvicorn's ``date``/``server`` only where the response has none, closed when not kept."""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
import pytest
from cassette_tui.core.mcp._lean_post import LeanCycle, LeanRequest, lean_fits
from cassette_tui.core.mcp.http import RELAY_FROM
from hypothesis import given
from hypothesis import strategies as st

DEFAULTS = [(b"server", b"uvicorn"), (b"date", b"Sat, 05 Dec 2026 04:00:00 GMT")]


class _Transport:
    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.data += data
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


class _Flow:
    write_paused = False


class _Read:
    """An HTTP response read back by httptools."""

    def __init__(self, data: bytes) -> None:
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""
        self.complete = False
        parser = httptools.HttpResponseParser(self)
        parser.feed_data(data)
        self.status = parser.get_status_code()

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.complete = True


def _cycle(keep_alive: bool = True) -> tuple[LeanCycle, _Transport, list[int]]:
    transport, answered = _Transport(), []
    cycle = LeanCycle(transport, [], keep_alive, DEFAULTS, lambda: answered.append(1), _Flow())
    return cycle, transport, answered


_NAMES = st.sampled_from([b"content-type", b"mcp-session-id", b"x-trace", b"date", b"server"])
_VALUES = st.from_regex(rb"\A[A-Za-z0-9/;=., -]{1,20}\Z").map(lambda v: v.strip() or b"v")
_HEADERS = st.lists(st.tuples(_NAMES, _VALUES), max_size=5, unique_by=lambda h: h[0])
_STATUS = st.sampled_from([200, 202, 400, 404, 413, 500, 502])


@given(status=_STATUS, headers=_HEADERS, body=st.binary(max_size=3000), kept=st.booleans())
def test_a_whole_response_reads_back_as_given_in_one_write(
    status: int, headers: list[tuple[bytes, bytes]], body: bytes, kept: bool
) -> None:
    cycle, transport, answered = _cycle(kept)
    cycle._write_whole(status, headers, body)
    read = _Read(bytes(transport.data))
    assert (read.status, read.body, read.complete) == (status, body, True)
    assert transport.writes == 1 and answered == [1] and cycle.response_complete
    names = [name for name, _ in read.headers]
    for name, value in headers:
        assert (name, value) in read.headers
    for name, value in DEFAULTS:  # uvicorn's own only where the response has none
        assert names.count(name) == 1
        if name not in dict(headers):
            assert (name, value) in read.headers
    assert names.count(b"content-length") == 1
    assert transport.closed is not kept
    assert (b"connection", b"close") in read.headers or kept


@given(
    headers=_HEADERS,
    pieces=st.lists(st.binary(max_size=300), max_size=6),
    sized=st.booleans(),
)
def test_a_streamed_response_reads_back_as_its_pieces(
    headers: list[tuple[bytes, bytes]], pieces: list[bytes], sized: bool
) -> None:
    cycle, transport, answered = _cycle()
    body = b"".join(pieces)
    if sized:
        headers = [*headers, (b"content-length", b"%d" % len(body))]

    async def main() -> None:
        await cycle.send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in pieces:
            await cycle.send({"type": "http.response.body", "body": piece, "more_body": True})
        await cycle.send({"type": "http.response.body", "body": b"", "more_body": False})

    asyncio.run(main())
    read = _Read(bytes(transport.data))
    assert (read.status, read.body, read.complete) == (200, body, True)
    names = [name for name, _ in read.headers]
    assert (b"transfer-encoding" in names) is not sized
    assert answered == [1] and not transport.closed


@pytest.mark.parametrize("status", [204, 304])
def test_a_204_or_304_answer_names_no_length(status: int) -> None:
    # RFC 9110 section 8.6: no content-length in a 204 (nor a 304's made-up one); uvicorn
    # names none for them (a remote's 204 to a POST came back with ``content-length: 0``)
    cycle, transport, answered = _cycle()
    cycle._write_whole(status, [(b"mcp-session-id", b"s1")], b"")
    head = bytes(transport.data).split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 %d " % status)
    assert b"content-length" not in head and b"transfer-encoding" not in head
    assert b"mcp-session-id: s1" in head and answered == [1]


def test_a_streamed_response_longer_or_shorter_than_its_length_is_refused() -> None:
    async def main(sent: bytes) -> None:
        cycle, _, _ = _cycle()
        start = {"type": "http.response.start", "status": 200}
        await cycle.send({**start, "headers": [(b"content-length", b"4")]})
        await cycle.send({"type": "http.response.body", "body": sent, "more_body": False})

    with pytest.raises(RuntimeError, match="longer"):
        asyncio.run(main(b"12345"))
    with pytest.raises(RuntimeError, match="shorter"):
        asyncio.run(main(b"123"))


def test_receive_says_the_host_left_once_it_leaves_or_the_answer_is_whole() -> None:
    async def main() -> list[Any]:
        left, _, _ = _cycle()
        waiting = asyncio.ensure_future(left.receive())
        await asyncio.sleep(0)
        assert not waiting.done()
        left.lost()
        done, _, _ = _cycle()
        done._write_whole(200, [], b"{}")
        return [await waiting, await done.receive()]

    assert asyncio.run(main()) == [{"type": "http.disconnect"}] * 2


def test_a_host_that_left_mid_body_is_handed_over_cut() -> None:
    from starlette.requests import ClientDisconnect

    async def main() -> None:
        with pytest.raises(ClientDisconnect):
            await LeanRequest([], b"{", cut=True).body()
        assert await LeanRequest([(b"a", b"b")], b"{}").body() == b"{}"

    asyncio.run(main())


def test_an_error_in_the_handler_is_a_500_and_a_close() -> None:
    cycle, transport, _ = _cycle()

    async def broken(request: Any) -> Any:
        raise ValueError("boom")

    asyncio.run(cycle.run(broken))
    read = _Read(bytes(transport.data))
    assert read.status == 500 and read.body == b"Internal Server Error" and transport.closed


@pytest.mark.parametrize(
    ("method", "url", "version", "headers", "taken"),
    [
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"10")], True),
        (b"POST", b"/mcp?session=1", "1.1", [(b"content-length", b"10")], True),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"%d" % (RELAY_FROM - 1))], True),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"%d" % RELAY_FROM)], False),
        (b"POST", b"/mcp", "1.1", [], False),  # no length: chunked, or none
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"1"), (b"content-length", b"1")], False),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"+1")], False),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"5"), (b"expect", b"100-continue")], False),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"5"), (b"upgrade", b"h2c")], False),
        (b"POST", b"/mcp", "1.1", [(b"content-length", b"5"), (b"transfer-encoding", b"x")], False),
        (b"POST", b"/mcp", "1.0", [(b"content-length", b"10")], False),
        (b"POST", b"/mcpx", "1.1", [(b"content-length", b"10")], False),
        (b"POST", b"/other", "1.1", [(b"content-length", b"10")], False),
        (b"GET", b"/mcp", "1.1", [], False),
        (b"DELETE", b"/mcp", "1.1", [(b"content-length", b"0")], False),
    ],
)
def test_which_requests_the_listener_takes(
    method: bytes, url: bytes, version: str, headers: list[tuple[bytes, bytes]], taken: bool
) -> None:
    assert lean_fits(method, url, version, headers, b"/mcp", RELAY_FROM) is taken
