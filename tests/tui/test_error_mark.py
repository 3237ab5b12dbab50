"""The ``!`` mark (the call raised or answered HTTP 4xx/5xx) is on every row whose entry is
an error, whatever the row's status: two 429s side by side are ``=`` and both keep ``!``,
as the single-file view shows them."""

from __future__ import annotations

import io
import re
from pathlib import Path

from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.text.detail import Limits, pair_detail, pair_title
from cassette_tui.tui.text.rows import PairRows
from rich.console import Console
from support.factory import make_cassette
from support.pilot import screen_text, settle, sync

SIZE = (80, 24)
LIMIT = {"status": 429, "error": "rate_limited"}
RAISED = {"__error__": "timeout"}


def _marks(line: str) -> tuple[str, str]:
    """The mark cell after each side's seq and repeat cells: ``!`` or a space."""
    a, b = (re.match(r"\s*\d+.(.)", side) for side in re.split(" [=~] ", line))
    assert a is not None and b is not None, line
    return a.group(1), b.group(1)


def test_every_error_entry_is_marked_whatever_the_status() -> None:
    a = make_cassette(
        [("t", {"q": 1}, LIMIT), ("t", {"q": 2}, RAISED), ("t", {"q": 3}, LIMIT), ("t", {}, 1)]
    )
    b = make_cassette(
        [("t", {"q": 1}, LIMIT), ("t", {"q": 2}, RAISED), ("t", {"q": 3}, {"ok": 1}), ("t", {}, 1)]
    )
    result = diff_cassettes(a, b)
    assert [row.status for row in result.rows] == [
        Status.SAME,
        Status.SAME,
        Status.RESPONSE_DRIFT,
        Status.SAME,
    ]
    rows = PairRows(result)
    lines = [rows.render(i, 79, {}).plain for i in range(len(rows))]
    assert [_marks(line) for line in lines] == [("!", "!"), ("!", "!"), ("!", " "), (" ", " ")]
    # the detail's title says so too (the row's flags alone leave out two errors)
    assert "! error" not in pair_title(result.rows[0]).plain
    assert "! error" in pair_title(result.rows[0], error=True).plain
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    console.print(pair_detail(result, 0, result.drift(0), Limits(), {}))
    assert "· = same call, same response · ! error" in console.export_text().splitlines()[0]


@sync
async def test_row_1_of_the_samples_keeps_its_error_mark(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, align="seq")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        row_1 = next(x for x in screen_text(app).splitlines() if x.startswith("     1"))
        assert row_1.count("1↻!search_docs") == 2 and " = " in row_1
    single = CassetteApp(open_cassette(samples / "fail.jsonl"))
    async with single.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "1↻!search_docs" in screen_text(single)
