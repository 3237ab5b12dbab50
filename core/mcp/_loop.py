"""The event loop the MCP proxies and replays run on (issue 31: the proxy within 1.5x of
a direct connection).

uvloop (libuv, in C) runs asyncio's socket reads and writes, its callbacks and timers
in C where asyncio's own loop runs them in Python; uvicorn takes it too when it is
installed. It is in the ``mcp`` extra on Linux; without it (or elsewhere), asyncio's
own loop. The recording is the same on both: the loop only moves bytes and wakes tasks.
Measured (docs/performance.md, session 18): the HTTP proxy's CPU per call 3-12% less on
uvloop from 100 B to 50 MB, half the ``epoll`` waits per 1 MB call. The stdio proxy's own
pipes are read and written by its threads; pipes made by the loop are widened only on
asyncio's (uvloop's pipe transports give no ``pipe`` extra info: ``_stdio.spawn_server``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "run"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's ``new_event_loop`` on Linux when uvloop can be imported, else ``None``
    (asyncio's own loop: ``asyncio.Runner``'s default)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop of ``loop_factory()``."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
