"""Unreadable inputs get a clear error at once, naming the file; every error names it.

A FIFO with no writer blocks ``open()`` for ever, ``/dev/zero`` never ends, a process
substitution is a pipe that cannot be read twice, a directory is no file: each is refused
after a ``stat`` (which never blocks), by every command and by ``load``."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.cli import cli
from click.testing import CliRunner
from support.factory import entry, write_cassette
from support.paths import SAMPLES

#: a bound so that a regression (a hang) fails the test instead of the suite
HANG = 60


def run(*args: str | Path, shell: bool = False) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)]
    if shell:  # bash, for <(...) process substitution
        argv = ["bash", "-c", " ".join(argv)]
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=HANG, check=False
    )


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "no-writer.fifo"
    os.mkfifo(path)
    return path


COMMANDS = [
    ("check", "{}"),
    ("diff", "{} " + str(SAMPLES / "fix.jsonl")),
    ("diff", str(SAMPLES / "fix.jsonl") + " {}"),
    ("import", "{} --list"),
    ("import", "{} -o out.jsonl"),
    ("open", "{}"),
    ("verify", "{} --dispatcher mod:fn --no-write"),
]


@pytest.mark.parametrize(("command", "args"), COMMANDS)
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "process_substitution", "directory"])
def test_unreadable_input_is_a_clear_error_at_once(
    command: str, args: str, kind: str, fifo: Path, tmp_path: Path
) -> None:
    if kind == "directory" and command == "check":
        pytest.skip("check reads a folder's *.jsonl files (tests/cli/test_conventions.py)")
    target = {
        "fifo": str(fifo),
        "dev_zero": "/dev/zero",
        "process_substitution": f"<(cat {SAMPLES / 'fail.jsonl'})",
        "directory": str(tmp_path),
    }[kind]
    proc = run(command, *args.format(target).split(), shell=kind == "process_substitution")
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    expected = {
        "fifo": f"{fifo}: is a pipe or FIFO, not a regular file",
        "dev_zero": "/dev/zero: is a character device, not a regular file",
        "process_substitution": "/dev/fd/",
        "directory": f"{tmp_path}: is a directory",
    }[kind]
    if kind == "directory" and command == "open":
        # a folder opens on the tree of its runs (tests/cli/test_group_cli.py): none here
        expected = f"{tmp_path}: no run to group (a folder's runs are its *.jsonl cassettes but *.min.jsonl, *.live.jsonl)"
    assert expected in err
    if kind == "process_substitution":
        assert "is a pipe or FIFO, not a regular file" in err


def test_load_and_open_cassette_refuse_a_fifo(fifo: Path) -> None:
    for opener in (load, open_cassette):
        with pytest.raises(CassetteFormatError) as info:
            opener(fifo)
        assert info.value.path == str(fifo) or str(fifo) in str(info.value)
        assert "not a regular file" in str(info.value)


def test_a_first_line_over_64_mb_is_still_a_cassette(tmp_path: Path) -> None:
    big = "x" * (65 * 1024 * 1024)
    path = write_cassette(tmp_path / "big.jsonl", entry(1, response={"text": big}), entry(2))
    assert open_cassette(path).path is not None
    proc = run("check", path)
    assert proc.returncode == 1, proc.stderr  # the repeated key is a finding
    assert b"big.jsonl: 2 entries" in proc.stdout


# -- every error names the file ------------------------------------------------------------


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        pos = rng.randrange(len(out)) if out else 0
        op = rng.random()
        if op < 0.3 and out:
            del out[pos : pos + rng.randint(1, 20)]
        elif op < 0.6:
            insert = rng.choice([b"{", b"}", b"[", b"]", b'"', b"\n", b"\x00", b"\xff", b"NaN"])
            out[pos:pos] = insert
        elif out:
            out[pos] = rng.randrange(256)
    return bytes(out)


def test_every_error_names_the_file(tmp_path: Path) -> None:
    """Mutated sample cassettes (fixed seed): every exit 2 names the file, never a
    traceback, in check, diff and import."""
    rng = random.Random(20240515)
    sources = [(SAMPLES / name).read_bytes() for name in ("fail.jsonl", "fix.jsonl")]
    runner = CliRunner()
    errors = 0
    for i in range(120):
        path = tmp_path / f"fuzzed-{i}.jsonl"
        path.write_bytes(mutate(rng.choice(sources), rng))
        for args in (
            ["check", str(path)],
            ["diff", str(path), str(SAMPLES / "fix.jsonl")],
            ["import", str(path), "--list"],
        ):
            result = runner.invoke(cli, args)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                result.exception,
            )
            if result.exit_code == 2:
                errors += 1
                assert path.name in result.output, (args, result.output)
    assert errors > 50  # the mutations do break most files


def test_a_bad_response_found_by_diff_names_file_line_and_field(tmp_path: Path) -> None:
    good = write_cassette(tmp_path / "good.jsonl", entry(1), entry(2))
    text = good.read_text().splitlines()
    text[1] = text[1].replace('"hits": 1}', '"hits" 1}')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    result = CliRunner().invoke(cli, ["diff", str(bad), str(good)])
    assert result.exit_code == 2
    assert "bad.jsonl:2: field 'response'" in result.output
