"""The proxy's own HTTP/1.1 client for ``mcp record --url`` (issue 31: the proxy within
1.5x of a direct connection at every message size).

``httpx2`` cost the proxy about 0.1 s of its own time per 50 MB crossing it, either way: each
64 KB read went through five layers and a pure-Python parser (h11). Here a connection is an
``asyncio`` protocol whose bytes go to ``httptools`` (llhttp, in C) as the socket gives them
(up to 256 KB a read, into the connection's own buffer: ``_read_into``); the body's pieces
are handed on as they are. Only what the proxy needs: plain ``http://`` (``https://``, a
proxy from the environment, credentials in the URL: ``usable`` says no and ``httpx2`` is
used), one request at a
time on a connection, kept for the next request when both ends allow it (RFC 9112 section
9.3), a request body sent as it comes (with its ``content-length``, else chunked), a
response body read as ``content-length``, chunked or up to the connection's end says;
``gzip`` and ``deflate`` bodies decoded (as ``httpx2`` did).
"""

from __future__ import annotations

import asyncio
import importlib.util
import zlib
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, cast
from urllib.parse import urlsplit

from ._read_into import ReadInto

__all__ = ["Upstream", "UpstreamError", "usable"]

#: a response body's pieces held unread past this stop the socket's reads (back-pressure)
_HIGH = 4 << 20
#: request headers this client writes itself
#: (``expect``: the body is sent at once, no ``100 Continue`` awaited)
_OWN = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding", "expect"}


class UpstreamError(OSError):
    """The remote could not be reached, or broke the HTTP exchange (a malformed or cut
    answer)."""


def usable(url: str) -> bool:
    """Whether ``url`` is one this client serves: ``http://`` with no credentials in it
    (``http://user:pass@host/``: ``httpx2`` sends them as Basic auth) and no proxy set
    for it in the environment (``HTTP_PROXY``, ``NO_PROXY``: ``httpx2`` honours them),
    and ``httptools`` installed (the ``mcp`` extra)."""
    parts = urlsplit(url)
    if (
        parts.scheme != "http"
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or importlib.util.find_spec("httptools") is None
    ):
        return False
    import urllib.request  # (ssl, http.client, email: only when a proxy is started)

    proxies = urllib.request.getproxies()
    return not (proxies.get("http") or proxies.get("all")) or bool(
        urllib.request.proxy_bypass(parts.hostname)
    )


