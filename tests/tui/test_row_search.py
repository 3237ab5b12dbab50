"""The app's search reads the files for the term and confirms the rows it finds
(``tui/text/search.py``): it finds the row that looking at each row in turn finds, both
ways, wrapped or not, on one cassette and on a pair aligned by seq or by key; escape's
cancel stops it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.jobs import Cancelled, CancelToken
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.text import search
from cassette_tui.tui.text.rows import PairRows, SingleRows
from cassette_tui.tui.text.search import RowSearch, search_order
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette

WORDS = ["alpha", "Beta", "gamma", "delta", "café", 'quote"d', "back\\slash"]
calls = st.lists(
    st.tuples(
        st.sampled_from(["search_docs", "read_FILE"]),
        st.sampled_from(WORDS),
        st.sampled_from(WORDS),
    ),
    min_size=1,
    max_size=12,
)
terms = st.sampled_from(
    ["seq", "args_digest", "alpha", "beta", "file", "caf", "café", 'quote"d', "back\\", "zzz", "a"]
)


def _write(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    records = [
        entry(i, tool, {"q": q}, response={"text": r}) for i, (tool, q, r) in enumerate(rows, 1)
    ]
    return write_cassette(path, *records)


def _naive(model: object, term: str, cursor: int, direction: int) -> tuple[int, bool] | None:
    for index, past_end in search_order(cursor, len(model), direction):  # type: ignore[arg-type]
        if model.matches(index, term):  # type: ignore[attr-defined]
            return index, past_end
    return None


@settings(max_examples=60, deadline=None)
@given(
    calls,
    calls,
    terms,
    st.integers(0, 30),
    st.sampled_from([1, -1]),
    st.sampled_from(["seq", "key"]),
)
def test_the_files_search_finds_what_each_row_in_turn_finds(
    a_rows: list, b_rows: list, term: str, cursor: int, direction: int, align: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "NEAR_ROWS", 1)  # the files are read after one row
        a = open_cassette(_write(Path(tmp) / "a.jsonl", a_rows))
        b = open_cassette(_write(Path(tmp) / "b.jsonl", b_rows))
        for model in (SingleRows(a, {}), PairRows(diff_cassettes(a, b, align=align))):
            at = cursor % len(model)
            found = RowSearch(model, term.lower())
            expected = _naive(model, term.lower(), at, direction)
            assert found.find(at, direction, CancelToken()) == expected
            # n again: from the kept candidates
            assert found.find(at, direction, CancelToken()) == expected


def test_a_cancelled_search_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "NEAR_ROWS", 1)
    cassette = open_cassette(_write(tmp_path / "a.jsonl", [("t", "x", "y")] * 50))
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        RowSearch(SingleRows(cassette, {}), "zzz").find(0, 1, token)


def test_progress_is_reported_while_the_files_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "NEAR_ROWS", 1)
    rows = [("t", "x", "y")] * 200 + [("t", "x", "needle")]
    cassette = open_cassette(_write(tmp_path / "a.jsonl", rows))
    seen: list[float] = []
    hit = RowSearch(SingleRows(cassette, {}), "needle").find(0, 1, CancelToken(), seen.append)
    assert hit == (200, False)
    assert seen and seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
