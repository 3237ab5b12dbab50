"""The outcome pass with its columns written to temporary files a batch at a time while
spilling (issue 31: the fingerprints and error flags of a 1M-entry run are never whole in
memory) gives the columns of the in-memory pass, for a file read in order and for a
cassette read entry by entry; a pass given up leaves no file open."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from cassette_tui.core.format import outcome as oc
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.outcome import entry_fingerprint, outcome_index
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette

#: per call: its response kind (0-2 a value, 3 an HTTP 500, 4 an error entry, 5 a NaN)
kinds = st.lists(st.integers(0, 5), max_size=30)


def _records(run: list[int]) -> list[dict]:
    out = []
    for seq, kind in enumerate(run, 1):
        if kind == 4:
            out.append(entry(seq, "t", {"q": seq}, error={"type": "E", "message": "m"}))
        elif kind == 3:
            out.append(entry(seq, "t", {"q": seq}, response={"status": 500}))
        elif kind == 5:
            out.append(entry(seq, "t", {"q": seq}, response={"v": {"$numberDouble": "NaN"}}))
        else:
            out.append(entry(seq, "t", {"q": seq}, response={"v": kind}))
    return out


def _columns(c: Cassette) -> tuple[list[int], list[bool]]:
    result = outcome_index(c)
    return list(result.fingerprints), list(result.errors)


@settings(max_examples=40, deadline=None)
@given(kinds, st.integers(1, 4), st.booleans())
def test_spooled_outcomes_equal_the_in_memory_ones(
    run: list[int], batch: int, in_memory: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_cassette(Path(tmp) / "a.jsonl", *_records(run))
        plain = load(path)
        expected = _columns(plain if not in_memory else Cassette.from_entries(list(plain)))
        old = oc._SPOOL_BATCH, spill.SPILL_MIN_ITEMS
        oc._SPOOL_BATCH, spill.SPILL_MIN_ITEMS = batch, 1
        try:
            with spill.spilling():
                c = load(path)
                if in_memory:
                    c = Cassette.from_entries(list(c))
                result = outcome_index(c)
                spooled = list(result.fingerprints), list(result.errors)
        finally:
            oc._SPOOL_BATCH, spill.SPILL_MIN_ITEMS = old
        if run:
            assert isinstance(result.fingerprints, memoryview)
            assert isinstance(result.errors, memoryview)
        assert all(type(flag) is bool for flag in spooled[1])
        assert spooled == expected
        # the per-entry cache reads the whole pass's column once it is there
        assert [entry_fingerprint(c, i) for i in range(len(c))] == expected[0]


def test_the_per_entry_cache_is_made_on_first_use_only(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "a.jsonl", *_records([0, 1, 4, 3]))
    c = load(path)
    first = entry_fingerprint(c, 2)
    whole = outcome_index(c)
    assert whole.fingerprints[2] == first
    c2 = load(path)
    whole2 = outcome_index(c2)  # no per-entry list beside the pass's columns
    assert oc._outcome_cache[c2].fingerprints is whole2.fingerprints
    assert list(whole2.fingerprints) == list(whole.fingerprints)


def test_a_pass_given_up_closes_its_spools(tmp_path: Path, monkeypatch) -> None:
    closed = []
    monkeypatch.setattr(spill.Spool, "close", lambda self: closed.append(self))
    monkeypatch.setattr(spill, "SPILL_MIN_ITEMS", 1)
    path = write_cassette(tmp_path / "a.jsonl", *_records([0, 1, 2]))
    with spill.spilling():
        c = load(path)
        path.write_text(path.read_text().replace('"seq": 2', '"seq": 9'))  # the file changed
        with pytest.raises(CassetteFormatError, match="changed on disk"):
            outcome_index(c)
    assert len(closed) >= 2
