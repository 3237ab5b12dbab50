"""The app marks a retry storm of 429s (the same failure with fresh request ids and
times) as repeats, as ``check`` reads it (tests/core/keys/test_repeats.py)."""

from __future__ import annotations

from pathlib import Path

from support.cases import storm_file
from support.pilot import sync


@sync
async def test_the_app_marks_the_storm_as_repeats(tmp_path: Path) -> None:
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.tui.app import CassetteApp
    from support.pilot import screen_text, settle

    app = CassetteApp(open_cassette(storm_file(tmp_path)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "1 finding: repeated key" in text and "distinct" not in text
        assert "retry storm" in text  # the finding of the first step, in its detail
        rows = [line for line in text.splitlines() if "http method=" in line]
        assert len(rows) == 4 and all("↻" in row for row in rows)
