"""Per-entry columns kept in temporary files instead of the process's memory (issue 31:
the headless ``diff`` of two 1M-entry runs in memory that does not grow with the rows).

A column spilled (``spilled``) or made on disk (``on_disk``) is a ``memoryview`` of the
same item type over a shared map of an unnamed temporary file (``tempfile.TemporaryFile``
in the system's temp dir: unlinked when made, so the kernel deletes it when the process
ends, on an error, Ctrl-C or a kill). Indexing, slicing, ``len`` and iteration are the
view's, at C speed, as an ``array``'s; writes go to the file.

A mapped page that was read counts in the process's resident set (``VmRSS``, ``VmHWM``)
until it is unmapped: a pager thread drops every spilled column's pages from the process
every ``_DROP_EVERY`` seconds (``madvise(MADV_DONTNEED)``: the data stays in the page
cache or on disk, the next read maps it again). What stays resident is what was read
since the last drop: a column read in order holds a few pages, one read at random holds
the pages it hit in that time. Reading a dropped page again costs a minor page fault
(about a microsecond per 4 KiB page).

How much one read maps is the file's page-cache folio: a kernel that keeps large folios
for a file (Linux 6.18 on ext4 here) maps a whole folio on a read fault, and a folio is
as large as the write that filled it. So every write to a spilled column's file is at
most ``WRITE_PIECE`` (64 KiB: the kernel's usual fault-around, which maps that much
anyway), and a column written through its map is let go a step at a time; one read then
maps 64 KiB, not the 512 KiB of a spooled batch (issue 31: at 1M entries, a few reads
here and there made whole 8 MB columns resident between two turns of the pager).

Spilling is off unless a caller turns it on (``spilling()``, the ``diff`` command): the
app keeps its columns in memory, where many reads at random cost nothing.
"""

from __future__ import annotations

import mmap
import os
import threading
import time
import weakref
from array import array, typecodes
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, cast

from .allocator import M_MMAP_THRESHOLD, malloc_trim, mallopt

#: seconds between two drops of the mapped pages: a loop at Python speed reads or writes
#: a few MB of a column in 0.05 s (at 1M entries, 8 MB columns, three or four of them in
#: step in the key alignment), so what it held there grew with the entries (issue 31)
_DROP_EVERY = 0.01
#: columns shorter than this stay in memory (a map and a file each are not worth it)
SPILL_MIN_ITEMS = 1 << 14
#: the most bytes written to a spilled column's file at once, by ``write`` or through its
#: map between two drops: the size of a page-cache folio, which one read fault maps whole
#: (see the module docstring)
WRITE_PIECE = 64 << 10

_lock = threading.Lock()
_maps: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()
_pager: threading.Thread | None = None
_depth = 0
#: the size from which a block is its own map while spilling: glibc's own first value
#: (``mallopt(3)``)
MMAP_THRESHOLD = 128 << 10
_threshold_fixed = False


@contextmanager
def spilling() -> Iterator[None]:
    """Within this block, ``maybe_spilled`` and ``maybe_on_disk`` put columns in
    temporary files (process-wide; blocks nest). The first block fixes glibc's mmap
    threshold for the rest of the process (``fix_mmap_threshold``)."""
    global _depth
    with _lock:
        _depth += 1
    fix_mmap_threshold()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1


def is_spilling() -> bool:
    """Whether a ``spilling()`` block is open."""
    return _depth > 0


def spilled(column: array[int] | bytearray | memoryview) -> memoryview:
    """``column``'s items (an ``array`` of any integer type, a ``bytearray``, a view) in a
    temporary file, as a writable ``memoryview`` of the same type; ``column`` is not
    changed (drop it to free its memory)."""
    view = memoryview(column)
    fmt = view.format if view.format in typecodes else "B"
    data = view.cast("B")
    out = _mapped(data.nbytes, fmt)
    raw = out.cast("B")
    for start in range(0, data.nbytes, WRITE_PIECE):
        raw[start : start + WRITE_PIECE] = data[start : start + WRITE_PIECE]
        _drop(out)  # the pages just written, not at the pager's next turn
    return out


