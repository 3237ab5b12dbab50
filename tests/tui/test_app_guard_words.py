"""The app's replay and gate screens name the socket guard as the commands do: it turns
the network off for the agent's Python only (``GUARD_WORDS``), what it does not cover
(``not covered: ...``), and a program of the run that ran without it. The runs are real (the
demo agent under ``--isolation``'s default); the isolation shown is then set to the guard,
as the snapshots set it to netns, so the words do not depend on this machine."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop._isolation import GUARD_NOT_COVERED
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.replay import ReplayScreen
from cassette_tui.tui.text.replay import GUARD_WORDS, PARTIAL_WORDS
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import press, screen_text, settle, sync, wait_until

SIZE = (80, 24)


def flat(app: CassetteApp) -> str:
    return " ".join(screen_text(app).replace("│", " ").split())


def demo_app(samples: Path) -> CassetteApp:
    return CassetteApp(
        open_cassette(samples / "fail.jsonl"),
        open_cassette(samples / "fix.jsonl"),
        agent=AgentCommand.parse(agent_cmd(script=DEMO_AGENT)),
    )


@sync
async def test_the_replay_screen_says_the_guard_blocks_python_only(samples: Path) -> None:
    app = demo_app(samples)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), "replay screen")
        screen = app.screen
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "replay")
        result = screen.result
        assert result is not None
        result.run.isolation = "guard"
        result.runs_result.isolation = "guard"
        result.runs_result.not_covered = GUARD_NOT_COVERED
        screen.show_result(result)
        await settle(pilot)
        assert GUARD_WORDS in flat(app)
        assert "not covered: programs that are not Python" in flat(app)
        result.run.isolation = "guard (partial)"
        result.run.uncovered = [{"argv": ["curl", "-s", "http://x"], "why": "not Python", "pid": 1}]
        screen.show_result(result)
        await settle(pilot)
        assert PARTIAL_WORDS in flat(app)
        assert "ran without the guard: curl -s http://x (not Python)" in flat(app)


@sync
async def test_the_gate_screen_says_the_guard_blocks_python_only(samples: Path) -> None:
    app = demo_app(samples)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen)
        await pilot.press("backspace", "backspace", "2", "enter")
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        result = screen.result
        assert result is not None
        for run in result.runs_result.results:
            run.isolation = "guard"
        result.runs_result.isolation = "guard"
        result.runs_result.not_covered = GUARD_NOT_COVERED
        screen.show_result(result)
        await settle(pilot)
        assert GUARD_WORDS in flat(app)
        assert "not covered: programs that are not Python" in flat(app)
