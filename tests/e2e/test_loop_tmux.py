"""End to end: the debug loop walked by keyboard in the installed ``cassette-tui``, in a
real terminal (tmux, 80x24), on the demo agent.

``fail.jsonl`` and ``fix.jsonl`` are copied to a fresh folder, the app runs there with
``--agent`` the demo agent (``sample_cassettes/agent.py``, a real subprocess), and the
test presses what a person would press: ``t`` gates A over 5 offline replays (the verdict,
then the loop bar), ``f`` then ``p`` pins the first divergence (the fixture file is read
back with ``core.cassette.load``), ``R`` re-records A live into a new file next to it and
opens A against it, ``q`` comes back to A against B, ``q`` quits. It
asserts on what ``capture-pane`` shows (file names, never full paths, so the folder's
length does not matter), polling each screen up to a deadline; no fixed sleeps.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from support.loop import DEMO_AGENT
from support.paths import SAMPLES, SCRIPT
from support.tmux import TERMINALS, Tmux

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason=f"console script not installed: {SCRIPT}"),
]


def bar(screen: str) -> str:
    """The loop bar's line."""
    return next((line.strip() for line in screen.splitlines() if "Record " in line), "")


def rows(screen: str) -> str:
    """The screen's words, one space apart (the box, column padding and wraps taken out)."""
    return " ".join(screen.replace("│", " ").split())


@pytest.mark.parametrize("terminal", ["256-colour", "NO_COLOR"])
def test_the_loop_by_keyboard_gate_pin_re_record(tmux: Tmux, tmp_path: Path, terminal: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(SAMPLES / name, work / name)
    # the demo agent copied beside the cassettes and run by the venv's python found on
    # PATH: the command the screens show ("python agent.py") is as short in a checkout at
    # any path
    shutil.copy(DEMO_AGENT, work / "agent.py")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    tmux.start(
        str(SCRIPT), "fail.jsonl", "fix.jsonl", "--agent", "python agent.py",
        env={**TERMINALS[terminal], "PATH": path}, cwd=work,
    )  # fmt: skip
    screen = tmux.wait_for(
        lambda s: "first divergence" in s and "findings:" in s and "Re-record –" in s,
        "the main screen with the loop bar",
    )
    assert "A fail.jsonl (7)" in screen and "B fix.jsonl (4)" in screen
    assert bar(screen).startswith("Record 7 · Replay – · Gate – · Diff parts at row")

    # Gate: A replayed 5 times with the network off, the verdict, back to the main screen
    tmux.keys("t")
    tmux.wait_for(lambda s: "runs  20 " in s and "enter starts" in s, "the gate asking for N")
    # N typed over the prefilled 20 in one burst, as over SSH (tests/e2e/test_keys_tmux.py)
    tmux.keys("BSpace", "BSpace", "5")
    tmux.wait_for(lambda s: "runs  5 " in s, "N = 5")
    tmux.keys("Enter")
    screen = tmux.wait_for(
        lambda s: "verdict deterministic: 0/5 passed (0%)" in rows(s), "the gate's verdict"
    )
    assert "network: off" in screen and "5 failed" in screen
    tmux.keys("q")
    screen = tmux.wait_for(lambda s: "Gate 0/5 ✓" in bar(s), "the gate in the loop bar")
    assert "B fix.jsonl (4)" in screen

    # Pin: the first divergence, previewed, then written
    tmux.keys("f", "p")
    screen = tmux.wait_for(lambda s: "enter: write the fixture" in s, "the pin preview")
    assert "Pin seq" in screen and "fail.jsonl" in screen
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: "Pin 1 ·" in bar(s), "the pin in the loop bar")
    fixtures = sorted((work / "fixtures").glob("*.jsonl"))
    assert len(fixtures) == 1
    fixture = load(fixtures[0])
    assert len(fixture) == 1 and fixture[0].seq == 1 and "pinned" in fixture[0].extra

    # Re-record: asks first (the command, LIVE, the new file), then runs the agent
    tmux.keys("R")
    screen = tmux.wait_for(
        lambda s: "enter/y: run the agent live" in s and "Run live" in s,
        "the re-record confirmation and its keys",
    )
    text = rows(screen)
    assert "LIVE: the network is on" in text and "agent.py" in text
    assert "writes fail.rerecord-" in text
    assert not list(work.glob("fail.rerecord-*")), "nothing written before the confirmation"
    tmux.keys("Enter")
    screen = tmux.wait_for(
        lambda s: "Re-record A: done" in s and "enter: open A against" in s,
        "the re-recording's result",
    )
    (new,) = work.glob("fail.rerecord-*.jsonl")
    assert len(load(new)) == 4
    text = rows(screen)
    assert f"record {new.name}: 4 entries" in text and "passed (exit 0)" in text

    # old against new, in the main view
    tmux.keys("Enter")
    screen = tmux.wait_for(
        lambda s: f"B {new.name} (4)" in s and "first divergence" in s and "q Back" in s,
        "A against the new recording (q goes back)",
    )
    assert "A fail.jsonl (7)" in screen
    assert "Re-record ✓ 4" in bar(screen) and "Pin 1 ·" in bar(screen)

    # back to A against B, the loop's results still in the bar; then quit
    tmux.keys("q")
    screen = tmux.wait_for(lambda s: "B fix.jsonl (4)" in s, "A against B again")
    assert "Re-record ✓ 4" in bar(screen)
    tmux.keys("q")
    assert tmux.wait_exit() in ("0", "")
    assert (work / "fail.jsonl").read_bytes() == (SAMPLES / "fail.jsonl").read_bytes()
