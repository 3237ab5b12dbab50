"""An output that exists is refused in plain words: the library says ``pass overwrite=True
to replace it``, a command says ``use --force to replace it`` (never ``pass overwrite
(--force)``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.atomic import TargetExists, write_atomic
from cassette_tui.core.format.cassette import save
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.scan.redact import redact_job
from support.paths import SAMPLES, SCRIPT

FIX = SAMPLES / "fix.jsonl"


def test_the_library_names_overwrite_true(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("mine\n")
    for write in (
        lambda: write_atomic(target, [b"x"]),
        lambda: save(load(FIX), target),
        lambda: run_job(redact_job(load(FIX), target)),
    ):
        with pytest.raises(TargetExists) as info:
            write()
        assert str(info.value) == f"{target}: exists; pass overwrite=True to replace it"
        assert info.value.path == target and isinstance(info.value, FileExistsError)
    assert target.read_text() == "mine\n"


@pytest.mark.parametrize("command", ["import", "redact", "pin"])
def test_a_command_names_force(tmp_path: Path, command: str) -> None:
    if command == "pin":
        first = subprocess.run(
            [SCRIPT, "pin", FIX, "--seq", "1", "-o", tmp_path], capture_output=True, check=False
        )
        assert first.returncode == 0, first.stderr
        (target,) = tmp_path.glob("*.jsonl")
        args = ["pin", FIX, "--seq", "1", "-o", tmp_path]
    else:
        target = tmp_path / "out.jsonl"
        target.write_text("mine\n")
        args = [command, FIX, "-o", target]
    before = target.read_bytes()
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    # pin also says what the existing fixture holds (a name shared by two calls, issue 29)
    held = f", holding tool 'search_docs' seq 1 of {FIX}" if command == "pin" else ""
    assert done.stderr == (
        f"cassette-tui {command}: {target}: exists{held}; use --force to replace it\n"
    )
    assert target.read_bytes() == before
