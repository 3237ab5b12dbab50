"""Bugcase 31 in the app (issue 10): two long system prompts that differ after character
190 are shown around the first differing character, with its position, at any width, in
the detail pane under the rows and in the step view. Reads ../shared/real (skipped where
absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.step import StepScreen
from support.pilot import press, screen_text, settle, sync


def _shows_the_difference(text: str) -> None:
    flat = " ".join(text.split())  # a narrow screen wraps the line
    assert "args $.system at character 192:" in flat, text
    assert 'within 24 hours."' in flat and 'within 48 hours."' in flat, text


@pytest.mark.parametrize("size", [(50, 30), (80, 24), (160, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
@sync
async def test_case_31_long_value_shows_where_it_differs_at_any_width(
    real: Path, size: tuple[int, int]
) -> None:
    folder = real / "bugcases" / "31_long_value_differs_late"
    app = CassetteApp(
        open_cassette(folder / "a.jsonl"), open_cassette(folder / "b.jsonl"), theme="ansi-dark"
    )
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        _shows_the_difference(screen_text(app))  # the detail pane under the rows
        await press(pilot, "enter")
        assert isinstance(app.screen, StepScreen)
        _shows_the_difference(screen_text(app))


def test_app_detail_shows_long_values_around_the_difference() -> None:
    from cassette_tui.core.diff.model import Change, DriftItem
    from cassette_tui.tui.text.detail import Limits, drift_lines

    base = "x" * 300
    item = DriftItem("$.s", base + "A tail", base + "B tail", Change.VALUE_CHANGED, "args")
    text = drift_lines([item], Limits(), {}).plain
    assert "at character 301:" in text and "A tail" in text and "B tail" in text
