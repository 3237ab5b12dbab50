"""What the README's demo commands write into the checkout (``runs/``, ``fixtures/``:
recordings and pinned calls, which may hold secrets) is ignored by git at the repository
root, and only there."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.paths import ROOT


def _ignored(path: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "-q", path],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        pytest.skip(f"git check-ignore failed: {done.stderr.decode(errors='replace')}")
    return done.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_runs_and_fixtures_are_ignored_at_the_root_only() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip(f"{ROOT} is not a git checkout")
    assert _ignored("runs/fail.jsonl") and _ignored("fixtures/search_docs-0bde.jsonl")
    assert _ignored(".venv/bin/python")  # the existing entries are kept
    assert not _ignored("sample_cassettes/fix.jsonl")
    assert not _ignored("tests/support/fixtures/x.jsonl")
    assert not _ignored("tests/runs/x.jsonl")