class _Headers:
    """A response's headers: names lowercased, a name given twice joined with ``", "`` (as
    ``httpx2``'s ``Headers.items()``)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._map: dict[str, str] = {}
        for name, value in raw:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            self._map[key] = f"{self._map[key]}, {text}" if key in self._map else text

    def get(self, name: str, default: Any = None) -> Any:
        return self._map.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        return list(self._map.items())


class _Connection(ReadInto):
    """One connection to the remote; ``httptools`` parses what it reads, in the
    connection's own buffer (``ReadInto``: each piece of a body is httptools' copy)."""

    def __init__(self) -> None:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._raw: list[tuple[bytes, bytes]] = []
        self.head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.chunks: deque[bytes] = deque()
        self._held = 0
        self.complete = False
        self.keep_alive = False
        self._interim = False
        #: in the pool, no request on it: whatever the remote sends now answers nothing
        self.idle = False
        #: the request was handed whole to the transport (the remote may have read it)
        self.sent = False
        self.error: Exception | None = None
        self._wake: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self._reading = True

    # -- asyncio.Protocol --------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport, though not an ``asyncio.Transport`` on uvloop (``_loop``)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes | memoryview) -> None:
        import httptools

        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(UpstreamError("the remote server switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"the remote server's answer is not HTTP/1.1: {exc}"))

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._ended()
        self._resume()

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._resume()

    # -- httptools callbacks -----------------------------------------------------------
    def on_message_begin(self) -> None:
        # a message after the answer's end, or on an idle connection (a ``408`` before the
        # remote closes it, bytes past a ``content-length`` that lied): it answers no
        # request, and read next it would answer the next one; the connection is out of
        # step and is not used again
        if (self.complete or self.idle) and self.transport is not None:
            self.transport.close()

    def on_header(self, name: bytes, value: bytes) -> None:
        self._raw.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # an interim answer (103): the next one
            self._raw = []
            self._interim = True
            return
        # asked now: llhttp forgets it once the message is complete
        self.keep_alive = bool(self.parser.should_keep_alive())
        if not self.head.done():
            self.head.set_result(None)

    def on_body(self, body: bytes) -> None:
        if self.complete or self.idle:  # a message nobody asked for (``on_message_begin``)
            return
        self.chunks.append(body)
        self._held += len(body)
        if self._held > _HIGH and self._reading and self.transport is not None:
            self._reading = False
            self.transport.pause_reading()
        self._wakeup()

    def on_message_complete(self) -> None:
        if self.idle:
            return
        if self._interim:
            self._interim = False
            return
        self.complete = True
        self._wakeup()

    # -- the client side ---------------------------------------------------------------
    def _ended(self) -> None:
        """The connection's end: the body's end when it runs to the close, else a cut."""
        if self.complete:
            return
        if self.head.done() and self._until_close():
            self.complete = True
        else:
            self._fail(UpstreamError("the remote server closed the connection mid-answer"))
        self._wakeup()

    def _until_close(self) -> bool:
        """Whether the body is delimited by the connection's end (no length, not chunked)."""
        names = {name.lower() for name, _ in self._raw}
        return b"content-length" not in names and b"transfer-encoding" not in names

    def _fail(self, error: Exception) -> None:
        if self.error is None and not self.complete:
            self.error = error
        if not self.head.done():
            self.head.set_exception(error)
            self.head.exception()  # retrieved: no warning when nobody awaits it
        if self.transport is not None:
            self.transport.close()
        self._wakeup()

    def _wakeup(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def _resume(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    async def write(self, data: bytes) -> None:
        if self.closed or self.transport is None or self.transport.is_closing():
            raise UpstreamError("the remote server closed the connection")
        self.transport.write(data)
        if self._writable is not None:
            await self._writable

    async def drain(self) -> None:
        """Wait until every byte written is in the kernel's hands (asyncio keeps up to
        64 KB itself: work done next must not hold them back)."""
        transport = self.transport
        if transport is None or transport.is_closing() or not transport.get_write_buffer_size():
            return
        transport.set_write_buffer_limits(high=0)  # paused now, resumed once empty
        try:
            if self._writable is not None:
                await self._writable
        finally:
            if not transport.is_closing():
                transport.set_write_buffer_limits()

    async def next_chunk(self) -> bytes | None:
        """The body's next piece as it came; ``None`` at its end."""
        while not self.chunks:
            if self.error is not None:
                raise self.error
            if self.complete:
                return None
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
            self._wake = None
        chunk = self.chunks.popleft()
        self._held -= len(chunk)
        if not self._reading and self._held <= _HIGH // 4 and self.transport is not None:
            self._reading = True
            self.transport.resume_reading()
        return chunk

    def headers(self) -> _Headers:
        return _Headers(self._raw)

    def reset(self) -> None:
        """Ready for the next response on the same connection."""
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self._raw = []
        self.head = asyncio.get_running_loop().create_future()
        self.complete = self.keep_alive = self.sent = False


class UpstreamResponse:
    """A response being read: ``status_code``, ``headers``, then its body by
    ``aiter_bytes`` (decoded), ``aiter_raw`` (as sent) or ``aread``; ``aclose`` when done
    (the connection goes back to the pool when the body was read whole)."""

    def __init__(self, upstream: Upstream, conn: _Connection, status: int) -> None:
        self._upstream = upstream
        self._conn: _Connection | None = conn
        self.status_code = status
        self.headers = conn.headers()

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        while (chunk := await conn.next_chunk()) is not None:
            yield chunk

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        coding = self.headers.get("content-encoding", "identity").strip().lower()
        if coding in ("", "identity"):
            async for chunk in self.aiter_raw():
                yield chunk
            return
        if coding not in ("gzip", "deflate", "x-gzip"):  # never asked for (no accept-encoding)
            raise UpstreamError(f"the remote server's answer is in {coding}, not read here")
        # gzip: its header; deflate: zlib's (RFC 9110 section 8.4.1.2)
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)
        async for chunk in self.aiter_raw():
            try:
                if out := decoder.decompress(chunk):
                    yield out
            except zlib.error as exc:
                raise UpstreamError(f"the remote server's {coding} body is broken: {exc}") from None
        if out := decoder.flush():
            yield out

    async def aread(self) -> bytes:
        conn = self._conn
        if (
            conn is not None
            and conn.complete
            and conn.error is None
            and conn._reading
            and self.headers.get("content-encoding", "").strip().lower() in ("", "identity")
        ):
            # the whole body came with its head (a small answer): taken as it is, not
            # through the pieces' generators
            body = b"".join(conn.chunks)
            conn.chunks.clear()
            conn._held = 0
            return body
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if conn.complete and not conn.chunks and conn.keep_alive and conn.error is None:
            self._upstream.give_back(conn)
        elif conn.transport is not None:
            conn.transport.close()


class Upstream:
    """Connections to one remote ``http://`` URL (see the module docstring), kept open
    between requests."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.authority = parts.netloc.rpartition("@")[2]
        self._idle: list[_Connection] = []

    def give_back(self, conn: _Connection) -> None:
        if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
            conn.reset()
            conn.idle = True
            self._idle.append(conn)

    async def _connect(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                conn.idle = False
                return conn
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(_Connection, self.host, self.port)
        except OSError as exc:
            raise UpstreamError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return conn

    async def send(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | AsyncIterable[bytes],
        after_body: Callable[[], None] | None = None,
    ) -> UpstreamResponse:
        """Send one request (``content``: the whole body, or its pieces as they come) and
        read its answer's status and headers; ``after_body`` is called once the body is
        all in the kernel's hands (the remote can read its end), before the answer is
        read. Raises ``UpstreamError``.

        A kept connection found closed before the request was written whole is replaced
        and the request sent once more; once written whole, never: the remote may have
        read it and run the call (a ``tools/call``), as ``httpx2`` never sends it twice."""
        reused = bool(self._idle)
        conn = await self._connect()
        try:
            return await self._exchange(conn, method, headers, content, after_body)
        except UpstreamError:
            if conn.transport is not None:
                conn.transport.close()
            if not (reused and isinstance(content, bytes | bytearray)) or conn.sent:
                raise
        except BaseException:
            if conn.transport is not None:
                conn.transport.close()
            raise
        # a kept connection the remote had closed meanwhile, the request not written whole:
        # once more on a new one
        self._idle.clear()
        conn = await self._connect()
        try:
            return await self._exchange(conn, method, headers, content, after_body)
        except BaseException:
            if conn.transport is not None:
                conn.transport.close()
            raise

    async def _exchange(
        self,
        conn: _Connection,
        method: str,
        headers: dict[str, str],
        content: bytes | AsyncIterable[bytes],
        after_body: Callable[[], None] | None,
    ) -> UpstreamResponse:
        lines = [f"{method} {self.target} HTTP/1.1", f"host: {self.authority}"]
        lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in _OWN]
        whole = isinstance(content, bytes | bytearray)
        size = str(len(content)) if whole else headers.get("content-length")  # type: ignore[arg-type]
        if whole and not content and method in ("GET", "DELETE"):
            size = None  # no body: none announced (as httpx2 does)
        elif size is None:
            lines.append("transfer-encoding: chunked")
        if size is not None:
            lines.append(f"content-length: {size}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if whole:
            body = bytes(content) if size is not None else b""  # type: ignore[arg-type]
            await conn.write(head + body if len(body) < _HIGH else head)
            if len(body) >= _HIGH:
                await conn.write(body)
        else:
            chunked = size is None
            await conn.write(head)
            try:
                async for piece in content:  # type: ignore[union-attr]
                    if piece:
                        await conn.write(
                            b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece
                        )
                if chunked:
                    await conn.write(b"0\r\n\r\n")
            except UpstreamError:
                if not (conn.head.done() and conn.head.exception() is None):
                    raise
                # the remote answered before the body's end (an early 413) and closed: its
                # answer is the request's (RFC 9112 section 9.5); the rest is not sent, the
                # connection not used again
                conn.keep_alive = False
                if (aclose := getattr(content, "aclose", None)) is not None:
                    await aclose()
                return UpstreamResponse(self, conn, conn.parser.get_status_code())
        conn.sent = True
        if after_body is not None:
            await conn.drain()
            after_body()
        await conn.head
        return UpstreamResponse(self, conn, conn.parser.get_status_code())

    def close(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()
