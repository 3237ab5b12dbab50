"""The debug loop on one cassette alone (``cassette-tui fail.jsonl --agent CMD``): the same
keys as the main screen act on the one cassette, with the demo agent as a real subprocess:
r replays it, t gates it, p pins the selected entry, R re-records it and opens it against
the new recording, l shows every stage (Diff needs two files); without an agent, r, t and
R say how to configure one."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.screens.no_agent import NoAgentScreen
from cassette_tui.tui.screens.pin import PinScreen
from cassette_tui.tui.screens.replay import ReplayScreen
from cassette_tui.tui.screens.rerecord import RerecordedPairScreen, RerecordScreen
from cassette_tui.tui.screens.single import SingleScreen
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import loop_text, press, screen_text, settle, sync, wait_until

SIZE = (80, 24)
#: how long a real agent run may take on a loaded machine
RUN_DEADLINE = 60.0


@pytest.fixture
def workdir(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fail.jsonl copied into a fresh working folder, the current folder (pins and the
    re-recording land there)."""
    shutil.copy(samples / "fail.jsonl", tmp_path / "fail.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def single_app(folder: Path, agent: bool = True) -> CassetteApp:
    command = AgentCommand.parse(agent_cmd(script=DEMO_AGENT)) if agent else None
    problem = None if agent else "no agent command: pass --agent CMD"
    return CassetteApp(open_cassette(folder / "fail.jsonl"), agent=command, agent_problem=problem)


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).split())


async def panel(pilot) -> str:
    """The loop panel's text (l), then back."""
    await press(pilot, "l")
    assert isinstance(pilot.app.screen, LoopScreen)
    text = loop_text(pilot.app)  # the whole panel: how far it reaches depends on paths
    await press(pilot, "escape")
    assert isinstance(pilot.app.screen, SingleScreen)
    return text


@sync
async def test_r_and_t_replay_and_gate_the_one_cassette(workdir: Path) -> None:
    app = single_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        assert "l Loop" in screen_text(app).splitlines()[-1]  # the footer names the loop
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
        replay = app.screen
        await wait_until(pilot, lambda: replay.result is not None and not replay.running, "its end")
        text = flat(app)
        assert "replay fail.jsonl" in text and "result failed (exit 1) in" in text
        assert "calls 7: 7 hits" in text
        assert app.session.loop.replay is replay.result
        await press(pilot, "escape")
        assert isinstance(app.screen, SingleScreen)
        await press(pilot, "t")
        gate = app.screen
        assert isinstance(gate, GateScreen)
        await pilot.press("backspace", "backspace", "2", "enter")
        await wait_until(pilot, lambda: gate.result is not None and not gate.running, "the gate")
        await settle(pilot)
        assert "verdict deterministic: 0/2 passed (0%)" in flat(app)
        await press(pilot, "escape")
        text = await panel(pilot)
        assert "Replay ✗ failed" in text and "Gate 0/2 ✓" in text
        assert "Diff needs two files" in text and "cassette-tui fail.jsonl OTHER.jsonl" in text
        assert "no agent" not in text


@sync
async def test_p_pins_the_selected_entry(workdir: Path) -> None:
    app = single_app(workdir, agent=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "down", "p")  # seq 2
        assert isinstance(app.screen, PinScreen)
        await press(pilot, "enter")
        assert isinstance(app.screen, SingleScreen)
        (pinned,) = app.session.loop.pins
        (entry,) = load(pinned)
        assert entry.extra["pinned"]["seq"] == 2 and entry.tool == "search_docs"
        assert pinned.parent.name == "fixtures"
        assert "Pin 1 fixture" in await panel(pilot)


@sync
async def test_R_re_records_the_one_cassette_then_opens_it_against_the_new_file(
    workdir: Path,
) -> None:
    app = single_app(workdir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen) and screen.state == "confirm"
        target = screen.target
        assert target.parent == workdir and target.name.startswith("fail.rerecord-")
        await press(pilot, "y")
        deadline = time.monotonic() + RUN_DEADLINE
        while screen.state == "running" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await settle(pilot)
        assert screen.state == "done", screen_text(app)
        assert len(load(target)) == 4
        await press(pilot, "enter")
        pair = app.screen
        assert isinstance(pair, RerecordedPairScreen)
        a, b = pair.session.pair()
        assert a is app.session.a and b.path == target.resolve()
        assert "Re-record ✓ 4" in flat(app)
        await press(pilot, "q")
        assert isinstance(app.screen, SingleScreen)
        assert "Re-record ✓ 4 calls" in await panel(pilot)


@pytest.mark.parametrize("key", ["r", "t"])
@sync
async def test_without_an_agent_r_and_t_say_how_to_configure_one(workdir: Path, key: str) -> None:
    app = single_app(workdir, agent=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, key)
        assert isinstance(app.screen, NoAgentScreen)
        assert "--agent" in flat(app)
        await press(pilot, "q")
        assert isinstance(app.screen, SingleScreen)
        await press(pilot, "R")
        assert isinstance(app.screen, RerecordScreen)
        assert "--agent" in flat(app)
