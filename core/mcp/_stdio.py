"""The stdio transport's two ends, shared by the recording proxy, the stand-in server and
``verify``'s live client: lines read from a file descriptor in a thread, bytes written
whole, and the MCP server's process started (``spawn_server``) and stopped
(``stop_server``) as the proxy does it."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "LINE_LIMIT",
    "LineEnd",
    "Piece",
    "PipeWriter",
    "iter_lines",
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
    the line ends so it can be forwarded at once; the line's last part follows as bytes.
    From ``iter_lines``, ``data`` may change once the next item is asked for."""

    data: bytes | bytearray


@dataclass(frozen=True, slots=True)
class LineEnd:
    """The end of a line handed on in ``Piece``s: ``data`` the part not handed on yet (up
    to the newline), ``whole`` the whole line, gathered by the reading thread as it came
    (no copy of a 50 MB line is left to make once it has ended)."""

    data: bytes
    whole: bytearray


#: the read buffer's first size: a 1 MB line and what follows it fit (a widened pipe
#: holds 1 MB, ``widen_pipe``), so it is read without the buffer being grown (copied)
BUFFER_SIZE = 2 << 20
#: how much one read takes while a long line goes on in pieces
READ_SIZE = 1 << 20
#: the buffer is grown (doubled) when less than this is left for a read
MIN_ROOM = 1 << 16
#: a line at least this long that fills the read buffer exactly is handed on as that
#: buffer, not copied; a smaller one is copied (the new buffer's 2 MB of fresh pages cost
#: more than that copy, which reuses memory the process has)
GIVE_FROM = BUFFER_SIZE // 4


def iter_lines(
    fd: int,
    pieces_from: int | None = None,
    spare: Callable[[], bytearray | None] | None = None,
) -> Iterator[list[bytes | bytearray] | Piece | LineEnd]:
    """The lines read from ``fd`` to its end (or a read error), for a thread to act on as
    they come: the complete lines of one read as a list (each with its newline), and with
    ``pieces_from``, a line that grows past that many bytes before its newline as
    ``Piece``s then its ``LineEnd``. A last line without a newline comes at the end (as
    bytes in a list, or as a ``LineEnd``). Each byte is scanned for a newline once, so a
    50 MB line costs what its reading does.

    Reads go into one buffer, its pages touched before the first read and kept for the
    next (on a VM a page used for the first time costs about as much as copying it: a
    1 MB line took 1.3 ms more through the proxy in fresh buffers). A line of
    ``GIVE_FROM`` bytes or more that is all the buffer holds is handed on as that buffer
    (a new one is made once the consumer asks for the next item); a long line's first
    piece likewise becomes the whole line, each later read appended to it after it was
    handed on. A ``Piece``'s data may change once the next item is asked for: a consumer
    that keeps it copies it.

    The buffer that replaces one handed on is made only once more bytes can be read (the
    wait for them lets go of the GIL), taken from ``spare`` when it gives one: the
    consumer may make it (its 2 MB zeroed) once it has passed the line on, not on the
    line's way (issue 31: its 0.5-0.9 ms came between a 1 MB answer's first piece and its
    end)."""
    buf = bytearray(BUFFER_SIZE)  # zeroed now: its pages are this process's before a read
    filled = scanned = 0
    whole: bytearray | None = None  # the line handed on in pieces, so far
    try:
        while True:
            if whole is not None:  # within a long line: each read goes on as it is
                chunk = os.read(fd, READ_SIZE)
                if not chunk:
                    break
                end = chunk.find(b"\n")
                if end < 0:
                    yield Piece(chunk)
                    whole += chunk
                    continue
                last = chunk[: end + 1]
                whole += last
                yield LineEnd(last, whole)
                whole = None
                rest = len(chunk) - end - 1
                if rest:
                    buf = bytearray(max(BUFFER_SIZE, 2 * rest))
                    buf[:rest] = chunk[end + 1 :]
                filled, scanned = rest, 0
            else:
                if not buf:  # handed on: a new one once there is something to read
                    waiting = select.poll()
                    waiting.register(fd, select.POLLIN)
                    waiting.poll()
                    buf = (spare() if spare is not None else None) or bytearray(BUFFER_SIZE)
                if len(buf) - filled < MIN_ROOM:  # a line longer than the buffer
                    bigger = bytearray(2 * len(buf))
                    bigger[:filled] = buf
                    buf = bigger
                with memoryview(buf) as view, view[filled:] as room:
                    got = os.readv(fd, [room])
                if not got:
                    break
                filled += got
            lines: list[bytes | bytearray] = []
            start = 0
            given = False
            while (end := buf.find(b"\n", max(scanned, start), filled)) >= 0:
                if start == 0 and end + 1 == filled and end >= GIVE_FROM:
                    del buf[filled:]  # the buffer is this one line: handed on as it is
                    lines.append(buf)
                    given = True
                    start = filled
                    break
                lines.append(_part(buf, start, end + 1))
                start = end + 1
            if start and not given:  # the line begun goes to the buffer's start
                buf[: filled - start] = _part(buf, start, filled)
            filled -= start
            scanned = filled
            if lines:
                yield lines
            if given:
                buf = bytearray()  # a new one before the next read
            if pieces_from is not None and filled >= pieces_from:
                del buf[filled:]  # the buffer becomes the long line's start
                whole = buf
                yield Piece(whole)
                buf = bytearray()
                filled = scanned = 0
    except OSError:
        pass
    if whole is not None:
        yield LineEnd(b"", whole)
    elif filled:
        yield [_part(buf, 0, filled)]


