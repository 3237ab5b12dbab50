"""The app's rows of a pair whose differences an ``ignore_response`` rule sets aside: the
metadata-drift mark on the rows the rule quiets, the response-drift mark on the row whose
answer changed (tests/core/diff/test_ignore_response.py holds the diff itself)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.keys.config import load_rules
from cassette_tui.tui.text.marks import STATUS_MARKS
from cassette_tui.tui.text.rows import PairRows
from support.cases import ignore_response_pair


@pytest.mark.parametrize("align", ["seq", "key", "auto"])
def test_rows_quieted_by_the_rule_carry_the_metadata_mark(tmp_path: Path, align: str) -> None:
    pa, pb, config = ignore_response_pair(tmp_path)
    rules = load_rules(config)
    d = diff_cassettes(load(pa, rules=rules), load(pb, rules=rules), align)
    # the app's rows: the metadata mark on rows 1 and 2, the response-drift mark on row 3
    rows = PairRows(d)
    quiet, real = STATUS_MARKS[Status.METADATA_DRIFT], STATUS_MARKS[Status.RESPONSE_DRIFT]
    assert [f" {quiet.glyph} " in rows.render(i, 80, {}).plain for i in range(3)] == [
        True,
        True,
        False,
    ]
    assert f" {real.glyph} " in rows.render(2, 80, {}).plain
