"""r, t and R on a pair of runs picked from a tau-bench file (``FILE#task=...,trial=...``):
the replay and the gate serve the run to the real demo agent as a cassette (they said "no
such file"); R proposes a new file in the current folder, never beside the source."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.replay import ReplayScreen
from cassette_tui.tui.screens.rerecord import RerecordScreen
from support.imported import tau_results
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import press, screen_text, settle, sync, wait_until

SIZE = (80, 24)


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).replace("│", " ").split())


@pytest.fixture
def pair_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CassetteApp:
    data = tmp_path / "data"
    data.mkdir()
    src = tau_results(data)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    return CassetteApp(
        open_cassette(f"{src}#task=retry,trial=1"),
        open_cassette(f"{src}#task=retry,trial=0"),
        agent=AgentCommand.parse(agent_cmd(script=DEMO_AGENT)),
    )


@sync
async def test_r_replays_a_run_of_a_tau_bench_file(pair_app: CassetteApp) -> None:
    app = pair_app
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay screen")
        screen = app.screen
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "replay")
        text = flat(app)
        assert "no such file" not in text
        assert "result failed (exit 1)" in text and "7 hits · 0 misses" in text
        assert "served a tau-bench run, written as a cassette for the agent" in text


@sync
async def test_t_gates_a_run_of_a_tau_bench_file(pair_app: CassetteApp) -> None:
    app = pair_app
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen)
        await pilot.press("backspace", "backspace", "2", "enter")
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        await settle(pilot)
        assert screen.result is not None and screen.result.verdict == "deterministic"
        assert screen.result.runs == 2 and screen.result.passed == 0


@sync
async def test_R_on_an_imported_run_writes_in_the_current_folder(
    pair_app: CassetteApp, tmp_path: Path
) -> None:
    app = pair_app
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen) and screen.state == "confirm"
        assert screen.target.parent == tmp_path / "here"
        assert screen.target.name.startswith("results.task-retry_trial-1.rerecord-")
        text = flat(app)
        assert "in the current folder, not beside A" in text and "tau-bench run" in text
        await press(pilot, "escape")
    assert list((tmp_path / "here").iterdir()) == []
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["results.json"]
