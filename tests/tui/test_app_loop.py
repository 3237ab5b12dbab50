"""The debug loop bar on the main screen and its panel (l): each stage with what it found;
without an agent, Replay, Gate and Re-record say how to configure one; `open --agent`."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.commands.open_app import open_app
from cassette_tui.tui.screens.help import help_plain_text
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.pin import PinScreen
from click.testing import CliRunner
from support.pilot import press, screen_text, settle, sync

SIZE = (80, 24)


@pytest.fixture
def pair(samples: Path):
    return open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")


def bar(app: CassetteApp) -> str:
    line = next(x for x in screen_text(app).splitlines() if x.strip().startswith("Record "))
    return line.strip()


@sync
async def test_the_bar_says_what_each_stage_found(pair, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = app.screen.result.first_divergence
        assert bar(app) == (
            f"Record {len(pair[0])} · Replay ⊘ · Gate ⊘ · Diff parts at row {first + 1} · Pin – · "
            "Re-record ⊘"
        )
        await press(pilot, "p")
        assert isinstance(app.screen, PinScreen)
        await press(pilot, "enter")
        assert "Pin 1 ·" in bar(app)


@sync
async def test_without_an_agent_the_panel_says_how_to_configure_one(pair) -> None:
    problem = "no agent command: pass --agent CMD or set agent = ..."
    app = CassetteApp(*pair, agent_problem=problem)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert isinstance(app.screen, LoopScreen)
        text = " ".join(screen_text(app).split())
        for stage in ("Record", "Replay", "Gate", "Diff", "Pin", "Re-record"):
            assert f" {stage} " in text
        assert text.count("⊘ no agent configured") == 3
        assert "--agent CMD" in text and "[tool.cassette]" in text
        await press(pilot, "escape")
        assert isinstance(app.screen, PairScreen)


@sync
async def test_with_an_agent_the_stages_wait_to_run(pair) -> None:
    app = CassetteApp(*pair, agent=AgentCommand.parse("python agent.py {cassette}"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Replay – · Gate –" in bar(app) and "⊘" not in bar(app)
        await press(pilot, "l")
        assert "no agent" not in screen_text(app)


@sync
async def test_the_palette_and_help_list_the_loop(pair) -> None:
    app = CassetteApp(*pair)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        for key in "loop":
            await pilot.press(key)
        await settle(pilot)
        assert "main.loop" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, LoopScreen)
        await press(pilot, "l", "question_mark")
        help_text = help_plain_text(app)  # the whole help, as the help screen lays it out
        assert "main.loop" in help_text and "loop.back" in help_text


def test_open_rejects_a_bad_agent_before_the_terminal(samples: Path) -> None:
    result = CliRunner().invoke(
        open_app, [str(samples / "fail.jsonl"), "--agent", "python 'unclosed"]
    )
    assert result.exit_code == 2
    assert "--agent" in result.output and "unclosed" in result.output
