"""The replay and re-record screens: ``s`` toggles ``--strict`` on the replay's result
(recorded calls left unused fail it), and both screens show the agent's last lines of
stdout and stderr, where an agent says why it failed. A real agent as a subprocess."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.replay import ReplayScreen
from cassette_tui.tui.screens.rerecord import RerecordScreen
from support.loop import DEMO_AGENT, agent_cmd, loop_cassette
from support.pilot import press, screen_text, settle, sync, wait_until

#: tall enough that the whole report is in view
SIZE = (100, 60)
RUN_DEADLINE = 60.0


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).replace("│", " ").split())


async def replayed(pilot) -> ReplayScreen:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay screen")
    screen = app.screen
    await wait_until(pilot, lambda: screen.result is not None and not screen.running, "the replay")
    await settle(pilot)
    return screen


@sync
async def test_s_makes_unused_recordings_fail_the_replay(tmp_path: Path) -> None:
    cassette = open_cassette(loop_cassette(tmp_path))
    app = CassetteApp(cassette, cassette, agent=AgentCommand.parse(agent_cmd("pass")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        screen = await replayed(pilot)
        assert screen.result is not None and screen.result.clean
        assert "unused entries: seq 3, 4" in flat(app)
        assert "(--strict: the replay fails)" not in flat(app)
        await press(pilot, "s")
        assert not screen.result.clean and screen.result.strict
        assert "unused entries: seq 3, 4 (--strict: the replay fails)" in flat(app)
        await press(pilot, "escape")
        assert "Replay ✗ passed · 2 unused (--strict)" in flat(app)


@sync
async def test_a_failed_replay_shows_the_agents_last_stdout_lines(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, agent=AgentCommand.parse(agent_cmd(script=DEMO_AGENT)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await replayed(pilot)
        text = flat(app)
        assert "agent stdout (last lines):" in text
        assert "Retry budget: retry each failed request up to 10 times" in text


@pytest.fixture
def workdir(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("fail.jsonl", "fix.jsonl"):
        shutil.copy(samples / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@sync
async def test_a_rerecording_that_exits_1_says_so_and_shows_its_stdout(workdir: Path) -> None:
    # seed 1 draws the stale answer: the agent runs to its end and exits 1
    agent = agent_cmd("--flaky", "--seed", "1", script=DEMO_AGENT)
    app = CassetteApp(
        open_cassette(workdir / "fail.jsonl"),
        open_cassette(workdir / "fix.jsonl"),
        agent=AgentCommand.parse(agent),
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "R")
        screen = app.screen
        assert isinstance(screen, RerecordScreen)
        await press(pilot, "enter")
        deadline = time.monotonic() + RUN_DEADLINE
        while screen.state == "running" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await settle(pilot)
        result = app.session.loop.rerecord
        assert result is not None and result.run.status == "failed"
        text = flat(app)
        entries = len(result.cassette or ())
        assert f"recorded {entries} entries; the agent exited 1" in text
        assert "kept:" not in text
        assert "stdout (last lines)" in text and "up to 10 times, immediately" in text


@sync
async def test_help_lists_the_strict_key(samples: Path) -> None:
    from cassette_tui.tui.screens.help import help_plain_text

    a = open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, a, agent=AgentCommand.parse(agent_cmd(script=DEMO_AGENT)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = help_plain_text(app)
    assert "replay.strict" in text and "Toggle --strict" in " ".join(text.split())
