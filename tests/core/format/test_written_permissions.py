"""Files the tool writes get the usual permissions (0666 less the umask), not mkstemp's
0600; a replaced file keeps its mode."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.cassette import load, save
from support.paths import SAMPLES


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o002, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_new_files_get_0666_less_the_umask(tmp_path: Path, umask: int) -> None:
    out = write_atomic(tmp_path / "a.jsonl", [b"x\n"])
    assert mode(out) == 0o666 & ~umask
    saved = save(load(SAMPLES / "fix.jsonl"), tmp_path / "b.jsonl")
    assert mode(saved) == 0o666 & ~umask


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "c.jsonl"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    write_atomic(target, [b"new\n"], overwrite=True)
    assert mode(target) == 0o640 and target.read_bytes() == b"new\n"