def on_disk(typecode: str, n: int, fill: int = 0) -> memoryview:
    """``n`` items of ``typecode`` (an ``array`` type) in a temporary file, each ``fill``,
    as a writable ``memoryview``."""
    out = _mapped(n * array(typecode).itemsize, typecode)
    if fill and n:
        width = array(typecode).itemsize
        step = WRITE_PIECE // width
        block = memoryview(array(typecode, [fill]) * min(n, step)).cast("B")
        raw = out.cast("B")
        for start in range(0, n, step):
            count = min(step, n - start)
            raw[start * width : (start + count) * width] = block[: count * width]
            _drop(out)  # a step's pages at a time, not the whole column's at once
    return out


def maybe_spilled(column: array[int]) -> array[int]:
    """``spilled(column)`` inside a ``spilling()`` block for a long column, else ``column``
    (also a column spilled already). Typed as the ``array`` it stands for: it reads the
    same (index, slice, ``len``, iteration, item assignment), but has no ``append``."""
    if _depth > 0 and len(column) >= SPILL_MIN_ITEMS and not isinstance(column, memoryview):
        return cast("array[int]", spilled(column))
    return column


def maybe_on_disk(typecode: str, n: int, fill: int = 0) -> array[int]:
    """``on_disk(typecode, n, fill)`` inside a ``spilling()`` block for a long column, else
    an ``array`` of ``n`` items ``fill`` (typed as the ``array``: see ``maybe_spilled``)."""
    if _depth > 0 and n >= SPILL_MIN_ITEMS:
        return cast("array[int]", on_disk(typecode, n, fill))
    return array(typecode, [fill]) * n


class Spool:
    """A column written to a temporary file as it grows, a batch at a time (``add``), and
    read back as one ``memoryview`` (``view``): the load's index of a file while
    spilling, so that its columns are never whole in memory."""

    def __init__(self, typecode: str) -> None:
        self.typecode = typecode
        self.count = 0
        import tempfile  # here: a load that does not spill does not import it

        # closed by ``view``, or with the spool (an unnamed file: nothing is left behind)
        self._file: Any = tempfile.TemporaryFile(prefix="cassette-tui-")  # noqa: SIM115

    def add(self, items: array[int]) -> None:
        """Append ``items`` (an ``array`` of this spool's type) to the file. Raises
        ``OSError`` naming the temporary folder when it is full (``_no_room``)."""
        data = memoryview(items).cast("B")
        try:
            # in pieces: a folio as large as the batch would be mapped whole by one read
            for start in range(0, data.nbytes, WRITE_PIECE):
                self._file.write(data[start : start + WRITE_PIECE])
        except OSError as exc:
            raise _no_room(exc) from exc
        self.count += len(items)

    def close(self) -> None:
        """Let go of the file without reading it (a pass given up); idempotent."""
        f, self._file = self._file, None
        if f is not None:
            f.close()

    def view(self, tail: array[int]) -> array[int]:
        """Every item added, then ``tail``, as one column in the file (typed as the
        ``array``: see ``maybe_spilled``). The spool takes no more items."""
        self.add(tail)
        f, self._file = self._file, None
        with f:
            f.flush()
            nbytes = self.count * array(self.typecode).itemsize
            mapped = mmap.mmap(f.fileno(), max(nbytes, 1)) if nbytes else None
        if mapped is None:
            return array(self.typecode)
        with _lock:
            _maps.add(mapped)
            _start_pager()
        view: Any = memoryview(mapped)[:nbytes]
        return cast("array[int]", view.cast(self.typecode))


def give_back() -> None:
    """Hand the allocator's free memory back to the system (glibc's ``malloc_trim``),
    inside a ``spilling()`` block only: a column just spilled leaves its pages free but
    still in the process (a large block's space is reused, not returned), so the next
    stage's high-water mark would count them. Elsewhere, or without glibc, nothing."""
    if _depth > 0:
        malloc_trim()


