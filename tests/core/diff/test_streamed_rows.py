"""The diff's rows and findings in memory that does not grow with the rows, against the
plain definitions they replace (issue 31): the by-seq rows are built on access from
per-entry columns (``SeqRows``), repeated keys are one byte an entry
(``replay_key.repeated_flags``), and the findings keep only the rows they show."""

from __future__ import annotations

import tempfile
from array import array
from collections import Counter
from pathlib import Path

import pytest
from cassette_tui.core.diff.align import align_by_seq
from cassette_tui.core.diff.model import Row, Status
from cassette_tui.core.diff.packed import PackedRows
from cassette_tui.core.diff.result import DiffResult, diff_cassettes
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.outcome import Outcome
from cassette_tui.core.keys.replay_key import KeyIndex, repeated_flags
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import call_records, write_cassette

#: a call: tool, args value, response kind (0-2 a value, 3 a 429, 4 an error entry)
calls = st.lists(
    st.tuples(st.sampled_from(["search", "read"]), st.integers(0, 3), st.integers(0, 4)),
    max_size=14,
)


def _write(path: Path, run: list[tuple[str, int, int]]) -> Cassette:
    write_cassette(path, *call_records(run))
    return load(path)


def _is_error(c: Cassette, i: int) -> bool:
    return Outcome.of_entry(c[i]).is_error


def _check_rows(result: DiffResult) -> None:
    a, b = result.a, result.b
    count_a, count_b = KeyIndex.of(a), KeyIndex.of(b)
    iterated = list(result.rows)
    assert iterated == [result.rows[i] for i in range(len(result.rows))]
    for row in iterated:
        if row.a is not None:
            assert row.repeated_a == (count_a.count(a.key(row.a)) > 1)
        if row.b is not None:
            assert row.repeated_b == (count_b.count(b.key(row.b)) > 1)
        if row.a is not None and row.b is not None and row.status is not Status.MOVED:
            err_a, err_b = _is_error(a, row.a), _is_error(b, row.b)
            quiet = row.status is Status.SAME
            assert row.error_a == (err_a and not err_b and not quiet)
            assert row.error_b == (err_b and not err_a and not quiet)


def _check_findings(result: DiffResult) -> None:
    a, b = result.a, result.b
    rows = list(result.rows)
    by_kind = {f.kind: f for f in result.findings}
    # stale_response: every response-drift row without an error, counted per tool
    steps = Counter(
        r.tool for r in rows if r.status is Status.RESPONSE_DRIFT and not (r.error_a or r.error_b)
    )
    stale = [f for f in result.findings if f.kind == "stale_response"]
    assert {f.evidence["tool"]: f.evidence["steps"] for f in stale} == dict(steps)
    # error_response: as the plain definition, with a set of every successful key
    ok = [
        {c.key(i) for i in range(len(c)) if not _is_error(c, i)} for c in (a, b)
    ]  # fmt: skip
    failed = {"a": 0, "b": 0}
    for r in rows:
        if r.a is not None and r.b is not None:
            failed["a"] += r.error_a
            failed["b"] += r.error_b
        elif r.a is not None:
            failed["a"] += r.error_a and a.key(r.a) in ok[1]
        elif r.b is not None:
            failed["b"] += r.error_b and b.key(r.b) in ok[0]
    errors = [f for f in result.findings if f.kind == "error_response"]
    got = {"a": 0, "b": 0}
    for f in errors:
        side = "a" if f.seqs.get("a") else "b"
        got[side] = f.evidence["count"]
    assert got == failed
    # repeated_key: every key it names is held more than once by one run, at those seqs
    for f in (f for f in result.findings if f.kind == "repeated_key"):
        assert len(f.seqs["a"]) > 1 or len(f.seqs["b"]) > 1
    assert ("first_divergence" in by_kind) == (not result.is_same)


@settings(max_examples=120, deadline=None)
@given(calls, calls, st.sampled_from(["seq", "key"]))
def test_rows_and_findings_are_those_of_the_plain_definitions(
    run_a: list[tuple[str, int, int]], run_b: list[tuple[str, int, int]], how: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = _write(Path(tmp) / "a.jsonl", run_a)
        b = _write(Path(tmp) / "b.jsonl", run_b)
        result = diff_cassettes(a, b, how)
        _check_rows(result)
        _check_findings(result)
        a.close()
        b.close()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("abcdef")), max_size=40))
def test_repeated_flags_are_the_key_counts(keys: list[tuple[str, str]]) -> None:
    tools = [t for t, _ in keys]
    digests = [d for _, d in keys]
    counts = Counter(keys)
    assert list(repeated_flags(tools, digests)) == [int(counts[k] > 1) for k in keys]


def test_repeated_flags_on_many_keys_sharing_hash_slots() -> None:
    # 50k keys: slots of the byte table are shared by chance; only real repeats count
    keys = [("t" if i % 7 else "u", f"sha256:{i % 40_000:016x}") for i in range(50_000)]
    counts = Counter(keys)
    flags = repeated_flags([t for t, _ in keys], [d for _, d in keys])
    assert list(flags) == [int(counts[k] > 1) for k in keys]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2**64 - 1) | st.integers(0, 12))),
    st.sampled_from([1, 8, 64, 1 << 21]),
    st.booleans(),
)
def test_repeated_flags_in_hash_partitions_are_the_key_counts(
    keys: list[tuple[int, int]], table_bytes: int, as_text: bool
) -> None:
    # tool ids and digest codes (the alignment's columns, keys made ints) or texts (keys
    # made tuples), the entries counted in one table or in up to 8 * n partitions
    from cassette_tui.core.keys import replay_key

    if as_text:
        keys = [(f"t{t}", f"sha256:{d:016x}") for t, d in keys]  # type: ignore[misc]
    counts = Counter(keys)
    old = replay_key._FLAG_TABLE_BYTES
    replay_key._FLAG_TABLE_BYTES = table_bytes
    try:
        tools, digests = [t for t, _ in keys], [d for _, d in keys]
        if not as_text:  # as the alignment's columns
            tools, digests = array("i", tools), array("Q", digests)  # type: ignore[assignment]
        flags = repeated_flags(tools, digests)
    finally:
        replay_key._FLAG_TABLE_BYTES = old
    assert list(flags) == [int(counts[k] > 1) for k in keys]


@settings(max_examples=80, deadline=None)
@given(calls, calls)
def test_packed_rows_give_back_the_rows_they_were_given(
    run_a: list[tuple[str, int, int]], run_b: list[tuple[str, int, int]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = _write(Path(tmp) / "a.jsonl", run_a)
        b = _write(Path(tmp) / "b.jsonl", run_b)
        rows = list(align_by_seq(a, b))
        packed = PackedRows(a, b, rows)
        assert len(packed) == len(rows)
        assert list(packed) == rows
        assert packed == rows
        assert packed.statuses == [r.status for r in rows]
        assert packed[-1:] == rows[-1:]
        a.close()
        b.close()


def test_a_row_whose_tool_is_not_the_cassettes_is_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", [("search", 1, 0)])
    b = _write(tmp_path / "b.jsonl", [("read", 1, 0)])
    row = Row(0, 0, 1, 1, Status.OTHER_CALL, "read")  # A's tool is "search"
    with pytest.raises(ValueError, match="cannot give back"):
        PackedRows(a, b, [row])
