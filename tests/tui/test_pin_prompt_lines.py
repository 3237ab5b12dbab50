"""The pin preview's own text uses real line breaks (only cassette data is escaped): the
second enter on an existing fixture says what it holds on one line and that enter again
replaces it on the next, with no ``␊`` stand-in between them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.pin import plan_pin, write_pin
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pin import PinScreen
from cassette_tui.tui.text.pin import pin_prompt
from support.paths import SAMPLES
from support.pilot import press, screen_text, settle, sync
from textual.widgets import Static

FAIL = SAMPLES / "fail.jsonl"


def test_the_armed_prompt_breaks_its_lines_for_real(tmp_path: Path) -> None:
    cassette = open_cassette(FAIL)
    write_pin(plan_pin(cassette, 2, tmp_path))
    plan = plan_pin(cassette, 5, tmp_path)  # the same key: the same file
    lines = pin_prompt(plan, armed=True).plain.split("\n")
    assert "␊" not in pin_prompt(plan, armed=True).plain
    assert lines[0].startswith(f"! {plan.target.name}: it holds seq 2 of ")
    assert lines[0].endswith("(same key: replacing loses it).")
    assert lines[1] == f"{plan.target.name} exists: enter again REPLACES it, escape keeps it"


@sync
async def test_the_second_enter_shows_two_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = CassetteApp(open_cassette(FAIL))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "p", "enter")  # seq 2, the 429: written
        await press(pilot, "down", "down", "down", "p")  # seq 5, the 200 of the same key
        assert isinstance(app.screen, PinScreen)
        await press(pilot, "enter")
        assert "␊" not in screen_text(app)
        # the prompt as its widget holds it (not as wrapped, which depends on the path)
        prompt = str(app.screen.query_one("#pin-prompt", Static).render())
        name = app.screen.plan.target.name
        assert prompt.endswith(
            f"replacing loses it).\n{name} exists: enter again REPLACES it, escape keeps it"
        )
