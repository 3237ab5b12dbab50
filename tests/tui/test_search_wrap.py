"""Search wraps around as less and vim do: ``/`` and ``n`` past the last row go on from the
top, ``N`` past the first from the bottom, and the screen says "wrapped"; a term found
nowhere says so without "below" or "above"."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.steps import search_order
from support.pilot import notes, press, settle, sync

SIZE = (80, 24)


def test_search_order_visits_every_row_once_and_wraps() -> None:
    assert list(search_order(4, 7, 1)) == [
        (5, False),
        (6, False),
        (0, True),
        (1, True),
        (2, True),
        (3, True),
        (4, True),
    ]
    assert list(search_order(1, 4, -1)) == [(0, False), (3, True), (2, True), (1, True)]
    assert [i for i, _ in search_order(2, 4, 1, include_current=True)] == [2, 3, 0, 1]
    assert list(search_order(0, 0, 1)) == []
    for cursor in range(5):
        for direction in (1, -1):
            assert sorted(i for i, _ in search_order(cursor, 5, direction)) == list(range(5))


async def search(pilot, term: str) -> None:
    await press(pilot, "slash")
    await pilot.press(*term, "enter")
    await settle(pilot)


@sync
async def test_search_from_row_5_wraps_to_the_429s_above(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        steps = app.screen.steps
        await press(pilot, "g", "down", "down", "down", "down")
        assert steps.cursor == 4  # row 5: rows 1-4 hold the 429s
        await search(pilot, "429")
        assert steps.cursor == 0
        assert "search wrapped to the top: 429" in notes(app)
        assert "no match" not in notes(app)
        await press(pilot, "n")
        assert steps.cursor == 1
        await press(pilot, "g", "N")  # before the first row: on from the bottom
        assert steps.cursor == 3
        assert "search wrapped to the bottom: 429" in notes(app)
        await search(pilot, "no such text")
        assert steps.cursor == 3 and "no match for: no such text" in notes(app)


@sync
async def test_n_wraps_on_one_cassette_too(samples: Path) -> None:
    app = CassetteApp(open_cassette(samples / "fail.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        steps = app.screen.steps
        await press(pilot, "G")
        await search(pilot, "429")
        assert steps.cursor == 0 and "search wrapped to the top: 429" in notes(app)


@sync
async def test_a_running_search_says_how_far_it_got_and_escape_stops_it(
    samples: Path, monkeypatch
) -> None:
    """The columns line shows a search's progress (``SearchProgress``, posted by the
    worker as it reads the files) and that escape stops it; escape forgets the search."""
    from cassette_tui.tui.messages import SearchProgress
    from cassette_tui.tui.text import search as row_search

    monkeypatch.setattr(row_search, "NEAR_ROWS", 1)  # the files are read after one row
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        start = screen.steps.cursor
        expected = next(i for i, _ in search_order(start, len(screen.model), 1)
                        if screen.model.matches(i, "429"))  # fmt: skip
        await search(pilot, "429")  # through the files: found as row by row
        assert screen.steps.cursor == expected != start
        screen.post_message(SearchProgress(screen.model, "429", 0.42))
        await settle(pilot)
        columns = str(screen.query_one("#columns").render())
        assert "searching… 42% · escape stops" in columns
        await press(pilot, "escape")
        columns = str(screen.query_one("#columns").render())
        assert screen.search_term == "" and "searching" not in columns
