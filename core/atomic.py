"""Atomic file writes: a temporary file in the target's folder, fsync, then rename.

A crash never leaves a half-written file behind, and an existing file is only replaced
when the caller passes ``overwrite=True``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomic(path: str | Path, chunks: Iterable[bytes], *, overwrite: bool = False) -> Path:
    """Write ``chunks`` to ``path`` atomically and return the path.

    Raises ``FileExistsError`` when ``path`` exists and ``overwrite`` is false (checked
    before writing and again at the rename, which uses a hard link so a file created
    meanwhile is not clobbered either).
    """
    target = Path(path)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target}: exists; pass overwrite (--force) to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            for chunk in chunks:
                tmp.write(chunk)
            tmp.flush()
            os.fsync(tmp.fileno())
        if overwrite:
            os.replace(tmp_name, target)
        else:
            try:
                os.link(tmp_name, target)  # fails if the target appeared meanwhile
            except FileExistsError:
                raise FileExistsError(
                    f"{target}: exists; pass overwrite (--force) to replace it"
                ) from None
            except OSError:
                os.replace(tmp_name, target)  # file systems without hard links
            else:
                os.unlink(tmp_name)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    return target
