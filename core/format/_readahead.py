"""Reading a file in chunks while the caller works on the chunk before.

The loader spends a tenth of its time in ``read``: the kernel copies each chunk of the file
into a new buffer while nothing else runs. ``read`` releases the GIL during that copy, so
a thread that reads the next chunk while the caller indexes this one hides the copy behind
the caller's work on a machine with a second core (measured by
``benchmarks/bench_load.py``: a tenth to a fifth of the load on long-string cassettes). Small files
are read in the caller's thread: a thread's start would cost more than it saves.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Generator
from typing import BinaryIO

#: bytes read at a time (the loader, and the sequential reads of a loaded cassette): large
#: enough that the per-read cost vanishes, small enough that the buffer stays a few MB
#: whatever the file size
CHUNK = 1 << 22
#: files at least this large (bytes) are read ahead by a thread; smaller ones in turn
READ_AHEAD_MIN = 16 << 20
#: chunks read ahead and not yet taken: the memory held is this many chunks at most
_DEPTH = 2
#: how often (seconds) a reader blocked on a full queue looks whether it was stopped
_POLL_S = 0.05


def read_chunks(fh: BinaryIO, chunk_size: int, *, size: int) -> Generator[bytes, None, None]:
    """The bytes of ``fh`` from its position on, in chunks of ``chunk_size`` bytes (the
    last one shorter; none for an empty rest), read ahead by a thread when ``size`` (the
    file's size in bytes, as ``fstat`` gave it) is at least ``READ_AHEAD_MIN``.

    The thread reads with ``os.pread`` on ``fh``'s descriptor, never through ``fh``: a
    thread frozen at interpreter exit while it reads (a daemon: exit never waits for it)
    then holds no lock that closing ``fh`` needs, and ``pread`` moves no file offset. It
    holds at most ``_DEPTH`` chunks the caller has not taken. Closing the iterator
    (``close()``, or dropping it) stops the thread and waits for it; the caller closes
    the iterator before it closes ``fh``.

    Raises:
        OSError: a read failed (raised in the caller's thread, at the chunk it hit).
    """
    if size < READ_AHEAD_MIN:
        while chunk := fh.read(chunk_size):
            yield chunk
        return
    yield from _read_ahead(fh, chunk_size)


def _read_ahead(fh: BinaryIO, chunk_size: int) -> Generator[bytes, None, None]:
    """``read_chunks`` with the reader thread: the chunks come through a queue of at most
    ``_DEPTH``; closing the generator stops the thread and joins it."""
    chunks: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=_DEPTH)
    stop = threading.Event()
    offset = fh.tell()
    fd = fh.fileno()

    def put(item: bytes | BaseException) -> bool:
        while not stop.is_set():
            try:
                chunks.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def reader(at: int) -> None:
        try:
            while put(chunk := os.pread(fd, chunk_size, at)) and chunk:
                at += len(chunk)
        except BaseException as exc:  # noqa: BLE001 - any failure must reach the caller
            put(exc)  # (raised there), or it would wait for a chunk for ever

    thread = threading.Thread(
        target=reader, args=(offset,), name="cassette-read-ahead", daemon=True
    )
    try:
        # started inside the try: a Ctrl-C that lands in start() still stops the thread
        thread.start()
        while True:
            item = chunks.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item
    finally:
        stop.set()
        # a thread not yet alive (Ctrl-C inside start()) sees ``stop`` before any put
        if thread.is_alive():
            thread.join()
