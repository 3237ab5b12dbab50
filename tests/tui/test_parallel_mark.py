"""The ``⇉`` mark before a seq: the call ran at the same time as others (the recorder's
``batch`` field, issue 24), in the pair view, the single view and the help's legend."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.text.marks import PARALLEL, legend
from support.factory import entry, write_cassette
from support.pilot import press, screen_text, settle, sync

SIZE = (100, 24)


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    """A's three lookups ran in parallel and finished in order; B issued the same ones in
    another order and Oslo answered otherwise; the summary ran alone in both."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get_weather", {"city": "Lisbon"}, response=21, batch=1),
        entry(2, "get_weather", {"city": "Oslo"}, response=4, batch=1),
        entry(3, "get_weather", {"city": "Cairo"}, response=33, batch=1),
        entry(4, "summarize", {"n": 3}, response="ok"),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(3, "get_weather", {"city": "Oslo"}, response=5, batch=1),
        entry(1, "get_weather", {"city": "Cairo"}, response=33, batch=1),
        entry(2, "get_weather", {"city": "Lisbon"}, response=21, batch=1),
        entry(4, "summarize", {"n": 3}, response="ok"),
    )
    return a, b


@sync
async def test_overlapping_calls_are_marked_and_paired_side_by_side(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    app = CassetteApp(open_cassette(a), open_cassette(b), align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = screen_text(app).splitlines()
        oslo = next(x for x in lines if "⇉   2" in x and " ~ " in x)
        assert oslo.count("get_weather") == 2 and "⇉   3" in oslo  # A seq 2 beside B seq 3
        summary = next(x for x in lines if "summarize" in x)
        assert "⇉" not in summary and summary.count("    4") == 2
        assert not any(" < " in x or " > " in x for x in lines)  # nothing only in A or B
        # the app opens at the first divergence: Oslo, A seq 2 beside B seq 3
        assert "A seq 2 · B seq 3 · get_weather · ~ response drift · ⇉ parallel" in (
            screen_text(app)
        )
        await press(pilot, "down", "down")
        assert "A seq 4 · B seq 4 · summarize · = same" in screen_text(app)
        assert "⇉ parallel" not in screen_text(app)
    single = CassetteApp(open_cassette(a))
    async with single.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(single)
        assert text.count("⇉") == 3 and "⇉   1" in text


@sync
async def test_the_help_screen_lists_the_parallel_mark(tmp_path: Path) -> None:
    assert PARALLEL in legend()
    a, b = _pair(tmp_path)
    app = CassetteApp(open_cassette(a), open_cassette(b))
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        line = next(x for x in screen_text(app).splitlines() if "parallel:" in x)
        assert "⇉" in line and "the call ran at the same time as others" in line
