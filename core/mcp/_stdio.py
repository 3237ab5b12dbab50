"""The stdio transport's two ends, shared by the recording proxy, the stand-in server and
``verify``'s live client: lines read from a file descriptor in a thread, bytes written
whole, and the MCP server's process started (``spawn_server``) and stopped
(``stop_server``) as the proxy does it."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "LINE_LIMIT",
    "LineEnd",
    "Piece",
    "read_lines",
    "signal_group",
    "spawn_server",
    "stop_server",
    "widen_pipe",
    "write_all",
]

#: the largest line the proxy reads in one piece (a bigger one is an error)
LINE_LIMIT = 1 << 30


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
    handed on in ``Piece``s as it comes, its rest (up to the newline) in a ``LineEnd``;
    each byte of such a line is copied once, into the whole line (a piece is the read's
    own bytes)."""
    buffer = bytearray()
    scanned = 0
    whole: bytearray | None = None  # the line handed on in pieces, so far

    def put(item: Any) -> None:
        loop.call_soon_threadsafe(out.put_nowait, item)

    try:
        while chunk := os.read(fd, 1 << 20):
            if whole is not None:  # within a long line: the chunk goes on as it is
                end = chunk.find(b"\n")
                if end < 0:
                    whole += chunk
                    put(Piece(chunk))
                    continue
                last, chunk = chunk[: end + 1], chunk[end + 1 :]
                whole += last
                put(LineEnd(last, whole))
                whole = None
                if not chunk:
                    continue
            buffer += chunk
            start = 0
            lines = []
            while (end := buffer.find(b"\n", max(scanned, start))) >= 0:
                lines.append(bytes(buffer[start : end + 1]))
                start = end + 1
            if lines:  # one wake-up of the loop for all the lines of a read
                loop.call_soon_threadsafe(_put_all, out, lines)
            if start:
                del buffer[:start]
            scanned = len(buffer)
            if pieces_from is not None and len(buffer) >= pieces_from:
                piece = bytes(buffer)
                whole = bytearray(piece)
                put(Piece(piece))
                buffer.clear()
                scanned = 0
    except OSError:
        pass
    finally:
        if buffer or whole is not None:
            rest = bytes(buffer)
            item: Any = rest if whole is None else LineEnd(rest, whole + rest)
            with contextlib.suppress(RuntimeError):
                put(item)
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            put(None)


def _put_all(out: asyncio.Queue[Any], items: list[Any]) -> None:
    for item in items:
        out.put_nowait(item)


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd`` whole (``OSError`` such as EPIPE when the reader is gone)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def spawn_server(
    command: list[str],
    *,
    stderr: IO[Any] | int | None = None,
    stdout: int = asyncio.subprocess.PIPE,
) -> asyncio.subprocess.Process:
    """Start the MCP server ``command`` over stdio: stdin and stdout piped (each pipe
    widened, ``widen_pipe``), lines read up to ``LINE_LIMIT``, in its own process group so
    ``stop_server`` ends it with whatever it started. ``stderr``: where the server's
    stderr goes (default: this process's); ``stdout``: a file descriptor to give it as its
    stdout instead of a pipe read by the event loop (the recording proxy reads its own
    pipe in a thread, ``read_lines``).

    Raises:
        OSError: the command cannot be started (not found, not executable).
    """
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,  # its own process group: terminated as a whole
        limit=LINE_LIMIT,
    )
    for pipe in (proc.stdin, proc.stdout):
        transport = getattr(pipe, "transport", None) or getattr(pipe, "_transport", None)
        info = transport.get_extra_info("pipe") if transport is not None else None
        if info is not None:
            widen_pipe(info.fileno())
    return proc


async def stop_server(proc: asyncio.subprocess.Process, grace: float) -> bool:
    """End the server as the MCP stdio lifecycle says: close its stdin, give it ``grace``
    seconds to exit, then SIGTERM its process group, ``grace`` seconds more, then SIGKILL.
    True when it had to be signalled."""
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()
    if await _exited(proc, grace):
        return False
    signal_group(proc.pid, signal.SIGTERM)
    if not await _exited(proc, grace):
        signal_group(proc.pid, signal.SIGKILL)
        await _exited(proc, grace)
    return True


async def _exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        return False
    return True


def widen_pipe(fd: int) -> None:
    """Give a pipe the largest buffer the system allows (Linux ``F_SETPIPE_SZ``, up to
    ``/proc/sys/fs/pipe-max-size``, 1 MB by default): a big message then crosses in 1 MB
    writes, not 64 KB ones, each waking the other process. Elsewhere, or when refused,
    the pipe stays as it is."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", 1031)
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, setsize, 1 << 20)


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pgid`` (gone or not ours: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
