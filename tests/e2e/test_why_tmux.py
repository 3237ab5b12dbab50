"""End to end: bisect and swap by keyboard in the installed ``cassette-tui``, in a real
terminal (tmux, 80x24, ``TERM=vt100`` and with ``NO_COLOR``), on the demo agent.

``fail.jsonl`` and ``fix.jsonl`` are copied to a fresh folder with the demo agent beside
them: ``l`` then ``b`` bisects A against B (the answer, the hybrids kept beside A), enter
opens the minimal hybrid against B and q comes back; escape goes back to the main view,
where ``f`` then ``s`` gates A with B's answer at the first divergence and the pass rate
shows beside that row. Assertions read ``capture-pane`` (file names, never full paths),
polling each screen up to a deadline; no fixed sleeps.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from support.loop import DEMO_AGENT
from support.paths import SAMPLES, SCRIPT
from support.tmux import TERMINALS, Tmux

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def words(screen: str) -> str:
    """The screen's words, one space apart (column padding and wraps taken out)."""
    return " ".join(screen.replace("│", " ").split())


@pytest.mark.parametrize("terminal", ["vt100", "NO_COLOR"])
def test_bisect_then_swap_by_keyboard(tmux: Tmux, tmp_path: Path, terminal: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(SAMPLES / name, work / name)
    shutil.copy(DEMO_AGENT, work / "agent.py")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    tmux.start(
        str(SCRIPT), "fail.jsonl", "fix.jsonl", "--agent", "python agent.py",
        env={**TERMINALS[terminal], "PATH": path}, cwd=work,
    )  # fmt: skip
    tmux.wait_for(lambda s: "first divergence" in s and "findings:" in s, "the main screen")

    # Bisect: from the loop panel, to the answer
    tmux.keys("l")
    tmux.wait_for(lambda s: "b Bisect" in s, "the loop panel's bisect key")
    tmux.keys("b")
    screen = tmux.wait_for(
        lambda s: "1 of 1 differing response suffices: A seq 5 search_docs" in words(s),
        "the bisect's answer",
    )
    text = words(screen)
    assert "Bisect A fail.jsonl (failing) B fix.jsonl (passing)" in text
    assert "none of A's answers (B as recorded)" in text and "minimal" in text
    (folder,) = work.glob("bisect-*")
    assert (folder / "minimal.jsonl").exists()
    assert f"hybrids in {folder.name}/ beside A" in text
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "A hybrid minimal.jsonl" in s and "q Back" in s, "hybrid vs B")
    tmux.keys("q")
    tmux.wait_for(lambda s: "b Again" in s, "the bisect screen again")
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "first divergence" in s and "findings:" in s, "the main screen")

    # Swap: the answer bisect names (A seq 5, the search) answered as B answered it, 20
    # offline replays; by key (auto's choice for the sample) the first divergence is A's
    # extra retry, with no B answer, and n walks past the two others to that row
    tmux.keys("f", "n", "n", "n", "s")
    screen = tmux.wait_for(lambda s: "/20 pass" in s, "the swap's pass rate beside the row")
    row = next(line for line in screen.splitlines() if "/20 pass" in line)
    assert "⇄ " in row
    assert "with B's answer (B seq" in words(screen)  # the detail pane says it in words
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", "")
    assert (work / "fail.jsonl").read_bytes() == (SAMPLES / "fail.jsonl").read_bytes()
