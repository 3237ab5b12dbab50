"""Atomic file writes: a temporary file in the target's folder, fsync, then rename.

A crash never leaves a half-written file behind, and an existing file is only replaced
when the caller passes ``overwrite=True``, and only when it is a regular file: a device
node, a FIFO, a socket, a directory or a symlink is never replaced (a rename would put a
regular file where the user's link or device was), whatever the flag says.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import CassetteError


class TargetExists(FileExistsError):
    """A file is at the path to write, and replacing it was not asked for.

    The message says how to ask in the library (``pass overwrite=True to replace it``); a
    command says its own flag instead (``for_flag("--force")``: ``use --force to replace
    it``). Attributes: ``path``, ``how``.
    """

    def __init__(self, path: str | Path, how: str = "pass overwrite=True") -> None:
        self.path = Path(path)
        self.how = how
        super().__init__(f"{path}: exists; {how} to replace it")

    def for_flag(self, flag: str = "--force") -> TargetExists:
        """The same error in a command's words: ``PATH: exists; use --force to replace it``."""
        return TargetExists(self.path, f"use {flag}")


class NotReplaceable(FileExistsError):
    """``overwrite`` was asked for a path that is not a regular file (a device node, a
    FIFO, a socket, a directory or a symlink). Attributes: ``path``, ``kind``."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path = path
        self.kind = kind
        super().__init__(
            f"{path}: is a {kind}, not a regular file; it is never replaced, not even with "
            "--force (overwrite=True): write to a regular file path instead"
        )


def file_kind(path: str | Path) -> str | None:
    """What is at ``path`` without following a symlink: ``"regular file"``,
    ``"symlink"``, ``"directory"``, ``"FIFO"``, ``"character device"``, ``"block
    device"``, ``"socket"``, or ``None`` when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    for test, kind in (
        (stat.S_ISREG, "regular file"),
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return kind
    return "special file"


class FolderNotWritable(CassetteError, OSError):
    """A new file cannot be created where it was asked for (a read-only file system, no
    permission, a file where a folder should be). Attributes: ``path`` (the new file),
    ``folder`` (the folder that refused), ``why``."""

    def __init__(self, path: Path, folder: Path, why: str) -> None:
        self.path = path
        self.folder = folder
        self.why = why
        super().__init__(
            f"{folder}: cannot create {path.relative_to(folder)} in this folder: {why}"
        )


def check_new_file(path: str | Path) -> None:
    """Check, before any work, that a new file can be created at ``path``: its folder, or
    the nearest folder above that exists (a writer creates the missing ones), is a folder
    in which this process can create a file. Tried for real (a hidden empty file created
    and removed at once), so a read-only file system, permissions, ACLs and root are all
    judged as the write itself would be. Nothing else is written.

    Raises:
        FolderNotWritable: naming the folder and why (``Read-only file system``,
            ``Permission denied``, ``not a folder``).
    """
    target = Path(path).absolute()
    folder = target.parent
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise FolderNotWritable(target, folder, "not a folder")
    probe = folder / f".{target.name}.write-check-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # a leftover of this pid: the folder takes new files
    except OSError as exc:
        raise FolderNotWritable(target, folder, exc.strerror or str(exc)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def check_replaceable(path: str | Path) -> bool:
    """``True`` when a regular file is at ``path``, ``False`` when nothing is there.

    Raises:
        NotReplaceable: something other than a regular file is there.
    """
    kind = file_kind(path)
    if kind is None:
        return False
    if kind != "regular file":
        raise NotReplaceable(Path(path), kind)
    return True


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it
    (``/proc/self/status`` on Linux); elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_mode() -> int:
    """The permission bits of a new file: ``0o666`` less the umask (``0o644`` usually)."""
    return 0o666 & ~current_umask()


def existing_mode(path: Path) -> int:
    """The permission bits of ``path``, or :func:`default_mode` when it cannot be read."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return default_mode()


def write_atomic(
    path: str | Path,
    chunks: Iterable[bytes],
    *,
    overwrite: bool = False,
    fsync: bool = True,
    make_parents: bool = True,
) -> Path:
    """Write ``chunks`` to ``path`` atomically and return the path.

    ``fsync=False`` skips the flush to disk (the rename is still atomic for readers and
    for a crash of the process, not for a power cut): for files rewritten often, like the
    replay report. ``make_parents=False``: a missing folder is a ``FileNotFoundError``,
    never created (the replay report: its folder may have been removed on purpose).

    Raises:
        TargetExists: (a ``FileExistsError``) ``path`` exists and ``overwrite`` is false
            (checked before writing and again at the rename, which uses a hard link so a
            file created meanwhile is not clobbered either).
        NotReplaceable: (a ``FileExistsError``) ``path`` is a symlink, FIFO, device node,
            socket or directory, with or without ``overwrite``.
    """
    target = Path(path)
    kind = file_kind(target)
    if kind is not None:
        if kind != "regular file":
            raise NotReplaceable(target, kind)
        if not overwrite:
            raise TargetExists(target)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file 0600; the result gets the mode a plain open() would give
        # (0666 less the umask), or keeps the mode of the file it replaces
        os.fchmod(fd, existing_mode(target) if kind is not None else default_mode())
        _write_all(fd, chunks, fsync)
        _put_in_place(tmp_name, target, overwrite)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    return target


def _write_all(fd: int, chunks: Iterable[bytes], fsync: bool) -> None:
    """Write ``chunks`` to the temporary file ``fd`` (closed after), flushed to disk with
    ``fsync``."""
    with os.fdopen(fd, "wb") as tmp:
        for chunk in chunks:
            tmp.write(chunk)
        tmp.flush()
        if fsync:
            os.fsync(tmp.fileno())


def _put_in_place(tmp_name: str, target: Path, overwrite: bool) -> None:
    """Rename the written temporary file to ``target``: replacing it when ``overwrite``
    (checked again to be replaceable), else by a hard link that fails if ``target``
    appeared meanwhile (a rename on file systems without hard links).

    Raises:
        TargetExists: ``target`` appeared meanwhile and ``overwrite`` is false.
        NotReplaceable: ``target`` became a symlink, FIFO, device, socket or directory.
    """
    if overwrite:
        check_replaceable(target)  # again: something may have appeared meanwhile
        os.replace(tmp_name, target)
        return
    try:
        os.link(tmp_name, target)  # fails if the target appeared meanwhile
    except FileExistsError:
        raise TargetExists(target) from None
    except OSError:
        os.replace(tmp_name, target)  # file systems without hard links
    else:
        os.unlink(tmp_name)
