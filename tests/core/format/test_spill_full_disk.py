"""A full temporary folder while ``diff`` spills its columns (``format/spill.py``): the
error names the folder and says what to do, never a ``SIGBUS`` that kills the process
without a word (a sparse temporary file mapped, then written on a full disk).

The full disk is a small tmpfs mounted over a folder in a new mount namespace
(``unshare -m``), so it needs no free space of the machine and leaves nothing behind."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

#: the column asked for: 2 MiB of ``q`` items, four times the tmpfs below
_COLUMN = (
    "from cassette_tui.core.format import spill\n"
    "with spill.spilling():\n"
    "    column = spill.maybe_on_disk('q', {n}, -1)\n"
    "    print(len(column), column[-1])\n"
)


def _in_small_tmp(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` run with a 512 KiB tmpfs over ``folder`` and ``TMPDIR`` set to it."""
    script = 'mount -t tmpfs -o size=512k tmpfs "$1" && export TMPDIR="$1" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(folder), *argv]


@functools.cache
def _problem() -> str | None:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount is not installed"
    with tempfile.TemporaryDirectory(prefix="tmpfs-probe-") as folder:
        done = subprocess.run(
            _in_small_tmp(Path(folder), ["true"]), capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        return f"no private tmpfs mount here: {done.stderr.strip() or done.returncode}"
    return None


def _column_in_small_tmp(tmp_path: Path, n: int) -> subprocess.CompletedProcess[str]:
    """A spilled column of ``n`` ``q`` items made with the small tmpfs as ``TMPDIR``."""
    if (why := _problem()) is not None:
        pytest.skip(why)
    small = tmp_path / "small-tmp"
    small.mkdir()
    return subprocess.run(
        _in_small_tmp(small, [sys.executable, "-c", _COLUMN.format(n=n)]),
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_a_column_larger_than_the_temporary_folder_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    done = _column_in_small_tmp(tmp_path, 1 << 18)
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])  # not -7 (SIGBUS)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("OSError: [Errno 28]"), last
    assert str(tmp_path / "small-tmp") in last and "TMPDIR" in last, last


def test_a_column_that_fits_reads_back(tmp_path: Path) -> None:
    done = _column_in_small_tmp(tmp_path, 1 << 14)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == [str(1 << 14), "-1"]
