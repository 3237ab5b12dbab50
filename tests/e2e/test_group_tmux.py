"""End to end: ``cassette-tui FOLDER`` in a real terminal (tmux, 80x24) opens the tree of
the folder's runs grouped by where they part; ``d`` opens a failure beside a pass, ``q``
comes back to the tree, ``q`` quits with status 0 and the terminal given back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.grouped_runs import write_runs_folder
from support.paths import SCRIPT
from support.tmux import Tmux

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def test_a_folder_of_runs_opens_on_their_tree(tmux: Tmux, tmp_path: Path) -> None:
    write_runs_folder(tmp_path / "runs")
    tmux.start(str(SCRIPT), "runs", cwd=tmp_path, env={"TERM": "screen-256color"})
    screen = tmux.wait_for(lambda s: "? Keys" in s and "steps 1-2" in s, "the tree, its footer")
    assert "where runs part runs/ · 6 runs 3✓ 3✗" in screen
    assert "3 of 3 failures take branch B (retry)" in screen
    assert "⑂ parts [6 runs 3✓ 3✗] s1-2 search_docs" in screen
    assert "⏎ Open  d Fail/pass  f Split  q Quit" in screen  # the footer fits 80 columns
    tmux.keys("d")
    screen = tmux.wait_for(lambda s: "first divergence" in s, "the pair view")
    assert "A run-02.jsonl ✗  B run-01.jsonl ✓" in screen
    tmux.keys("q")
    tmux.wait_for(lambda s: "failures take branch" in s, "the tree again")
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", ""), "the app exited with an error"
