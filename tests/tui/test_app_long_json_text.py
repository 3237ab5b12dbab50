"""A long answer whose text is JSON (an MCP answer of 3,000 objects) in the detail pane and
the step screen, cut and expanded (issue 31): a password's value is masked where its key
is, far past the part shown, and so wherever the same text shows, as the scan of the whole
answer masks it; a token across the cut is masked too. Every row drawn, at every scroll
position, is a row of that detail and holds neither secret."""

from __future__ import annotations

import json
from pathlib import Path

from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.text.detail import EXPANDED_HINT, Limits
from cassette_tui.tui.widgets.detail import DetailPane
from support.pilot import every_detail_view, long_answer_pair, rows_drawn, sync

#: flagged by nothing but the key it is found under (no token shape, low entropy)
NAMED = "hunter2-rocks-42"
GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def _answer(tail: str) -> dict:
    """3,000 objects as JSON text; the first shows ``NAMED`` as a note and has a token
    across the cut of a string (160 characters); ``NAMED`` is a password at object 1,000 (120 KB before the end);
    the token again across the expanded cut (20,000); ``NAMED`` again just before the
    ``tail`` that tells A and B apart, where the drift shows the spot."""
    inner: list[dict] = [{"n": i, "text": f"line {i}: the quick brown fox"} for i in range(3_000)]
    inner[0] = {"note": f"the note says {NAMED}, " + "x" * 110 + GITHUB}
    head = len(json.dumps(inner[:1])) - 1
    inner[1]["text"] = "y" * (Limits.expanded().chars - head - 20) + GITHUB  # type: ignore[operator]
    inner[1_000]["password"] = NAMED
    inner[-1]["text"] = f"the end: {NAMED}{tail}"
    return {"content": [{"type": "text", "text": json.dumps(inner)}], "isError": False}


def _no_secret(pane: DetailPane, hint: str) -> None:
    # laid out wide enough that no line folds: a secret split over two rows shows too
    unfolded = pane.body_text(100_000)
    assert hint in unfolded
    assert NAMED not in unfolded and GITHUB not in unfolded
    assert "«ghp_" in unfolded  # cut at 160 characters: its mask is cut too
    drift = next(line for line in unfolded.splitlines() if "at character" in line)
    assert "«hunt…(16 chars)» (changed)" in drift, drift
    if hint == EXPANDED_HINT:
        assert "«ghp_…(40 chars)»" in unfolded
    assert not any(NAMED in row or GITHUB in row for row in rows_drawn(pane))


@sync
async def test_the_pane_and_the_step_screen_mask_a_long_json_text_as_whole(
    tmp_path: Path,
) -> None:
    a, b = long_answer_pair(tmp_path, _answer)
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await every_detail_view(app, pilot, _no_secret, NAMED)
