"""Fixtures are named by tool and args digest, so two calls with one key share a file: the
pin preview says what the fixture there holds (its source seq and date, and whether its
response differs from this one's) before enter replaces it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.pin import existing_fixture, plan_pin, write_pin
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.pin import PinScreen
from support.paths import SAMPLES
from support.pilot import press, screen_text, settle, sync
from textual.widgets import Static

FAIL = SAMPLES / "fail.jsonl"


def _text(app: CassetteApp) -> str:
    """The preview's prompt as its widget holds it (not as wrapped on the screen, which
    depends on the path's length), after checking it is on the screen."""
    prompt = str(app.screen.query_one("#pin-prompt", Static).render())
    assert prompt.split()[-1] in screen_text(app)
    return " ".join(prompt.split())


async def _pin_row(pilot, app: CassetteApp, row: int) -> str:
    """Put the cursor on ``row`` (0-based), press p and return the preview's text."""
    screen = app.screen
    assert isinstance(screen, PairScreen)
    screen.steps.cursor = row
    await press(pilot, "p")
    assert isinstance(app.screen, PinScreen)
    return _text(app)


@sync
async def test_pinning_the_200_after_the_429_says_what_replacing_loses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = CassetteApp(open_cassette(FAIL), open_cassette(SAMPLES / "fix.jsonl"))
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        # row 2: A seq 2, the 429 (rate_limited); written at once
        text = await _pin_row(pilot, app, 1)
        assert "seq 2 of" in screen_text(app)
        assert "enter: write the fixture" in text
        await press(pilot, "enter")
        (fixture,) = (tmp_path / "fixtures").iterdir()
        date = json.loads(fixture.read_text())["pinned"]["date"]
        # row 5: A seq 5, the 200 of the same key: same file, another response
        text = await _pin_row(pilot, app, 4)
        assert f"{fixture.name} exists already: it holds seq 2 of {FAIL}, pinned {date}" in text
        assert "with ANOTHER response than this one" in text, text
        await press(pilot, "enter")  # asks again, still saying what goes
        text = _text(app)
        assert "REPLACES it" in text and "it holds seq 2 of" in text
        await press(pilot, "escape")
        # row 3: A seq 3, another 429 with the same body: same response
        text = await _pin_row(pilot, app, 2)
        assert "it holds seq 2 of" in text and "with the same response as this one" in text
        await press(pilot, "escape")
    assert json.loads(fixture.read_text())["pinned"]["seq"] == 2  # nothing replaced


def test_existing_fixture_reads_provenance_and_compares_the_outcome(tmp_path: Path) -> None:
    cassette = open_cassette(FAIL)
    when = datetime(2026, 11, 30, 21, 2, 11, tzinfo=UTC)
    assert existing_fixture(plan_pin(cassette, 2, tmp_path)) is None
    write_pin(plan_pin(cassette, 2, tmp_path, now=when))
    old = existing_fixture(plan_pin(cassette, 5, tmp_path))
    assert old is not None
    assert (old.source, old.seq, old.date) == (str(FAIL), 2, "2026-11-30T21:02:11Z")
    assert old.same_outcome is False and old.problem is None
    same = existing_fixture(plan_pin(cassette, 4, tmp_path))
    assert same is not None and same.same_outcome is True
    # a file there that is no fixture: said, not a crash
    plan = plan_pin(cassette, 6, tmp_path)
    plan.target.write_text("not json\n")
    broken = existing_fixture(plan)
    assert broken is not None and broken.problem is not None and str(plan.target) in broken.problem
