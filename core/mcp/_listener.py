"""The listener of ``mcp record --url`` and ``mcp replay --http``: uvicorn's httptools
protocol with a request body's pieces handed on as httptools gives them (issue 31: the
proxy within 1.5x of a direct connection).

uvicorn copies each piece of a body twice on its way to the app: into a ``bytearray``
(``RequestResponseCycle.body += piece``), then out of it as ``bytes`` (``receive``), each
into fresh memory: for a 50 MB POST, 100 MB of copies and their page faults in the one
thread that also passes the body on. Here a piece that comes while nothing waits to be
taken is kept as it is (``b"" + piece`` is ``piece`` in CPython, and ``bytes(piece)`` too),
so the app gets httptools' own ``bytes``; pieces that pile up before the app takes them
are joined as uvicorn does. Without httptools (or with a uvicorn whose body is not kept
so), uvicorn's own choice.

Each connection also reads into a buffer of its own (``_read_into.ReadInto``), which
httptools parses in place, and each answer's head is written with its body
(``_head_with_body.HeadWithBody``). Given a ``lean`` handler (the recorder's), a small POST
to the endpoint is answered by the protocol itself, without the ASGI stack
(``_lean_post``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from typing import Any

from ._head_with_body import HeadWithBody
from ._lean_post import LeanCycle, lean_fits
from ._read_into import ReadInto

__all__ = ["http_protocol"]


def http_protocol(
    lean: Callable[[Any], Awaitable[Any]] | None = None,
    endpoint: str = "/mcp",
    lean_below: int = 0,
) -> Any:
    """The ``http`` setting for ``uvicorn.Config``: the class below, or ``"auto"``.
    ``lean``: the handler a POST to ``endpoint`` whose body is under ``lean_below`` bytes
    is given straight (``_lean_post``; it takes a ``LeanRequest`` and gives a starlette
    response)."""
    if importlib.util.find_spec("httptools") is None:
        return "auto"
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return "auto"
    path = endpoint.encode("ascii")

    class PiecesProtocol(HttpToolsProtocol, ReadInto):  # type: ignore[misc]
        """``HttpToolsProtocol`` handing a body's pieces on without uvicorn's copies, its
        reads into its own buffer (``ReadInto``: httptools copies what it keeps), each
        answer's head written with its body (``HeadWithBody``), a small POST answered
        without the ASGI stack when ``lean`` is given (``LeanCycle``)."""

        def on_body(self, body: bytes) -> None:
            cycle = getattr(self, "cycle", None)
            if type(cycle) is LeanCycle:
                cycle.add(body)
                return
            kept = getattr(cycle, "body", None)
            if type(kept) is bytearray and not kept:
                # nothing waits to be taken: uvicorn's ``body += piece`` is the piece
                cycle.body = b""  # type: ignore[union-attr]
            elif type(kept) is bytes:  # a piece not yet taken: joined as uvicorn does
                cycle.body = bytearray(kept)  # type: ignore[union-attr]
            super().on_body(body)

        def on_headers_complete(self) -> None:
            before = getattr(self, "cycle", None)
            if lean is not None and self._lean_fits(before):
                self.cycle = LeanCycle(  # type: ignore[assignment]
                    self.transport,
                    self.headers,
                    self.parser.should_keep_alive(),
                    self.server_state.default_headers,
                    self.on_response_complete,
                    self.flow,
                )
                return
            super().on_headers_complete()
            cycle = getattr(self, "cycle", None)
            if cycle is not None and cycle is not before:  # a new request's answer
                cycle.transport = HeadWithBody(cycle.transport)

        def _lean_fits(self, before: Any) -> bool:
            """A small POST to the endpoint, nothing before it still being answered."""
            return (
                (before is None or before.response_complete)
                and not self.pipeline
                and not self.parser.should_upgrade()
                and lean_fits(
                    self.parser.get_method(),
                    self.url,
                    self.parser.get_http_version(),
                    self.headers,
                    path,
                    lean_below,
                )
            )

        def on_message_complete(self) -> None:
            cycle = getattr(self, "cycle", None)
            if type(cycle) is LeanCycle:
                if cycle.more_body:
                    cycle.more_body = False
                    self._lean_run(cycle)
                return
            super().on_message_complete()

        def _lean_run(self, cycle: LeanCycle) -> None:
            assert lean is not None
            task = self.loop.create_task(cycle.run(lean))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

        def connection_lost(self, exc: Exception | None) -> None:
            cycle = getattr(self, "cycle", None)
            if type(cycle) is LeanCycle and not cycle.response_complete:
                cycle.lost()
                if cycle.more_body:  # left mid-body: handed over cut (``LeanRequest``)
                    self._lean_run(cycle)
            super().connection_lost(exc)

    return PiecesProtocol
