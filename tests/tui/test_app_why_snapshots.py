"""SVG snapshots of bisect and swap (issue 28): the bisect screen's report, and the pair
view with the pass rate of two swaps beside their rows. The agent is the bisect tests'
agent run as a real subprocess, written with a relative script and ``python3`` found on
PATH (this interpreter's folder first), so it reads the same in every checkout; the
hybrids' folder is given a fixed name (it is named after the time), and the toasts are
cleared before the last paint (they would stay or go by timing)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens import bisect as bisect_screen
from cassette_tui.tui.screens.bisect import BisectScreen
from cassette_tui.tui.screens.pair import PairScreen
from support.factory import write_cassette
from support.paths import ROOT
from support.pilot import press, settle, wait_until
from textual.pilot import Pilot

SCRIPT = "tests/support/agents/bisect_agent.py"


@pytest.fixture
def python3_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python3`` on PATH is this interpreter's (the venv's) python3."""
    here = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{here}{os.pathsep}{os.environ.get('PATH', '')}")


def app_on(folder: Path, steps: int, needs: str) -> CassetteApp:
    def run(state: str) -> list[dict]:
        return [{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": state}}
                for i in range(1, steps + 1)]  # fmt: skip

    a = open_cassette(str(write_cassette(folder / "fail.jsonl", *run("bad"))))
    b = open_cassette(str(write_cassette(folder / "pass.jsonl", *run("good"))))
    template = f"python3 {SCRIPT} --steps {steps} --needs {needs}"
    agent = AgentCommand.parse(template, cwd=ROOT)
    return CassetteApp(a, b, align="seq", theme="ansi-dark", agent=agent)


def test_snapshot_bisect_result(
    snap_compare, tmp_path: Path, python3_on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bisect_screen, "RUNS", 1)
    monkeypatch.setattr(
        bisect_screen, "out_folder", lambda failing: failing.parent / "bisect-20261204T000000Z"
    )
    app = app_on(tmp_path, 6, "2,5")

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await press(pilot, "l", "b")
        screen = pilot.app.screen
        assert isinstance(screen, BisectScreen)
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "bisect")
        pilot.app.clear_notifications()
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_pair_view_with_two_swaps(
    snap_compare, tmp_path: Path, python3_on_path: None
) -> None:
    app = app_on(tmp_path, 5, "3")

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, PairScreen)
        await press(pilot, "t", "backspace", "backspace", "2", "enter")  # the gate's N: 2
        await wait_until(pilot, lambda: pilot.app.session.loop.gate is not None, "the gate")
        await press(pilot, "q", "g", "j", "s", "j", "s")

        def done() -> bool:
            return len(screen.swaps) == 2 and not any(m.running for m in screen.swaps.values())

        await wait_until(pilot, done, "both swaps")
        pilot.app.clear_notifications()
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)
