"""Reads into one buffer per connection (issue 31: the proxy within 1.5x of a direct
connection), for the HTTP protocols of ``mcp record --url``: uvicorn's listener
(``_listener``) and the proxy's own client (``_upstream``).

asyncio's plain reads (``asyncio.Protocol.data_received``) make a fresh ``bytes`` for every
read, of up to 256 KB: for a 50 MB body, 200 allocations of fresh memory (and a resize
each), whose bytes httptools then copies once more into the body's pieces. An
``asyncio.BufferedProtocol`` is given the socket's bytes in a buffer of its own instead
(``recv_into``): here one of ``RECEIVE`` bytes per connection, made at its first read and
written over by each, so its pages are mapped once. The pieces are as before: httptools
copies what it keeps of each read (a body's piece) into a ``bytes`` of its own."""

from __future__ import annotations

import asyncio

__all__ = ["RECEIVE", "ReadInto"]

#: a connection's read buffer, in bytes: one read takes up to this much of what the
#: socket holds, as asyncio's own reads do (1 MB was tried: a piece no longer stays in the
#: CPU's cache through its passes, copied, sent, checked and written, and httptools' 1 MB
#: copies of it came from fresh pages: 5-10x the page faults, no clear gain in CPU)
RECEIVE = 256 << 10


class ReadInto(asyncio.BufferedProtocol):
    """A protocol's reads into one buffer of its own (``RECEIVE`` bytes, made at its first
    read and written over by each), handed to ``data_received`` as a ``memoryview`` of
    the bytes read: for a protocol that uses them before it returns (a parser that copies
    what it keeps), never one that keeps the view."""

    _into: memoryview | None = None

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._into is None:
            self._into = memoryview(bytearray(RECEIVE))
        return self._into

    def buffer_updated(self, nbytes: int) -> None:
        assert self._into is not None
        self.data_received(self._into[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:  # pragma: no cover
        raise NotImplementedError
