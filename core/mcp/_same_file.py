"""Whether a path still names the file an ``mcp record`` session created.

A session creates its cassette and sidecar, then writes them through the open files for
as long as the host talks, minutes or hours. Meanwhile a user may move, delete or replace
either path (``mv run.jsonl old.jsonl``, an editor's save). Before the proxy removes a
file it created, or puts the sidecar's document in the journal's place, it asks here
whether the path still names the file it opened (the same device and inode), so that a
file the user put there is never removed nor overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

__all__ = ["FileId", "identity", "names"]


class FileId(NamedTuple):
    """A file's ``(st_dev, st_ino)``: one file whatever its name, however it grows (the
    load's ``core.format._guard.FileIdentity`` adds the size and modification time: the
    same contents, for reading by offset)."""

    device: int
    inode: int


def identity(fd: int) -> FileId:
    """The identity of the open file ``fd``. Raises ``OSError`` as ``os.fstat``."""
    st = os.fstat(fd)
    return FileId(st.st_dev, st.st_ino)


def names(path: Path, ident: FileId | None) -> bool | None:
    """Whether ``path`` names the file ``ident`` (a symlink is never followed: a link
    there is another file); ``None`` when nothing is at ``path`` (or it cannot be looked
    at). ``ident`` ``None`` (unknown) never matches a file."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return ident is not None and FileId(st.st_dev, st.st_ino) == ident
