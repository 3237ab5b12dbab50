"""A huge ``--runs`` is refused before anything runs (it once filled memory and was killed),
for every command that gates: gate, bisect, minimise."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.run import cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_cassettes"


@pytest.mark.parametrize("command", [
    ["gate", str(SAMPLES / "fail.jsonl")],
    ["bisect", str(SAMPLES / "fail.jsonl"), str(SAMPLES / "fix.jsonl")],
    ["minimise", str(SAMPLES / "fail.jsonl")],
])  # fmt: skip
def test_a_huge_runs_is_refused_before_any_run(command: list[str], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    agent = f"touch {marker}"
    result = cli(*command, "--agent", agent, "--runs", "100000000")
    assert result.returncode == 2, result.stderr
    assert "--runs" in result.stderr and "1<=x<=100000" in result.stderr, result.stderr
    assert not marker.exists()
