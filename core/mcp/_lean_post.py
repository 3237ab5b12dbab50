"""A small POST answered by the listener itself, without the ASGI stack (issue 31: the proxy
within 1.5x of a direct connection, for small calls too).

Through uvicorn and starlette, each of ``mcp record --url``'s POSTs made a request cycle,
an ``asyncio.Event``, a scope, a ``Request``, passed through starlette's middleware and
router, and its answer's head was built and checked header by header: on this 2-core VM,
where the kernel runs a woken process on the waker's CPU, that CPU is added to each call's
time. A POST to the endpoint whose body is announced by a ``content-length`` under the
size from which a body goes on as it comes (``http.RELAY_FROM``: one read whole anyway)
is taken here instead: its body gathered as the
parser gives it, then handed to the proxy's handler (the same one the ASGI route calls,
given a ``LeanRequest``), and the response it gives written to the socket straight: a
plain one as one write (head and body), a streamed one (SSE, a big answer relayed) by
``LeanCycle.send``, which frames it as uvicorn does (``content-length``, else chunked).

``LeanCycle`` stands where uvicorn's ``RequestResponseCycle`` stands in its protocol
(``self.cycle``), with the attributes the protocol reads there, so that a request
pipelined behind it waits, a shutdown lets it finish (``keep_alive``), and a host that
leaves is seen (``disconnected``). Everything else (GET streams, DELETE, a chunked or
bigger body, ``Expect: 100-continue``, HTTP/1.0) goes through uvicorn as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from ._head_with_body import JOIN_BELOW, HeadWithBody

__all__ = ["LeanCycle", "LeanRequest", "lean_fits"]

_logger = logging.getLogger("uvicorn.error")


def lean_fits(
    method: bytes,
    url: bytes,
    version: str,
    headers: list[tuple[bytes, bytes]],
    endpoint: bytes,
    below: int,
) -> bool:
    """Whether a request whose head is this (``headers``: names lowercased, as uvicorn keeps
    them) is taken by the listener: a POST to ``endpoint`` (any query) over HTTP/1.1 whose
    body has a ``content-length`` under ``below`` bytes, not chunked, no
    ``Expect: 100-continue``, no ``Upgrade``."""
    if method != b"POST" or version != "1.1":
        return False
    if url != endpoint and not url.startswith(endpoint + b"?"):
        return False
    size = None
    for name, value in headers:
        if name == b"content-length":
            if size is not None or not value.isdigit():
                return False
            size = int(value)
        elif name in (b"transfer-encoding", b"expect", b"upgrade"):
            return False
    return size is not None and size < below


class LeanRequest:
    """The request as the proxy's handler reads it (starlette's ``Request`` in part):
    ``method``, ``headers`` (case-insensitive, starlette's ``Headers``) and ``body()``.
    No ``stream()``: the handler streams a body only from the size the listener takes no
    more (``http.RELAY_FROM``)."""

    __slots__ = ("_body", "_cut", "headers", "method")

    def __init__(self, headers: list[tuple[bytes, bytes]], body: bytes, cut: bool = False) -> None:
        self.method = "POST"
        self.headers = Headers(raw=headers)
        self._body = body
        self._cut = cut

    async def body(self) -> bytes:
        """The body; raises starlette's ``ClientDisconnect`` when the host left before
        its end (``cut``)."""
        if self._cut:
            raise ClientDisconnect
        return self._body


class _Nothing:
    """The ``message_event`` uvicorn's protocol sets on a cycle: nothing waits on it here."""

    __slots__ = ()

    def set(self) -> None:
        pass


class LeanCycle:
    """One request taken by the listener, in uvicorn's protocol as its cycle (see the
    module docstring): the body's pieces gathered (``add``), then ``run`` hands it to the
    handler and writes the response; ``on_response`` is called once it is whole. A host
    that leaves before the body's end still has it handed over, cut (the handler says
    so, as for uvicorn's ``http.disconnect``)."""

    message_event = _Nothing()

    def __init__(
        self,
        transport: Any,
        headers: list[tuple[bytes, bytes]],
        keep_alive: bool,
        default_headers: list[tuple[bytes, bytes]],
        on_response: Callable[[], None],
        flow: Any,
    ) -> None:
        self.transport = transport
        self.flow = flow
        self.headers = headers
        self.keep_alive = keep_alive
        self.default_headers = default_headers
        self.on_response = on_response
        self.pieces: list[bytes] = []
        self.more_body = True
        self.disconnected = False
        self.response_started = False
        self.response_complete = False
        self._chunked = False
        self._left = 0
        self._gone: asyncio.Future[None] | None = None

    def add(self, piece: bytes) -> None:
        self.pieces.append(piece)

    def lost(self) -> None:
        """The host left (uvicorn's protocol marks ``disconnected`` too)."""
        self.disconnected = True
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)

    async def run(self, handler: Callable[[Any], Awaitable[Any]]) -> None:
        """The handler's response to the request, written; as uvicorn's ``run_asgi`` on
        an error: a ``500`` when nothing was written yet, else the connection cut."""
        try:
            body = b"".join(self.pieces)
            response = await handler(LeanRequest(self.headers, body, cut=self.more_body))
            if _plain(response):
                self._write_whole(response.status_code, response.raw_headers, response.body)
            else:
                await response({"type": "http", "method": "POST"}, self.receive, self.send)
        except BaseException as exc:
            _logger.error("Exception in ASGI application\n", exc_info=exc)
            if not self.response_started:
                self._write_whole(
                    500,
                    [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")],
                    b"Internal Server Error",
                )
            else:
                self.transport.close()
            if not isinstance(exc, Exception):
                raise
        else:
            if not self.response_complete and not self.disconnected:
                # (a relayed answer the remote broke, ``http._Relayed``): cut, so the host
                # does not take the part for the whole
                self.transport.close()

    async def receive(self) -> dict[str, Any]:
        """The request's messages after its body (read whole already): the host's leaving,
        once it leaves or the response is whole."""
        if not self.disconnected and not self.response_complete:
            if self._gone is None:
                self._gone = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._gone)
        return {"type": "http.disconnect"}

    def _head_of(self, status: int, headers: list[tuple[bytes, bytes]], size: int | None) -> bytes:
        """The status line and headers (the response's own, then uvicorn's ``date`` and
        ``server`` where it has none), framed by ``size`` when the response named no
        length (``None``: chunked)."""
        named = set()
        out = [b"HTTP/1.1 %d %s\r\n" % (status, _reason(status))]
        length = None
        for name, value in headers:
            name = name.lower()
            named.add(name)
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                self._chunked = True
            elif name == b"connection" and b"close" in value.lower():
                self.keep_alive = False
            out += [name, b": ", value, b"\r\n"]
        for name, value in self.default_headers:
            if name not in named:
                out += [name, b": ", value, b"\r\n"]
        if not self.keep_alive and b"connection" not in named:
            out.append(b"connection: close\r\n")
        if length is None and not self._chunked:
            if size is not None:
                length = size
                out.append(b"content-length: %d\r\n" % size)
            elif status not in (204, 304):
                self._chunked = True
                out.append(b"transfer-encoding: chunked\r\n")
        self._left = length or 0
        out.append(b"\r\n")
        return b"".join(out)

    def _write_whole(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        if self.disconnected or self.transport.is_closing():
            return
        self.response_started = True
        # no length named for a 1xx, 204 or 304 (RFC 9110 section 8.6), as starlette and
        # uvicorn do
        size = None if status < 200 or status in (204, 304) else len(body)
        head = self._head_of(status, headers, size)
        self.transport.write(head + body if len(body) < JOIN_BELOW else head)
        if len(body) >= JOIN_BELOW:
            self.transport.write(body)
        self._complete()

    async def send(self, message: dict[str, Any]) -> None:
        """uvicorn's ``send`` for a streamed response: its head held until its first piece
        (``HeadWithBody``), each piece framed (chunked when no length was named), the
        writes held back while the host does not read (uvicorn's flow control)."""
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected or self.response_complete or self.transport.is_closing():
            return
        if message["type"] == "http.response.start":
            self.response_started = True
            self.transport = HeadWithBody(self.transport)
            head = self._head_of(message["status"], list(message.get("headers", [])), None)
            self.transport.write(head)
            return
        body = message.get("body", b"")
        more = message.get("more_body", False)
        if self._chunked:
            out = b"%x\r\n%b\r\n" % (len(body), body) if body else b""
            if not more:
                out += b"0\r\n\r\n"
            if out:
                self.transport.write(out)
        else:
            if len(body) > self._left:
                raise RuntimeError("Response content longer than Content-Length")
            self._left -= len(body)
            self.transport.write(body)
        if not more:
            if self._left and not self._chunked:
                raise RuntimeError("Response content shorter than Content-Length")
            self._complete()

    def _complete(self) -> None:
        self.response_complete = True
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)
        if not self.keep_alive:
            self.transport.close()
        self.on_response()


def _plain(response: Any) -> bool:
    """A response whose body is whole in it (starlette's ``Response``, not streamed)."""
    return type(response) is Response


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""
