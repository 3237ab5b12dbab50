"""The changed-file guard: a file-backed cassette reads its entries later by offset, and
those offsets hold only for the file the load read. ``FileIdentity`` is that file; a read
of entries refuses another file put in its place, or the file cut or rewritten in place,
with "changed on disk since it was loaded (...): load it again" (lines appended after the
load are allowed: the offsets still hold)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import CassetteFormatError


@dataclass(frozen=True)
class FileIdentity:
    """The cassette file as ``load`` read it: its device and inode, its size in bytes and
    its modification time in nanoseconds (from ``fstat``). A file-backed cassette reads
    its entries later by offset, and those offsets hold only for this file."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        """The identity ``st`` (an ``os.fstat`` result of the open file) describes."""
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_same_file(path: Path, fd: int, identity: FileIdentity | None) -> None:
    """Refuse to read entries from ``fd`` (``path`` opened again) when it is not the file
    the load indexed: another file put in its place (another inode, as an atomic save or
    an editor's write gives), or the file cut or rewritten in place (shorter, or the same
    size with another modification time). Lines appended after the load keep the indexed
    offsets right and are allowed; ``identity`` ``None`` (no load) checks nothing.

    Raises:
        CassetteFormatError: ``line`` ``None``: "changed on disk since it was loaded
            (...): load it again".
    """
    if identity is None:
        return
    try:
        st = os.fstat(fd)
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    what = how_changed(st, identity, appended_ok=True)
    if what is not None:
        raise changed_error(path, what)


def how_changed(st: os.stat_result, identity: FileIdentity, *, appended_ok: bool) -> str | None:
    """How the file ``st`` describes differs from ``identity`` (``None``: not at all, or
    only grown when ``appended_ok``)."""
    if (st.st_dev, st.st_ino) != (identity.device, identity.inode):
        return "another file is in its place"
    if st.st_size < identity.size:
        return f"cut from {identity.size} to {st.st_size} bytes"
    if st.st_mtime_ns == identity.mtime_ns or (appended_ok and st.st_size > identity.size):
        return None
    return "rewritten in place" if st.st_size == identity.size else "written to since"


def changed_error(path: Path, what: str) -> CassetteFormatError:
    """The error for a cassette file that is not the one the load indexed (``line``
    ``None``): "changed on disk since it was loaded (``what``): load it again"."""
    return CassetteFormatError(
        path, None, None, f"changed on disk since it was loaded ({what}): load it again"
    )
