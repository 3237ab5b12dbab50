"""Tool names cut at 80 columns stay distinguishable (tau-bench airline task 5 has three
``update_reservation_*`` tools that all read ``update_reser…`` when cut at the end)."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.format.cassette import load
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.text.names import shorten
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette
from support.pilot import screen_text, settle, sync

AIRLINE = [
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "get_reservation_details",
    "get_user_details",
    "cancel_reservation",
]


def test_names_that_differ_stay_different() -> None:
    short = shorten(AIRLINE, 12)
    assert len(set(short.values())) == len(AIRLINE)
    assert all(len(s) <= 12 for s in short.values())
    # the distinguishing end is kept
    assert short["update_reservation_flights"].endswith("flights")
    assert short["update_reservation_baggages"].endswith("baggages")


def test_names_that_fit_or_differ_early_keep_the_plain_cut() -> None:
    short = shorten(["get_user_details", "cancel_reservation", "search_docs"], 12)
    assert short == {
        "get_user_details": "get_user_de…",
        "cancel_reservation": "cancel_rese…",
        "search_docs": "search_docs",
    }


@given(st.sets(st.text(alphabet="abc_", min_size=1, max_size=30), min_size=1, max_size=8))
def test_shortened_names_are_distinct_when_they_can_be(names: set[str]) -> None:
    width = 12
    short = shorten(names, width)
    assert set(short) == names
    assert all(len(s) <= width for s in short.values())
    assert all(short[n] == n for n in names if len(n) <= width)
    # names that differ in their first 3 or last 8 characters can always be told apart
    if len({(n[:3], n[-8:]) for n in names}) == len(names):
        assert len(set(short.values())) == len(names)


@sync
async def test_the_step_list_tells_the_three_update_tools_apart(tmp_path: Path) -> None:
    records = [entry(i + 1, tool, {"reservation_id": "ABC123"}) for i, tool in enumerate(AIRLINE)]
    a = write_cassette(tmp_path / "a.jsonl", *records)
    b = write_cassette(tmp_path / "b.jsonl", *records[:3])
    app = CassetteApp(load(a), load(b))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        rows = [line for line in screen_text(app).splitlines() if "upd" in line]
        assert len(rows) == 3
        left = [row[:40] for row in rows]
        assert len(set(left)) == 3, left
        assert any("flights" in row for row in left) and any("baggages" in row for row in left)
