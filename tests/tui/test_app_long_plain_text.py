"""A long plain-text answer (a 300 KB log in an MCP answer, not JSON) in the detail pane
and the step screen, cut and expanded: a password named by an assignment far past the
part shown (``password = '...'``, 290 KB in) is a secret wherever its text occurs, so its
value in the first line is masked, as the scan of the whole answer masks it. Once the
part shown was scanned alone, and it showed the value whole. The drift of the two
answers (they differ at their end) shows the spot masked too."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.widgets.detail import DetailPane
from support.pilot import every_detail_view, long_answer_pair, sync

#: flagged by nothing but the assignment that names it
PLAIN = "hunter2xyz"


def _answer(tail: str) -> dict:
    log = f"logged in as admin with {PLAIN} at 09:00\n"
    log += "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(5_000))
    log += f"config: password = '{PLAIN}'\n"
    log += f"the end, {PLAIN}{tail}"
    return {"content": [{"type": "text", "text": log}], "isError": False}


def _no_secret(pane: DetailPane, hint: str) -> None:
    # laid out wide enough that no line folds: a secret split over two rows shows too
    unfolded = pane.body_text(100_000)
    assert hint in unfolded
    assert PLAIN not in unfolded
    assert "logged in as admin with «hu…(10 chars)» at 09:00" in unfolded
    drift = next(line for line in unfolded.splitlines() if "at character" in line)
    assert "«hu…(10 chars)» (changed)" in drift, drift


@sync
async def test_the_pane_and_the_step_screen_mask_a_long_plain_text_as_whole(
    tmp_path: Path,
) -> None:
    a, b = long_answer_pair(tmp_path, _answer, "read_log")
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await every_detail_view(app, pilot, _no_secret, PLAIN)
