"""The offline demo agent walks the debug loop through the environment contract: replaying
the failing cassette fails, the fixed one passes, and a re-recording matches the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cassette_tui.core import diff_cassettes, load
from support.paths import ROOT

AGENT = ROOT / "sample_cassettes" / "agent.py"


def run_agent(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, str(AGENT)],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )


def test_replaying_the_failing_cassette_reproduces_the_failure(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_agent(
        tmp_path,
        CASSETTE_MODE="replay",
        CASSETTE_PATH=str(ROOT / "sample_cassettes/fail.jsonl"),
        CASSETTE_REPORT=str(report),
    )
    assert done.returncode == 1, done.stderr
    assert "up to 10 times" in done.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["used"] == data["entries"] == 7
    assert data["unused_seqs"] == [] and data["misses"] == []
    assert data["repeats"][0]["calls"] == data["repeats"][0]["recorded"] == 5


def test_replaying_the_fix_passes_and_a_rerecording_matches_it(tmp_path: Path) -> None:
    fix = ROOT / "sample_cassettes/fix.jsonl"
    done = run_agent(tmp_path, CASSETTE_MODE="replay", CASSETTE_PATH=str(fix))
    assert done.returncode == 0, done.stderr
    recorded = tmp_path / "rerecord.jsonl"
    done = run_agent(tmp_path, CASSETTE_MODE="record", CASSETTE_PATH=str(recorded))
    assert done.returncode == 0, done.stderr
    assert diff_cassettes(load(fix), load(recorded)).is_same
