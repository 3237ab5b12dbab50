"""End to end: keys that arrive in one burst, as over SSH, edit the installed
``cassette-tui``'s text inputs in the order they were typed (tmux, 80x24).

Each burst is ONE ``send-keys``, so tmux writes it to the app in one go and the app reads
it in one chunk: an editing key handled by a binding (backspace, left) must be applied
before the printable key typed after it (``tui/widgets/text_input.py`` says why Textual's
``Input`` alone did not). Asserts on what ``capture-pane`` shows, polling up to a
deadline.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest
from support.loop import DEMO_AGENT
from support.paths import SAMPLES, SCRIPT
from support.tmux import Tmux

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def start(tmux: Tmux, tmp_path: Path) -> str:
    """The app on A against B with the demo agent (so the gate can be opened)."""
    work = tmp_path / "w"
    work.mkdir()
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(SAMPLES / name, work / name)
    agent = shlex.join([sys.executable, str(DEMO_AGENT)])
    tmux.start(str(SCRIPT), "fail.jsonl", "fix.jsonl", "--agent", agent, cwd=work)
    return tmux.wait_for(
        lambda s: "first divergence" in s and "Re-record –" in s, "the main screen"
    )


def test_the_gates_n_takes_backspace_backspace_5_in_one_burst(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path)
    tmux.keys("t")
    tmux.wait_for(lambda s: "runs  20 " in s and "enter starts" in s, "the gate asking for N")
    tmux.keys("BSpace", "BSpace", "5")
    screen = tmux.wait_for(lambda s: "runs  5 " in s, "N = 5 (not 2: the 5 deleted)")
    assert "runs  2 " not in screen
    # the screen's keys still work from the input: q leaves the gate
    tmux.keys("q")
    tmux.wait_for(lambda s: "first divergence" in s and "runs  " not in s, "the main screen")


def test_the_search_bar_takes_a_burst_with_backspaces(tmux: Tmux, tmp_path: Path) -> None:
    start(tmux, tmp_path)
    # "/" opens the bar before the keys behind it; then edits, all in one send-keys
    tmux.keys("/", "w", "e", "x", "BSpace", "a", "t", "h", "Left", "Left", "BSpace", "x", "r")
    # weath, the cursor two left, the a deleted, xr typed there
    tmux.wait_for(lambda s: "wexrth" in s, "the search bar showing wexrth")
    # a second burst: end, backspaces, letters
    tmux.keys("End", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "e", "a", "t", "h")
    tmux.wait_for(lambda s: "weath" in s, "the search bar showing weath")
    # backspaces then a (bracketed) paste, in one tmux command: the paste lands after them
    tmux.run("set-buffer", "-b", "e2e", "er")
    tmux.run(
        "send-keys",
        "-t",
        "e2e",
        "BSpace",
        "BSpace",
        ";",
        "paste-buffer",
        "-p",
        "-b",
        "e2e",
        "-t",
        "e2e",
    )
    screen = tmux.wait_for(lambda s: "weaer" in s, "the search bar showing weaer")
    assert "weather" not in screen
    tmux.keys("BSpace", "BSpace", "t", "h")
    tmux.wait_for(lambda s: "weath" in s, "the search bar showing weath again")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "search: weath" in s, "the search applied")