def _part(buf: bytearray, start: int, end: int) -> bytes:
    """``buf[start:end]`` as bytes, copied once."""
    with memoryview(buf) as view, view[start:end] as part:
        return bytes(part)


def read_lines(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    out: asyncio.Queue[Any],
    pieces_from: int | None = None,
) -> None:
    """Read ``fd`` to its end in a daemon thread (a blocking read cannot be cancelled, and
    a pipe, a tty or a file all work), handing what ``iter_lines`` gives to ``out``: each
    complete line (bytes), ``Piece``s and ``LineEnd``s; ``None`` at EOF."""
    try:
        for item in iter_lines(fd, pieces_from):
            if isinstance(item, list):  # one wake-up of the loop for all the lines of a read
                loop.call_soon_threadsafe(_put_all, out, [bytes(line) for line in item])
            elif isinstance(item, Piece):  # its data changes with the next read
                loop.call_soon_threadsafe(out.put_nowait, Piece(bytes(item.data)))
            else:
                loop.call_soon_threadsafe(out.put_nowait, item)
    except RuntimeError:  # the loop is closed already
        return
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(out.put_nowait, None)


def _put_all(out: asyncio.Queue[Any], items: list[Any]) -> None:
    for item in items:
        out.put_nowait(item)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """Write ``data`` to ``fd`` whole (``OSError`` such as EPIPE when the reader is gone)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class PipeWriter:
    """The write end of a pipe, written whole by blocking writes from one thread (a 1 MB
    write waits for the reader, never for an event loop) and closed from any: a close
    while a write is under way is done by that write once it ends, so the descriptor's
    number is never reused under it. A write after the reader has gone (EPIPE) or after
    the close does nothing and says ``False``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._writing = False
        self._close_asked = False

    @property
    def closed(self) -> bool:
        return self._fd < 0 or self._close_asked

    def write(self, data: bytes | bytearray | memoryview) -> bool:
        """Write ``data`` whole; ``False`` when the pipe is closed or its reader gone."""
        with self._lock:
            if self.closed:
                return False
            self._writing = True
        try:
            write_all(self._fd, data)
            done = True
        except OSError:  # EPIPE: the reader is gone
            done = False
        with self._lock:
            self._writing = False
            if self._close_asked:
                self._close()
        return done

    def close(self) -> None:
        """Close the pipe (the reader sees its end) now, or once the write under way ends."""
        with self._lock:
            self._close_asked = True
            if not self._writing:
                self._close()

    def _close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            with contextlib.suppress(OSError):
                os.close(fd)


async def spawn_server(
    command: list[str],
    *,
    stderr: IO[Any] | int | None = None,
    stdout: int = asyncio.subprocess.PIPE,
    stdin: int = asyncio.subprocess.PIPE,
) -> asyncio.subprocess.Process:
    """Start the MCP server ``command`` over stdio: stdin and stdout piped (each pipe
    widened, ``widen_pipe``), lines read up to ``LINE_LIMIT``, in its own process group so
    ``stop_server`` ends it with whatever it started. ``stderr``: where the server's
    stderr goes (default: this process's); ``stdout``, ``stdin``: file descriptors to give
    it instead of pipes the event loop reads and writes (the recording proxy reads and
    writes its own pipes in threads, ``iter_lines``, ``PipeWriter``).

    Raises:
        OSError: the command cannot be started (not found, not executable).
    """
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=stdin,
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
