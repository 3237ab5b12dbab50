"""The app without a terminal (CI, cron, ``ssh host cmd`` without ``-t``, a pipe): exit 2 at
once with one line pointing to ``cassette-tui diff``, and no escape sequences anywhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.paths import SAMPLES, SCRIPT
from support.terminal import run_in_terminal

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason=f"no console script: {SCRIPT}")

CASE = "bugcases/30_app_without_terminal"


@pytest.fixture
def pair(real: Path) -> tuple[Path, Path]:
    case = real / CASE
    if not case.is_dir():
        pytest.skip(f"real-world data not available: {case} is absent")
    return case / "a.jsonl", case / "b.jsonl"


def test_without_any_terminal_the_app_exits_2_pointing_to_diff(pair: tuple[Path, Path]) -> None:
    # a generous timeout only so a regression fails instead of hanging the suite
    proc = subprocess.run(
        [SCRIPT, *pair], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert "needs a terminal" in line and "cassette-tui diff" in line
    assert b"\x1b" not in proc.stderr


def test_with_stdout_redirected_the_app_does_not_draw(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    status, screen = run_in_terminal(
        [
            "sh",
            "-c",
            f'"{SCRIPT}" "$1" "$2" > "$3"',
            "sh",
            SAMPLES / "fail.jsonl",
            SAMPLES / "fix.jsonl",
            out,
        ],
        env={"TERM": "xterm"},
    )
    assert status == 2
    assert out.read_bytes() == b""
    assert "stdout is not one" in screen and "cassette-tui diff" in screen
    assert "\x1b" not in screen


def test_bad_input_still_names_the_file_first(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 1, "tool": "t", "args": {}}\n')
    proc = subprocess.run(
        [SCRIPT, bad], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert "bad.jsonl:1: field 'response'" in proc.stderr.decode()


def test_with_stderr_redirected_the_reason_is_on_the_terminal_too(tmp_path: Path) -> None:
    """``2>err.log`` in a real terminal: Textual draws on stderr, so the app cannot start;
    the reason goes to the log and to the terminal the user looks at (stdout)."""
    err = tmp_path / "err.log"
    status, screen = run_in_terminal(
        [
            "sh",
            "-c",
            f'"{SCRIPT}" "$1" "$2" 2> "$3"',
            "sh",
            SAMPLES / "fail.jsonl",
            SAMPLES / "fix.jsonl",
            err,
        ],
        env={"TERM": "xterm"},
    )
    assert status == 2
    (logged,) = err.read_text().splitlines()
    assert "stderr is not one" in logged and "cassette-tui diff" in logged
    assert screen.strip() == logged
    assert "\x1b" not in screen


def test_term_dumb_is_refused_like_no_terminal() -> None:
    status, screen = run_in_terminal(
        [SCRIPT, SAMPLES / "fail.jsonl", SAMPLES / "fix.jsonl"], env={"TERM": "dumb"}
    )
    assert status == 2
    (line,) = screen.strip().splitlines()
    assert line.startswith("cassette-tui: the app needs a full-screen terminal (TERM=dumb")
    assert "cassette-tui diff A B" in line and "cassette-tui check FILE" in line
    assert "\x1b" not in screen
