"""``StatusColumn`` (issue 31: row statuses in one byte a row, not a list's 8) reads as
the list of statuses it replaces, and the by-seq and packed rows' statuses equal their
rows' statuses."""

from __future__ import annotations

from pathlib import Path

from cassette_tui.core.diff.align import SeqRows, align_by_seq, seq_statuses
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.packed import PackedRows, StatusColumn
from cassette_tui.core.format.cassette import load
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

statuses = st.lists(st.sampled_from(list(Status)), max_size=60)


@given(statuses, st.data())
def test_reads_as_the_list(items: list[Status], data: st.DataObject) -> None:
    column = StatusColumn.of(items)
    assert len(column) == len(items)
    assert list(column) == items and column == items and items == column
    for i in range(-len(items), len(items)):
        assert column[i] is items[i]
    assert column[1:-1] == items[1:-1]
    if items:
        k = data.draw(st.integers(0, len(items) - 1))
        new = data.draw(st.sampled_from(list(Status)))
        column[k] = new
        items[k] = new
        assert column == items


#: a run: per call, its tool, args value and response value
runs = st.lists(
    st.tuples(st.sampled_from(["search", "read"]), st.integers(0, 3), st.integers(0, 2)),
    max_size=25,
)


@given(runs, runs)
def test_rows_statuses_are_their_rows(run_a: list, run_b: list) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, run in (("a", run_a), ("b", run_b)):
            records = [
                entry(s, t, {"q": q}, response={"v": v}) for s, (t, q, v) in enumerate(run, 1)
            ]
            paths.append(write_cassette(Path(d) / f"{name}.jsonl", *records))
        a, b = load(paths[0]), load(paths[1])
        rows = align_by_seq(a, b)
        expected = [row.status for row in rows]
        assert seq_statuses(a, b) == expected
        assert SeqRows(a, b).statuses == expected
        assert PackedRows(a, b, rows).statuses == expected


def test_shares_the_coded_column_with_tools() -> None:
    from cassette_tui.core.format.columns import CodedColumn, ToolColumn

    statuses = StatusColumn.of([Status.SAME, Status.ONLY_A])
    tools = ToolColumn.of(["search", "read"])
    assert isinstance(statuses, CodedColumn) and isinstance(tools, CodedColumn)
    assert repr(statuses) == f"StatusColumn({[Status.SAME, Status.ONLY_A]!r})"
    assert repr(tools) == "ToolColumn(['search', 'read'])"
    assert statuses != "ab" and statuses != tools
    assert tools.ids is tools.codes and tools.names is tools.values