def fix_mmap_threshold() -> None:
    """Keep glibc's mmap threshold at ``MMAP_THRESHOLD`` (128 KiB) for the rest of the
    process (``mallopt(M_MMAP_THRESHOLD)``, once; nothing without glibc).

    By default glibc raises the threshold to the size of any mapped block freed (up to
    32 MiB), so after the first 4 MiB chunk of the loader's read-ahead (``_readahead.py``)
    is freed, every later chunk, and any column or buffer up to that size, comes from a
    heap (the reading thread's arena, or the main one) and its pages stay in the process
    when freed, resident or not as the heap's free blocks fall: at 1M entries the load's
    heaps held 10-20 MB free (``mallinfo2``) and the load's peak moved by 4 MB from run to
    run with the chunks' timing. A fixed threshold maps each such block and unmaps it
    when freed (issue 31, docs/performance.md)."""
    global _threshold_fixed
    if _threshold_fixed:
        return
    _threshold_fixed = True
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)  # not glibc (musl, macOS): its own policy


def _mapped(nbytes: int, fmt: str) -> memoryview:
    import tempfile

    with tempfile.TemporaryFile(prefix="cassette-tui-") as f:
        size = max(nbytes, 1)
        _reserve(f.fileno(), size)
        mapped = mmap.mmap(f.fileno(), size)  # the map keeps the file; the name is gone
    with _lock:
        _maps.add(mapped)
        _start_pager()
    view: Any = memoryview(mapped)[:nbytes]
    return cast(memoryview, view.cast(fmt))


def _reserve(fd: int, size: int) -> None:
    """Give the file ``fd`` ``size`` bytes of disk now. A sparse file (``truncate``) gets
    its blocks when a page of its map is first written, and on a full disk that write is
    a ``SIGBUS`` that kills the process without a word; reserved here, a full disk is an
    ``OSError`` naming the temporary folder (``_no_room``). Without ``posix_fallocate``
    (macOS), ``truncate``."""
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, size)
        else:  # pragma: no cover - not Linux
            os.ftruncate(fd, size)
    except OSError as exc:
        raise _no_room(exc) from exc


def _no_room(exc: OSError) -> OSError:
    """``exc`` (a failed write to a temporary file) as an ``OSError`` of the same errno
    whose text names the temporary folder and what to do."""
    import tempfile

    where = tempfile.gettempdir()
    return OSError(
        exc.errno,
        f"cannot write a temporary file in {where} ({exc.strerror or exc}): "
        "free space there, or set TMPDIR to a folder with more room",
    )


def drop_pages(column: object) -> None:
    """Unmap ``column``'s pages from this process now when it is a view of a temporary
    file (``spilled``, ``on_disk``, ``Spool.view``): a pass that reads a whole column at C
    speed calls it every few thousand items, or the pages it read count in ``VmRSS``
    until the pager's next turn. Nothing for any other column."""
    if isinstance(column, memoryview):
        _drop(column)


def _drop(view: memoryview) -> None:
    """Unmap ``view``'s pages from this process now (they stay in the file)."""
    if isinstance(view.obj, mmap.mmap):
        with suppress(ValueError, OSError):
            view.obj.madvise(mmap.MADV_DONTNEED)


def _start_pager() -> None:
    global _pager
    if _pager is None or not _pager.is_alive():
        _pager = threading.Thread(target=_drop_pages, name="cassette-spill-pager", daemon=True)
        _pager.start()


def _drop_pages() -> None:
    """Now and then, unmap every spilled column's pages from this process (they stay in
    the file); ends when no column is left."""
    global _pager
    while True:
        time.sleep(_DROP_EVERY)
        with _lock:
            maps = list(_maps)
            if not maps:
                _pager = None
                return
        for mapped in maps:
            with suppress(ValueError, OSError):  # closed meanwhile
                mapped.madvise(mmap.MADV_DONTNEED)
        del maps
