"""``line_search.lines_containing_job``: the entries whose stored line holds a term, read
in chunks cut at whole lines (a line longer than a chunk included), a hit counted only in
the fields asked for; a cassette in memory has no lines to read."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format import line_search
from cassette_tui.core.format.jobs import Cancelled, CancelToken, run_job
from cassette_tui.core.format.line_search import lines_containing_job
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, make_cassette, write_cassette

FIELDS = frozenset({"tool", "args", "response", "error"})
words = st.sampled_from(["Alpha", "beta", "GAMMA", "seq", "x" * 300, "ab"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(words, words), min_size=1, max_size=15), words, st.integers(16, 700))
def test_the_lines_found_are_those_holding_the_term(
    rows: list[tuple[str, str]], term: str, chunk: int
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_search, "CHUNK", chunk)  # lines longer than a chunk too
        path = write_cassette(
            Path(tmp) / "c.jsonl",
            *(entry(i, "tool", {"q": q}, response={"text": r}) for i, (q, r) in enumerate(rows, 1)),
        )
        cassette = load(path)
        needle = term.lower().encode()
        lines = path.read_bytes().lower().split(b"\n")
        expected = {i for i in range(len(rows)) if needle in lines[i]}
        assert run_job(lines_containing_job(cassette, needle)) == expected
        in_fields = {
            i for i, (q, r) in enumerate(rows) if needle in f"tool {q} {r}".lower().encode()
        }
        assert run_job(lines_containing_job(cassette, needle, fields=FIELDS)) == in_fields


def test_a_cassette_in_memory_has_no_lines_and_a_cancel_stops(tmp_path: Path) -> None:
    memory = make_cassette([("t", {"q": 1}, {"v": 2})])
    assert run_job(lines_containing_job(memory, b"q")) is None
    path = write_cassette(tmp_path / "c.jsonl", *(entry(i) for i in range(1, 50)))
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        run_job(lines_containing_job(load(path), b"zzz", token))
