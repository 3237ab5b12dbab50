"""An answer's head written with its body (issue 31: the proxy within 1.5x of a direct
connection, for small calls too).

uvicorn writes an answer's head (``http.response.start``) and then its body
(``http.response.body``) in two ``write`` calls: two TCP segments on loopback, each
waking the host once. ``HeadWithBody`` stands in front of a request's transport and holds
the first write (the head) until the next one, then writes both as one; a head with no
body soon after (a stream waiting for its first event) goes out at the end of the event
loop's turn. Measured (``bench_mcp.py``, SDK client over Streamable HTTP, 60 B answers,
in turn with the tree before it; docs/performance.md): a call through ``mcp record --url``
2.16-2.50 ms against 2.63-2.66, then 2.32-2.40 ms against 2.02-2.72 (noise as large).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["JOIN_BELOW", "HeadWithBody"]

#: a body write shorter than this is joined to the held head (a copy of it); a longer one
#: follows the head in a write of its own
JOIN_BELOW = 64 << 10


class HeadWithBody:
    """``transport``, its first ``write`` held and joined to the next (see the module
    docstring); every other attribute is the transport's own."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._head: bytes | None = None
        self._started = False

    def write(self, data: bytes) -> None:
        if not self._started:
            self._started = True
            self._head = bytes(data)
            asyncio.get_running_loop().call_soon(self.flush)
            return
        head, self._head = self._head, None
        if head is not None:
            if len(data) < JOIN_BELOW:
                self._transport.write(head + data)
                return
            self._transport.write(head)
        self._transport.write(data)

    def flush(self) -> None:
        """The held head written, if still held (and the connection still open)."""
        head, self._head = self._head, None
        if head is not None and not self._transport.is_closing():
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
