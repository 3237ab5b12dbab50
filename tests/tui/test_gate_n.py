"""The gate's N (t, then N typed over the 20): a 0, or an N over the most the screen
starts, is refused with the reason beside the field (never silently), the field keeps the
focus and what was typed so that the user can fix it; a fifth digit is typed, not dropped;
a fixed N starts the gate (the demo agent as a real subprocess)."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.gate import MAX_RUNS, GateScreen, runs_problem
from support.loop import DEMO_AGENT, agent_cmd
from support.pilot import press, screen_text, settle, sync, wait_until

SIZE = (80, 24)


def test_runs_problem_says_why_n_cannot_start_a_gate() -> None:
    assert runs_problem("20") is None and runs_problem(str(MAX_RUNS)) is None
    assert runs_problem("1") is None
    assert runs_problem("0") == f"N must be between 1 and {MAX_RUNS}"
    assert runs_problem(str(MAX_RUNS + 1)) == f"N must be between 1 and {MAX_RUNS}"
    assert runs_problem("123456") == f"N must be between 1 and {MAX_RUNS}"
    assert runs_problem("") == f"type N, from 1 to {MAX_RUNS}"


def hint(app: CassetteApp) -> str:
    line = next(x for x in screen_text(app).splitlines() if x.startswith(" runs "))
    return " ".join(line.split())


@sync
async def test_a_bad_n_is_refused_with_its_reason_and_can_be_fixed(samples: Path) -> None:
    a = open_cassette(samples / "fail.jsonl")
    app = CassetteApp(a, agent=AgentCommand.parse(agent_cmd(script=DEMO_AGENT)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "t")
        screen = app.screen
        assert isinstance(screen, GateScreen)
        field = screen.runs_input
        assert "enter starts · escape leaves" in hint(app)
        await press(pilot, "backspace", "backspace", "0", "enter")
        # nothing ran, and the screen says why beside the field, which keeps the focus
        assert app.screen is screen and not screen.running and screen.result is None
        assert field.has_focus and field.value == "0"
        assert f"N must be between 1 and {MAX_RUNS} · fix N, then enter" in hint(app)
        # more digits than the most: typed (never dropped), and said as they are typed
        await press(pilot, "backspace", "1", "2", "3", "4", "5")
        assert field.value == "12345"
        assert f"N must be between 1 and {MAX_RUNS}" in hint(app)
        await press(pilot, "enter")
        assert not screen.running and screen.result is None and field.has_focus
        # fixed: the hint says what enter does again, and enter starts the gate
        for _ in range(5):
            await press(pilot, "backspace")
        await press(pilot, "2")
        assert "enter starts · escape leaves" in hint(app)
        assert "N must be" not in hint(app)
        await press(pilot, "enter")
        await wait_until(pilot, lambda: screen.result is not None and not screen.running, "gate")
        await settle(pilot)
        assert screen.result is not None and screen.result.runs_result.requested == 2
        assert "verdict deterministic: 0/2 passed" in " ".join(screen_text(app).split())
