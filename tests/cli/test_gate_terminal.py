"""``cassette-tui gate`` in a terminal wraps its text at word boundaries to the terminal's
width (80 columns here, a real pseudo-terminal): the same words as into a pipe, where no
line is wrapped, and none cut in two (``(summed over run`` / ``s)`` was seen)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from rich.cells import cell_len
from support.loop import DEMO_AGENT
from support.paths import SAMPLES, SCRIPT
from support.terminal import run_in_terminal

COLUMNS = 80


def test_gate_wraps_words_to_the_terminal_and_not_into_a_pipe(tmp_path: Path) -> None:
    # short words whatever the checkout's path: the demo agent copied here, run by the
    # name python from this interpreter's folder (a path longer than a line would fold)
    for source in (SAMPLES / "fix.jsonl", DEMO_AGENT):
        shutil.copy(source, tmp_path / source.name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    # the demo agent, flaky with a draw per run: runs 1 and 3 fail, run 2 passes
    agent = "python agent.py --flaky --seed {run}"
    argv = [SCRIPT, "gate", "fix.jsonl", "--runs", "3", "--agent", agent]
    piped = subprocess.run(
        argv, capture_output=True, cwd=tmp_path, env=env, timeout=120, check=False
    )
    assert piped.returncode == 1, piped.stderr
    plain = piped.stdout.decode()
    # into a pipe, lines stay whole (for grep), as before
    assert "3 repeated calls (summed over runs)\n" in plain
    # the paragraph on where the runs part too: one line, so grep finds the sentence
    assert any(
        "Every run made" in line and "yet 1 of 3 passed" in line for line in plain.splitlines()
    )
    assert any(cell_len(line) > COLUMNS for line in plain.splitlines())
    # the progress bar goes to stderr on a terminal: left out of what is compared
    command = " ".join(shlex.quote(str(a)) for a in argv) + " 2>/dev/null"
    status, shown = run_in_terminal(["sh", "-c", command], columns=COLUMNS, cwd=tmp_path, env=env)
    assert status == 1, shown
    lines = shown.rstrip("\n").splitlines()
    assert all(cell_len(line) <= COLUMNS for line in lines), shown
    # the same words in the same order: wrapped between words, never inside one
    assert shown.split() == plain.split(), shown
    assert "(summed over" in shown and not any(line.strip() == "s)" for line in lines)
    assert len(lines) > len(plain.splitlines())
