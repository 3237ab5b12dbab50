"""The pair and single headers: an empty cassette is said (``empty: no calls``), and a row
status is in the app's words (``only in B``, as the marks and the help say it)."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from support.cases import SUM_A, SUM_B
from support.factory import entry, line, write_cassette
from support.paths import SAMPLES
from support.pilot import screen_text, settle, sync


async def _header(app: CassetteApp) -> str:
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        return screen_text(app)


@sync
async def test_an_empty_cassette_alone_says_it_has_no_calls(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    screen = await _header(CassetteApp(open_cassette(empty)))
    assert "empty: the cassette has no calls" in screen, screen
    assert "1 finding: empty" in screen, screen


@sync
async def test_an_empty_side_of_a_pair_says_it_has_no_calls(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    screen = await _header(CassetteApp(open_cassette(empty), open_cassette(SAMPLES / "fix.jsonl")))
    assert "A empty.jsonl (empty: no calls)" in screen, screen
    assert "B fix.jsonl (4)" in screen, screen


@sync
async def test_the_first_divergence_says_only_in_b(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(line(1, response={"ok": 1}) + "\n")
    b.write_text(line(1, response={"ok": 1}) + "\n" + line(2, "fetch", response={"ok": 2}) + "\n")
    screen = await _header(CassetteApp(open_cassette(a), open_cassette(b)))
    assert "(only in B)" in screen, screen
    assert "(only b)" not in screen


@sync
async def test_the_app_header_names_no_stale_response_for_noise(tmp_path: Path) -> None:
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.tui.app import CassetteApp

    noise = [entry(1, "embed", {"t": 1}, response={"v": [x]}) for x in (SUM_A, SUM_B)]
    pa = write_cassette(tmp_path / "a.jsonl", noise[0], entry(2, "s", {"q": 1}, response={"t": 1}))
    pb = write_cassette(tmp_path / "b.jsonl", noise[1], entry(2, "s", {"q": 1}, response={"t": 1}))
    app = CassetteApp(open_cassette(pa), open_cassette(pb))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "findings: first divergence" in text and "stale" not in text
    # a real change in the same place is still a stale response
    pc = write_cassette(tmp_path / "c.jsonl", entry(1, "embed", {"t": 1}, response={"v": [0.7]}),
                        entry(2, "s", {"q": 1}, response={"t": 1}))  # fmt: skip
    app = CassetteApp(open_cassette(pa), open_cassette(pc))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "stale response" in screen_text(app)
