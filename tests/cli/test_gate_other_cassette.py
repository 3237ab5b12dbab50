"""Issue 29: a run whose agent replayed another cassette than the one served (it set
``CASSETTE_PATH`` itself) is no clean replay of this one: the gate says so, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import SAMPLES, SCRIPT

AGENT = f"""
import os, runpy
os.environ["CASSETTE_PATH"] = {str(SAMPLES / "fix.jsonl")!r}
runpy.run_path({str(SAMPLES / "agent.py")!r}, run_name="__main__")
"""


def test_a_run_that_replayed_another_cassette_is_unclean(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    done = subprocess.run(
        [str(SCRIPT), "gate", str(SAMPLES / "fail.jsonl"), "--agent",
         f"{sys.executable} {agent}", "--runs", "2"],
        capture_output=True, text=True, timeout=300, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "verdict unclean_replay" in done.stdout
    assert "replayed another cassette" in done.stdout and "fix.jsonl" in done.stdout
