"""SVG snapshots of the replay and gate screens with a finished result (the demo agent run
as a real subprocess). What changes from run to run is set to fixed values in the result
before the last paint: durations, the runs folder and call-log paths (temporary
folders), the isolation (netns or the guard, by machine) and the stack frames of the
agent's stderr (absolute paths); the agent command is written with a relative script and
``python3`` found on PATH (this interpreter's folder first), so it reads the same in every
checkout."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.no_agent import NoAgentScreen
from cassette_tui.tui.screens.replay import MissScreen, ReplayScreen
from support.loop import miss_cassette
from support.paths import ROOT, SAMPLES
from support.pilot import settle, wait_until
from textual.pilot import Pilot

SIZE = (80, 24)
RUNS_DIR = Path("/tmp/cassette-runs")


@pytest.fixture
def python3_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python3`` on PATH is this interpreter's (the venv's) python3."""
    here = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{here}{os.pathsep}{os.environ.get('PATH', '')}")


def demo(*args: str) -> AgentCommand:
    template = " ".join(["python3", "sample_cassettes/agent.py", *args])
    return AgentCommand.parse(template, cwd=ROOT)


def fixed_runs(runs: list) -> None:
    for n, run in enumerate(runs):
        run.duration_s = 0.25 + n / 100
        run.isolation = "netns"
        if run.call_log is not None:
            run.call_log = RUNS_DIR / run.call_log.name
        run.stderr_tail = "\n".join(run.stderr_tail.splitlines()[-3:])


def test_snapshot_replay_screen_with_a_miss(
    snap_compare, tmp_path: Path, python3_on_path: None
) -> None:
    a = open_cassette(miss_cassette(SAMPLES, tmp_path))
    app = CassetteApp(a, open_cassette(SAMPLES / "fix.jsonl"), theme="ansi-dark", agent=demo())

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("r")
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "replay")
        result = screen.result
        assert result is not None
        fixed_runs(result.runs_result.results)
        result.runs_result = replace(result.runs_result, runs_dir=RUNS_DIR, isolation="netns")
        screen.show_result(result)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_gate_screen_flaky(snap_compare, python3_on_path: None) -> None:
    app = CassetteApp(
        open_cassette(SAMPLES / "fix.jsonl"),
        open_cassette(SAMPLES / "fail.jsonl"),
        theme="ansi-dark",
        agent=demo("--flaky", "--seed", "{run}"),
    )

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await pilot.press("backspace", "backspace", "3", "enter")
        screen = pilot.app.screen
        assert isinstance(screen, GateScreen)
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        result = screen.result
        assert result is not None
        fixed_runs(result.runs_result.results)
        result.runs_result = replace(result.runs_result, runs_dir=RUNS_DIR, isolation="netns")
        screen.show_result(result)
        await pilot.press("space")  # run 1 marked A
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_loop_panel_without_an_agent(snap_compare) -> None:
    """``l`` with no agent configured: every stage, and how to configure one."""
    app = CassetteApp(
        open_cassette(SAMPLES / "fail.jsonl"),
        open_cassette(SAMPLES / "fix.jsonl"),
        theme="ansi-dark",
    )

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_loop_panel_after_a_gate(snap_compare, python3_on_path: None) -> None:
    """``l`` after a 3-run gate of the flaky demo agent: the stages say what they found."""
    app = CassetteApp(
        open_cassette(SAMPLES / "fix.jsonl"),
        open_cassette(SAMPLES / "fail.jsonl"),
        theme="ansi-dark",
        agent=demo("--flaky", "--seed", "{run}"),
    )

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        await pilot.press("backspace", "backspace", "3", "enter")
        screen = pilot.app.screen
        assert isinstance(screen, GateScreen)
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_miss_screen(snap_compare, tmp_path: Path, python3_on_path: None) -> None:
    """enter on a replay's miss: its nearest recorded call, the differing path marked."""
    a = open_cassette(miss_cassette(SAMPLES, tmp_path))
    app = CassetteApp(a, open_cassette(SAMPLES / "fix.jsonl"), theme="ansi-dark", agent=demo())

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("r")
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "replay")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, MissScreen), "miss screen")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_gate_without_an_agent(snap_compare) -> None:
    """``t`` with no agent configured: how to configure one; nothing runs."""
    app = CassetteApp(
        open_cassette(SAMPLES / "fail.jsonl"),
        open_cassette(SAMPLES / "fix.jsonl"),
        theme="ansi-dark",
        agent_problem="no agent command: pass --agent CMD or set agent = ...",
    )

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(pilot.app.screen, NoAgentScreen)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
