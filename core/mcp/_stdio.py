"""The stdio transport's two ends, shared by the recording proxy and the stand-in server:
lines read from a file descriptor in a thread, bytes written whole."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["LineEnd", "Piece", "read_lines", "write_all"]


@dataclass(frozen=True, slots=True)
class Piece:
    """The start of a line longer than ``read_lines``'s ``pieces_from``: handed on before
    the line ends so it can be forwarded at once; the line's last part follows as bytes."""

    data: bytes


@dataclass(frozen=True, slots=True)
class LineEnd:
    """The end of a line handed on in ``Piece``s: ``data`` the part not handed on yet (up
    to the newline), ``whole`` the whole line, gathered by the reading thread as it came
    (no copy of a 50 MB line is left to make once it has ended)."""

    data: bytes
    whole: bytearray


def read_lines(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    out: asyncio.Queue[Any],
    pieces_from: int | None = None,
) -> None:
    """Read ``fd`` to its end in a daemon thread (a blocking read cannot be cancelled, and
    a pipe, a tty or a file all work), handing complete lines to ``out``; ``None`` at EOF.
    Each byte is scanned for a newline once, so a 50 MB line costs what its reading does.
    With ``pieces_from``, a line that grows past that many bytes before its newline is
    handed on in ``Piece``s as it comes, its rest (up to the newline) in a ``LineEnd``."""
    buffer = bytearray()
    scanned = 0
    whole: bytearray | None = None  # the line handed on in pieces, so far
    try:
        while chunk := os.read(fd, 1 << 20):
            buffer += chunk
            start = 0
            while (end := buffer.find(b"\n", max(scanned, start))) >= 0:
                line = bytes(buffer[start : end + 1])
                if whole is not None:
                    whole += line
                    loop.call_soon_threadsafe(out.put_nowait, LineEnd(line, whole))
                    whole = None
                else:
                    loop.call_soon_threadsafe(out.put_nowait, line)
                start = end + 1
            if start:
                del buffer[:start]
            scanned = len(buffer)
            if pieces_from is not None and len(buffer) >= pieces_from:
                piece = bytes(buffer)
                if whole is None:
                    whole = bytearray(piece)
                else:
                    whole += piece
                loop.call_soon_threadsafe(out.put_nowait, Piece(piece))
                buffer.clear()
                scanned = 0
    except OSError:
        pass
    finally:
        if buffer or whole is not None:
            rest = bytes(buffer)
            item: Any = rest if whole is None else LineEnd(rest, whole + rest)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(out.put_nowait, item)
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(out.put_nowait, None)


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd`` whole (``OSError`` such as EPIPE when the reader is gone)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
