"""``--force`` replaces regular files only (issue 10): ``import`` and ``redact`` refuse a
symlink, a FIFO and a device node as their output even with ``--force``, with a message
naming the path and what it is, and leave it (and a symlink's target) untouched."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.factory import entry, write_cassette


def _target(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """The output path of ``kind`` and the words that name what it is."""
    if kind == "symlink":
        real = write_cassette(tmp_path / "real.jsonl", entry(1, "keep_me"))
        link = tmp_path / "link.jsonl"
        link.symlink_to(real)
        return link, "is a symlink"
    if kind == "fifo":
        fifo = tmp_path / "fifo.jsonl"
        os.mkfifo(fifo)
        return fifo, "is a FIFO"
    return Path("/dev/null"), "is a character device"


@pytest.mark.parametrize("command", ["import", "redact"])
@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_force_refuses_special_files(tmp_path: Path, command: str, kind: str) -> None:
    src = write_cassette(tmp_path / "src.jsonl", entry(1, "search", {"q": "x"}))
    target, what = _target(tmp_path, kind)
    before = os.lstat(target)
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", command, str(src), "-o", str(target),
         "--force"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = " ".join(done.stderr.split())
    assert f"{target}: {what}, not a regular file" in message
    assert "it is never replaced, not even with --force (overwrite=True)" in message
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    if kind == "symlink":
        assert stat.S_ISLNK(after.st_mode)
        assert (tmp_path / "real.jsonl").read_text().count('"keep_me"') == 1
