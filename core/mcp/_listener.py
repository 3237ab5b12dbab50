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
(``_head_with_body.HeadWithBody``)."""

from __future__ import annotations

import importlib.util
from typing import Any

from ._head_with_body import HeadWithBody
from ._read_into import ReadInto

__all__ = ["http_protocol"]


def http_protocol() -> Any:
    """The ``http`` setting for ``uvicorn.Config``: the class below, or ``"auto"``."""
    if importlib.util.find_spec("httptools") is None:
        return "auto"
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return "auto"

    class PiecesProtocol(HttpToolsProtocol, ReadInto):  # type: ignore[misc]
        """``HttpToolsProtocol`` handing a body's pieces on without uvicorn's copies, its
        reads into its own buffer (``ReadInto``: httptools copies what it keeps), each
        answer's head written with its body (``HeadWithBody``)."""

        def on_body(self, body: bytes) -> None:
            cycle = getattr(self, "cycle", None)
            kept = getattr(cycle, "body", None)
            if type(kept) is bytearray and not kept:
                # nothing waits to be taken: uvicorn's ``body += piece`` is the piece
                cycle.body = b""  # type: ignore[union-attr]
            elif type(kept) is bytes:  # a piece not yet taken: joined as uvicorn does
                cycle.body = bytearray(kept)  # type: ignore[union-attr]
            super().on_body(body)

        def on_headers_complete(self) -> None:
            before = getattr(self, "cycle", None)
            super().on_headers_complete()
            cycle = getattr(self, "cycle", None)
            if cycle is not None and cycle is not before:  # a new request's answer
                cycle.transport = HeadWithBody(cycle.transport)

    return PiecesProtocol
