"""The headless ``diff`` with its per-entry columns in temporary files (issue 31,
``format/spill.py``): the rows, the document and the findings equal the in-memory diff's
on random pairs (insertions, deletions, repeated keys, reorders, errors), the spilled
columns read back as the arrays they replace, and no temporary file is left with a name."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.diff import align as al
from cassette_tui.core.diff import packed as pk
from cassette_tui.core.diff.result import DiffResult, diff_job
from cassette_tui.core.format import outcome as oc
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.jobs import run_job
from hypothesis import given, settings
from hypothesis import strategies as st
from support.clash import Clash
from support.factory import call_records, entry, write_cassette

#: a call: tool, args value, response kind (0-2 a value, 3 a 429, 4 an error entry)
calls = st.lists(
    st.tuples(st.sampled_from(["search", "read", "fetch"]), st.integers(0, 5), st.integers(0, 4)),
    max_size=40,
)


@contextmanager
def _plain_and_spooled(text: str, chunk: int) -> Iterator[tuple[Cassette, Cassette]]:
    """``text`` as a cassette file loaded plainly, and loaded again spooled in batches of 2
    (read ``chunk`` bytes at a time, every column spilled); the file lives until exit."""
    from cassette_tui.core.format import _loader, _readahead

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "a.jsonl"
        path.write_text(text)
        plain = load(path)
        old = _loader._SPOOL_BATCH, _readahead.CHUNK, spill.SPILL_MIN_ITEMS
        _loader._SPOOL_BATCH, _readahead.CHUNK, spill.SPILL_MIN_ITEMS = 2, chunk, 1
        try:
            with spill.spilling():
                spooled = load(path)
                spooled.spill_columns()
        finally:
            _loader._SPOOL_BATCH, _readahead.CHUNK, spill.SPILL_MIN_ITEMS = old
        yield plain, spooled


def _edited(run: list[tuple[str, int, int]], edits: list[tuple[int, int, int]]) -> list:
    """``run`` with insertions, deletions and swaps of neighbours (a retry, a dropped
    call, a reorder): each edit is (kind, position, value)."""
    out = list(run)
    for kind, pos, value in edits:
        if kind == 0:
            out.insert(pos % (len(out) + 1), ("search", value % 6, value % 5))
        elif out and kind == 1:
            del out[pos % len(out)]
        elif len(out) > 1:
            k = pos % (len(out) - 1)
            out[k], out[k + 1] = out[k + 1], out[k]
    return out


def _document(result: DiffResult) -> dict[str, Any]:
    doc = result.to_json(include_same=True)
    doc["findings"] = [f.to_diff_json() for f in run_job(result.findings_job())]
    for side in ("a", "b"):
        doc[side].pop("file", None)
    return doc


def _diff(a: Path, b: Path, align: str, spilled: bool) -> tuple[list, dict[str, Any]]:
    def run() -> tuple[list, dict[str, Any]]:
        ca = load(a)
        ca.spill_columns()
        cb = load(b)
        cb.spill_columns()
        result = run_job(diff_job(ca, cb, align, outcomes=True))
        return list(result.rows), _document(result)

    if not spilled:
        return run()
    with spill.spilling():
        return run()


@settings(max_examples=60, deadline=None)
@given(
    calls,
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 60)), max_size=8),
    st.sampled_from(["key", "seq", "auto"]),
)
def test_spilled_diff_equals_the_in_memory_diff(
    run: list[tuple[str, int, int]], edits: list[tuple[int, int, int]], align: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = write_cassette(Path(tmp) / "a.jsonl", *call_records(run))
        b = write_cassette(Path(tmp) / "b.jsonl", *call_records(_edited(run, edits)))
        old = (
            spill.SPILL_MIN_ITEMS, al._PART_TOKENS, al._SIDE_BATCH, oc._SPOOL_BATCH,
            pk._SPOOL_BATCH,
        )  # fmt: skip
        # every column spilled, however short; a region of more than 8 tokens in partitions;
        # the outcome pass's columns and the key alignment's rows to their files every 2,
        # its tool ids and keys made 3 at a time
        (spill.SPILL_MIN_ITEMS, al._PART_TOKENS, al._SIDE_BATCH, oc._SPOOL_BATCH,
         pk._SPOOL_BATCH) = 1, 8, 3, 2, 2  # fmt: skip
        try:
            on_disk = _diff(a, b, align, spilled=True)
        finally:
            (spill.SPILL_MIN_ITEMS, al._PART_TOKENS, al._SIDE_BATCH, oc._SPOOL_BATCH,
             pk._SPOOL_BATCH) = old  # fmt: skip
        assert on_disk == _diff(a, b, align, spilled=False)


def test_the_columns_are_spilled_inside_the_block_only(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(spill, "SPILL_MIN_ITEMS", 1)
    run = [("search", k % 4, k % 5) for k in range(30)]
    a = write_cassette(tmp_path / "a.jsonl", *call_records(run))
    b = write_cassette(tmp_path / "b.jsonl", *call_records(run[3:] + run[:3]))
    ca, cb = load(a), load(b)
    ca.spill_columns()
    assert isinstance(ca.line_spans()[0], array)  # type: ignore[index]
    with spill.spilling():
        ca.spill_columns()
        result = run_job(diff_job(ca, cb, "key", outcomes=True))
    assert isinstance(ca.line_spans()[0], memoryview)  # type: ignore[index]
    assert isinstance(cb.digest_codes(), memoryview)
    assert isinstance(result.outcomes()[0].errors, memoryview)
    assert all(type(flag) is bool for flag in result.outcomes()[0].errors)
    assert isinstance(result.rows._ia, memoryview)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 60), max_size=80),
    st.lists(st.integers(0, 60), max_size=80),
    st.booleans(),
    st.sampled_from([2, 5, 16]),
)
def test_anchors_by_hash_partition_are_the_whole_regions(
    a: list[int], b: list[int], clash: bool, part_tokens: int
) -> None:
    ta = [Clash(x) for x in a] if clash else a
    tb = [Clash(x) for x in b] if clash else b
    whole = al._anchors(ta, tb, 0, len(ta), 0, len(tb))
    old = spill.SPILL_MIN_ITEMS, al._PART_TOKENS
    spill.SPILL_MIN_ITEMS, al._PART_TOKENS = 1, part_tokens
    try:
        with spill.spilling():
            parted = al._anchors(ta, tb, 0, len(ta), 0, len(tb))
    finally:
        spill.SPILL_MIN_ITEMS, al._PART_TOKENS = old
    assert [list(x) for x in parted] == [list(x) for x in whole]


@pytest.mark.parametrize("typecode", ["b", "B", "h", "H", "i", "I", "l", "L", "q", "Q"])
def test_a_spilled_column_reads_back_its_values_after_its_pages_are_dropped(
    typecode: str,
) -> None:
    lo, hi = (0, 255) if typecode.isupper() else (-128, 127)
    values = array(typecode, [lo, hi, 0, 7] * 5000)
    view = spill.spilled(values)
    assert view.format == typecode and len(view) == len(values)
    assert isinstance(view.obj, mmap.mmap)
    view.obj.madvise(mmap.MADV_DONTNEED)  # what the pager does
    assert view.tolist() == values.tolist()
    assert view[-1] == values[-1] and list(view[3:9]) == list(values[3:9])
    view[0] = hi  # a write goes to the file and stays
    view.obj.madvise(mmap.MADV_DONTNEED)
    assert view[0] == hi


def test_on_disk_fills_and_bytearrays_spill() -> None:
    column = spill.on_disk("q", 200_000, -1)
    assert len(column) == 200_000 and set(column.tolist()) == {-1}
    assert spill.on_disk("Q", 0).tolist() == []
    flags = spill.spilled(bytearray(b"\x00\x01\x02"))
    assert flags.format == "B" and flags.tolist() == [0, 1, 2]
    assert spill.maybe_on_disk("q", 3, -1) == array("q", [-1, -1, -1])  # outside a block


def test_a_spilled_column_leaves_no_named_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    view = spill.spilled(array("q", range(1000)))
    assert list(tmp_path.iterdir()) == []  # unlinked when made: gone at exit, error, kill
    assert view[999] == 999


def test_the_command_prints_the_same_document_with_every_column_spilled(tmp_path: Path) -> None:
    # the CLI in a subprocess (a fresh process: the pager thread and the maps are its own)
    run = [("search" if k % 3 else "read", k % 7, k % 5) for k in range(200)]
    a = write_cassette(tmp_path / "a.jsonl", *call_records(run))
    b = write_cassette(tmp_path / "b.jsonl", *call_records(_edited(run, [(0, 5, 1), (1, 40, 0)])))
    code = (
        "import sys; from cassette_tui.core.format import spill; "
        "spill.SPILL_MIN_ITEMS = int(sys.argv[1]); "
        "from cassette_tui.tui.cli import main; main(sys.argv[2:])"
    )
    out = {}
    for label, least in (("spilled", "1"), ("memory", str(10**9))):
        proc = subprocess.run(
            [sys.executable, "-c", code, least, "diff", str(a), str(b), "--json"],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        out[label] = proc.stdout
    assert out["spilled"] == out["memory"]
    assert json.loads(out["spilled"])["align"] in ("key", "seq")


@settings(max_examples=40, deadline=None)
@given(
    calls,
    st.lists(st.integers(0, 45), max_size=4),
    st.booleans(),
    st.booleans(),
    st.sampled_from([64, 300, 4096]),
)
def test_a_load_that_spools_its_index_equals_the_plain_load(
    run: list[tuple[str, int, int]],
    blanks: list[int],
    shuffled: bool,
    no_last_newline: bool,
    chunk: int,
) -> None:
    # small chunks and batches: the index goes to its temporary files many times a file

    lines = [json.dumps(r) for r in call_records(run)]
    if shuffled and len(lines) > 2:
        lines[0], lines[-1] = lines[-1], lines[0]  # seqs out of file order
    for k in sorted(blanks, reverse=True):
        lines.insert(min(k, len(lines)), "")
    text = "\n".join(lines) + ("" if no_last_newline else "\n")
    with _plain_and_spooled(text, chunk) as (plain, spooled):
        assert len(spooled) == len(plain)
        assert spooled.seqs == plain.seqs
        assert [spooled.tool(i) for i in range(len(plain))] == [
            plain.tool(i) for i in range(len(plain))
        ]
        assert spooled._tools.ids.itemsize == plain._tools.ids.itemsize
        assert [spooled.line(i) for i in range(len(plain))] == [
            plain.line(i) for i in range(len(plain))
        ]
        spans, plain_spans = spooled.line_spans(), plain.line_spans()
        if plain_spans is not None:
            assert spans is not None
            assert [list(x) for x in spans] == [list(x) for x in plain_spans]
        assert list(spooled.digests()) == list(plain.digests())
        assert [spooled[i] for i in range(len(plain))] == [plain[i] for i in range(len(plain))]


@pytest.mark.parametrize("entries", [4096 * 2 + 7, 4096 * 3])
def test_a_key_pass_that_spools_its_columns_equals_the_plain_one(
    tmp_path: Path, monkeypatch, entries: int
) -> None:
    # batch 1: the digests and hashes go to their temporary files at every progress step
    from cassette_tui.core.format import _view

    records = [
        entry(
            seq, ("search", "read")[seq % 2], {"q": seq % 97}, error={"type": "E", "message": "m"}
        )
        if seq % 13 == 0
        else entry(seq, ("search", "read")[seq % 2], {"q": seq % 97}, response={"v": seq % 5})
        for seq in range(1, entries + 1)
    ]
    path = write_cassette(tmp_path / "a.jsonl", *records)
    plain = load(path)
    monkeypatch.setattr(_view, "_KEY_SPOOL_BATCH", 1)
    monkeypatch.setattr(spill, "SPILL_MIN_ITEMS", 1)
    with spill.spilling():
        spooled = load(path)
        codes, hashes = spooled.digest_codes(), spooled.response_hashes()
    assert isinstance(codes, memoryview) and isinstance(hashes, memoryview)
    assert list(codes) == list(plain.digest_codes())
    assert list(hashes) == list(plain.response_hashes())
    assert spooled.digests() == plain.digests()


def test_a_digest_column_after_spooled_codes_reads_as_one_column() -> None:
    from cassette_tui.core.format.columns import DigestColumn

    head = [f"sha256:{k:016x}" for k in range(5)]
    tail = ["sha256:00000000000000ff", "not a digest", None, "sha256:0000000000000001"]
    joined = DigestColumn(tail).after(DigestColumn(head).codes)
    assert list(joined) == head + tail
    assert [joined.is_standard(i) for i in range(len(joined))] == [
        text is not None and text.startswith("sha256:") for text in head + tail
    ]


def test_rows_spooled_as_they_come_equal_the_rows_in_memory(tmp_path: Path) -> None:
    run = [("search", k % 4, k % 5) for k in range(40)]
    a = write_cassette(tmp_path / "a.jsonl", *call_records(run))
    b = write_cassette(tmp_path / "b.jsonl", *call_records(run[5:] + run[:5]))
    ca, cb = load(a), load(b)
    plain = al.align_by_key(ca, cb)
    old = pk._SPOOL_BATCH
    pk._SPOOL_BATCH = 3
    try:
        with spill.spilling():
            rows = pk.PackedRows(ca, cb, spool=True)
            rows.extend(plain)
            assert len(rows) == len(plain)
            with pytest.raises(RuntimeError, match="spill"):
                rows[0]  # noqa: B018 - a read before spill() is refused, not wrong
            rows.spill()
    finally:
        pk._SPOOL_BATCH = old
    assert isinstance(rows._ia, memoryview)
    assert rows == plain and list(rows.statuses) == list(plain.statuses)


@settings(max_examples=30, deadline=None)
@given(calls, st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 60))))
def test_rows_of_entries_read_from_the_columns_equal_the_rows(
    run: list[tuple[str, int, int]], edits: list[tuple[int, int, int]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        a = write_cassette(Path(tmp) / "a.jsonl", *call_records(run))
        b = write_cassette(Path(tmp) / "b.jsonl", *call_records(_edited(run, edits)))
        ca, cb = load(a), load(b)
        old = spill.SPILL_MIN_ITEMS
        spill.SPILL_MIN_ITEMS = 1
        try:
            with spill.spilling():
                result = run_job(diff_job(ca, cb, "key", outcomes=True))
                where = {s: list(result.rows_of_entries(s)) for s in ("a", "b")}
        finally:
            spill.SPILL_MIN_ITEMS = old
        expected = {"a": [0] * len(ca), "b": [0] * len(cb)}
        for index, row in enumerate(result.rows):
            for side, pos in (("a", row.a), ("b", row.b)):
                if pos is not None:
                    expected[side][pos] = index
        assert where == expected


@settings(max_examples=30, deadline=None)
@given(calls, st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 60))))
def test_the_alignments_repeated_flags_are_the_results(
    run: list[tuple[str, int, int]], edits: list[tuple[int, int, int]]
) -> None:
    from cassette_tui.core.keys.replay_key import repeated_flags

    with tempfile.TemporaryDirectory() as tmp:
        a = write_cassette(Path(tmp) / "a.jsonl", *call_records(run))
        b = write_cassette(Path(tmp) / "b.jsonl", *call_records(_edited(run, edits)))
        ca, cb = load(a), load(b)
        result = run_job(diff_job(ca, cb, "key", outcomes=True))
        assert result._repeated is not None  # taken from the alignment, not counted again
        assert result.repeated() == (
            repeated_flags(list(ca._tools), list(ca.digests())),
            repeated_flags(list(cb._tools), list(cb.digests())),
        )


#: a line's stored digest: the standard form (of an int), none, or another text
stored_kinds = st.one_of(
    st.integers(0, 2**64 - 1).map(lambda k: f"sha256:{k:016x}"),
    st.none(),
    st.just("md5:not-ours"),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(stored_kinds, st.booleans()), max_size=40),
    st.booleans(),
    st.sampled_from([64, 300, 4096]),
)
def test_a_load_that_spools_its_stored_digests_equals_the_plain_load(
    lines: list[tuple[str | None, bool]], shuffled: bool, chunk: int
) -> None:
    # mostly standard digests (spooled a batch at a time), some lines with none or with
    # another text (the rest then stays in memory, the spooled head put back before it)

    records = []
    for seq, (stored, standard_only) in enumerate(lines, 1):
        digest = stored if not standard_only or stored is None else f"sha256:{seq:016x}"
        fields = {} if digest is None else {"args_digest": digest}
        records.append(json.dumps(entry(seq, "search", {"q": seq}, **fields)))
    if shuffled and len(records) > 2:
        records[0], records[-1] = records[-1], records[0]  # seqs out of file order
    with _plain_and_spooled("".join(r + "\n" for r in records), chunk) as (plain, spooled):
        assert list(spooled.stored_digests()) == list(plain.stored_digests())
        assert [spooled.stored_digest(i) for i in range(len(plain))] == [
            plain.stored_digest(i) for i in range(len(plain))
        ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=60), st.integers(1, 5), st.booleans())
def test_seq_checks_a_part_at_a_time_equal_the_whole_checks(
    values: list[int], step: int, counting: bool
) -> None:
    from cassette_tui.core.format import _loader

    seqs = array("q", range(values[0], values[0] + len(values)) if counting and values else values)
    ascending = all(x < y for x, y in zip(seqs, seqs[1:], strict=False))
    counts_up = bool(seqs) and list(seqs) == list(range(seqs[0], seqs[0] + len(seqs)))
    old = _loader._CHECK_STEP
    _loader._CHECK_STEP = step
    try:
        for column in (seqs, spill.spilled(seqs) if seqs else seqs):
            assert _loader._ascending(column) == ascending
            compact = _loader._compact_seqs(column)  # type: ignore[arg-type]
            assert isinstance(compact, range) == counts_up
            assert list(compact) == list(seqs)
    finally:
        _loader._CHECK_STEP = old
