"""glibc's allocator knobs (``mallopt(3)``, ``malloc_trim(3)``) in one place.

Used where the engine's memory figures depend on the C allocator's policy: the spilling
``diff`` (``spill.py``: a fixed mmap threshold, free pages handed back between stages) and
the MCP HTTP proxy (``mcp/http.py``: the heap's free top kept for the next body's pieces).
On another C library (musl, macOS) every call here does nothing and says so by its result.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

__all__ = ["M_MMAP_THRESHOLD", "M_TRIM_THRESHOLD", "malloc_trim", "mallopt"]

#: ``mallopt`` parameters (glibc's ``malloc.h``)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


@functools.cache
def _libc() -> Any:
    """The process's C library by ``ctypes``, or ``None`` when it cannot be opened."""
    try:
        import ctypes

        return ctypes.CDLL(None)
    except OSError:
        return None


def mallopt(param: int, value: int) -> bool:
    """glibc's ``mallopt(param, value)`` for the whole process; ``True`` when it took it,
    ``False`` when it refused or this is not glibc (nothing changed then). Setting either
    threshold turns off glibc's moving of both (``mallopt(3)``)."""
    libc = _libc()
    try:
        return bool(libc.mallopt(param, value)) if libc is not None else False
    except (AttributeError, TypeError):  # no ``mallopt``: not glibc
        return False


def malloc_trim() -> None:
    """glibc's ``malloc_trim(0)``: the heaps' free pages handed back to the system
    (nothing on another C library)."""
    libc = _libc()
    with contextlib.suppress(AttributeError):  # no ``malloc_trim``: not glibc
        if libc is not None:
            libc.malloc_trim(0)
