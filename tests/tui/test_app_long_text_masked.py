"""Long texts that are not JSON in the detail pane and the step screen, cut and expanded,
beyond ``test_app_long_plain_text.py``'s answer: the drift of a long JSON text against
the same text no longer JSON (its spot showed ``hunter2xyz`` whole on session 13's main,
which scanned 64 KB around the difference as text), and a long text as an item of a list
answer. ``password = 'hunter2xyz'`` stands 100 KB past the part shown; the scan of the
whole answer masks its value wherever it shows. Every row drawn, at every scroll
position, is a row of that detail and holds no secret."""

from __future__ import annotations

import json
from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.widgets.detail import DetailPane
from support.pilot import every_detail_view, long_answer_pair, rows_drawn, sync

SECRET = "hunter2xyz"
#: what the scan shows of it (``masking.mask``)
MASKED = "«hu…(10 chars)»"


def _text(tail: str) -> str:
    """About 200 KB of lines: ``SECRET`` in the first one, its password assignment 100 KB
    on, ``SECRET`` again just before the ``tail`` that tells A and B apart."""
    lines = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(4_000)]
    lines[0] = f"the note says {SECRET}, keep it"
    lines[2_000] = f"password = '{SECRET}'"
    lines[-1] = f"the end: {SECRET}{tail}"
    return "\n".join(lines)


def _json_or_not(tail: str) -> str:
    """A JSON text (A) against the same text cut so it is no longer JSON (B)."""
    lines = [f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(4_000)]
    lines[0] = f"the note says {SECRET}, keep it"
    lines[2_000] = f"password = '{SECRET}'"
    lines[-1] = f"the end: {SECRET}"
    text = json.dumps([{"text": line} for line in lines])
    return text if not tail else text[:-3] + tail


def _no_secret(pane: DetailPane, hint: str) -> None:
    # laid out wide enough that no line folds: a secret split over two rows shows too
    unfolded = pane.body_text(100_000)
    assert hint in unfolded
    assert SECRET not in unfolded and MASKED in unfolded
    drift = next(line for line in unfolded.splitlines() if "at character" in line)
    assert MASKED in drift, drift
    assert not any(SECRET in row for row in rows_drawn(pane))


@sync
async def test_a_long_json_text_drifted_against_a_text_is_masked_at_the_spot(
    tmp_path: Path,
) -> None:
    a, b = long_answer_pair(
        tmp_path, lambda tail: {"content": [{"type": "text", "text": _json_or_not(tail)}]}
    )
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await every_detail_view(app, pilot, _no_secret, SECRET)


@sync
async def test_a_long_text_in_a_list_is_masked_as_whole(tmp_path: Path) -> None:
    a, b = long_answer_pair(
        tmp_path, lambda tail: [_text(tail), *(f"item {i}" for i in range(3_000))]
    )
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await every_detail_view(app, pilot, _no_secret, SECRET)
