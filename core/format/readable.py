"""Opening input files: only regular files, with an error that names the file otherwise.

A cassette is read by offset (the loader indexes lines and parses entries again on
demand), and every importer reads its file whole. Anything that is not a regular file
cannot be read that way, and some would hang or exhaust memory: a FIFO with no writer
blocks ``open()`` for ever, ``/dev/zero`` never ends, a process substitution
(``<(cat run.jsonl)``, a pipe under ``/dev/fd``) cannot be read twice. ``check_regular``
looks with ``os.stat`` first (which never blocks) and refuses those at once with a
``CassetteFormatError`` that says what the path is and what to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .errors import CassetteFormatError

#: what a path is, by ``stat`` file type, for the error message
_KINDS = (
    (stat.S_ISFIFO, "a pipe or FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_regular(path: str | Path) -> os.stat_result:
    """``os.stat(path)`` when ``path`` is a regular file (symbolic links followed).

    Raises:
        CassetteFormatError: missing, unreadable, a directory, or not a regular file (a
            pipe, FIFO, device or socket), naming the file; ``line`` and ``field`` are
            ``None``.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise CassetteFormatError.from_os_error(p, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise CassetteFormatError(p, None, None, "is a directory, not a cassette file")
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise CassetteFormatError(
            p,
            None,
            None,
            f"is {kind}, not a regular file: recordings are read from files "
            "(write it to a file first)",
        )
    return st


def open_regular(path: str | Path) -> BinaryIO:
    """Open ``path`` for reading in binary mode after :func:`check_regular`.

    Raises:
        CassetteFormatError: see :func:`check_regular`; or ``open`` failed (permissions).
    """
    check_regular(path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None


def read_regular(path: str | Path) -> bytes:
    """The whole content of the regular file ``path`` (see :func:`open_regular`)."""
    with open_regular(path) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise CassetteFormatError.from_os_error(path, exc) from None
