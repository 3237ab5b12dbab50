"""Reads into one buffer per connection (``mcp/_read_into.py``, issue 31): the proxy's HTTP
protocols given the socket's bytes in their own buffer, written over by each read, parse
what they parsed from asyncio's fresh ``bytes`` per read: the same heads and body pieces,
in any split into reads, and a piece kept from one read is not changed by the next."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import pytest
from cassette_tui.core.mcp._read_into import RECEIVE, ReadInto
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("httptools")


def _answers() -> st.SearchStrategy[bytes]:
    """One or two HTTP/1.1 answers on one connection: content-length or chunked."""

    def answer(body: bytes, chunked: bool, status: int) -> bytes:
        head = f"HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\n"
        if not chunked:
            return (head + f"content-length: {len(body)}\r\n\r\n").encode() + body
        parts = [body[i : i + 7] for i in range(0, len(body), 7)]
        chunks = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts)
        return (head + "transfer-encoding: chunked\r\n\r\n").encode() + chunks + b"0\r\n\r\n"

    one = st.builds(answer, st.binary(max_size=300), st.booleans(), st.sampled_from([200, 404]))
    return st.lists(one, min_size=1, max_size=2).map(b"".join)


def _reads(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:], strict=False) if b > a]


async def _fed(data: bytes, cuts: list[int], buffered: bool) -> list[tuple[Any, ...]]:
    """What the proxy's client connection made of ``data`` read in pieces: per answer its
    status, headers and body pieces (each piece taken when all reads are done)."""
    from cassette_tui.core.mcp._upstream import _Connection

    conn = _Connection()
    got: list[tuple[Any, ...]] = []
    for read in _reads(data, cuts):
        if buffered:  # as asyncio does for a BufferedProtocol: recv_into, then the count
            into = conn.get_buffer(-1)
            into[: len(read)] = read
            conn.buffer_updated(len(read))
        else:
            conn.data_received(read)
        if conn.complete:
            got.append((conn.parser.get_status_code(), conn.headers().items(), conn.chunks))
            conn.chunks = type(conn.chunks)()
            conn.reset()
    got.append(("rest", conn.error is None, list(conn.chunks)))
    return [(s, h, [bytes(c) for c in chunks]) for s, h, chunks in got]


@settings(max_examples=200, deadline=None)
@given(_answers(), st.lists(st.integers(min_value=0, max_value=700), max_size=8))
def test_reads_into_the_buffer_give_what_fresh_reads_gave(data: bytes, cuts: list[int]) -> None:
    async def both() -> None:
        assert await _fed(data, cuts, buffered=True) == await _fed(data, cuts, buffered=False)

    asyncio.run(both())


def test_a_piece_kept_is_not_written_over_by_the_next_read() -> None:
    from cassette_tui.core.mcp._upstream import _Connection

    async def run() -> None:
        conn = _Connection()
        body = gzip.compress(b"z" * 5000)  # any bytes
        head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % (2 * len(body))
        for read in (head + body, body):
            into = conn.get_buffer(-1)
            assert len(into) == RECEIVE
            into[: len(read)] = read
            conn.buffer_updated(len(read))
        assert [bytes(c) for c in conn.chunks] == [body, body]

    asyncio.run(run())


def test_the_listener_and_the_client_read_into_their_own_buffer() -> None:
    from cassette_tui.core.mcp._listener import http_protocol
    from cassette_tui.core.mcp._upstream import _Connection

    assert issubclass(http_protocol(), asyncio.BufferedProtocol)
    assert issubclass(_Connection, ReadInto)

    class Kept(ReadInto):
        def __init__(self) -> None:
            self.seen: list[bytes] = []

        def data_received(self, data: bytes | memoryview) -> None:
            self.seen.append(bytes(data))

    one, two = Kept(), Kept()
    assert one.get_buffer(-1) is one.get_buffer(-1)  # made once, written over
    assert one.get_buffer(-1).obj is not two.get_buffer(-1).obj  # one per connection
    one.get_buffer(-1)[:3] = b"abc"
    one.buffer_updated(3)
    assert one.seen == [b"abc"]
