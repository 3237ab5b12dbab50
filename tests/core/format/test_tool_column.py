"""``ToolColumn`` (issue 31: tool names as 1-2 byte ids, not a list reference an entry)
reads as the list of names it replaces, in memory and with its ids in a temporary file,
and a loaded cassette's tools are the file's."""

from __future__ import annotations

from array import array
from pathlib import Path

from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.columns import ToolColumn
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

names = st.lists(st.sampled_from(["search", "read", "fetch", "é", ""]), max_size=60)


def _same_as_list(column: ToolColumn, tools: list[str]) -> None:
    assert len(column) == len(tools)
    assert list(column) == tools
    assert column == tools and tools == column
    for i in range(-len(tools), len(tools)):
        assert column[i] == tools[i]
    for start in (None, 0, 1, len(tools) // 2, -3):
        for stop in (None, 2, len(tools), -1):
            assert column[start:stop] == tools[start:stop]
            assert list(column[start:stop]) == tools[start:stop]


@given(names)
def test_reads_as_the_list(tools: list[str]) -> None:
    column = ToolColumn.of(tools)
    assert isinstance(column.ids, array) and column.ids.itemsize == 1
    _same_as_list(column, tools)


def test_many_names_take_two_bytes() -> None:
    tools = [f"tool{k % 300}" for k in range(1000)]
    column = ToolColumn.of(tools)
    assert column.ids.itemsize == 2
    _same_as_list(column, tools)


def test_spilled_ids_read_the_same() -> None:
    tools = [("search", "read", "fetch")[k % 3] for k in range(spill.SPILL_MIN_ITEMS + 5)]
    column = ToolColumn.of(tools)
    with spill.spilling():
        column.ids = spill.maybe_spilled(column.ids)
    assert isinstance(column.ids, memoryview)
    assert column == tools
    assert column[-1] == tools[-1] and list(column[3:9]) == tools[3:9]


def test_loaded_tools_are_the_files(tmp_path: Path) -> None:
    tools = ["search", "read", "search", "fetch", "read"]
    path = write_cassette(
        tmp_path / "c.jsonl", *[entry(s, t, {"q": s}) for s, t in enumerate(tools, 1)]
    )
    c = load(path)
    assert [c.tool(i) for i in range(len(c))] == tools
    assert [e.tool for e in c] == tools
    assert [c.tool(i) for i in range(3)] == [c.first(3).tool(i) for i in range(3)]


@given(
    st.lists(st.integers(0, 400), max_size=80),
    st.lists(st.integers(0, 80), max_size=6),
)
def test_a_column_made_a_batch_at_a_time_is_the_whole_ones(
    numbers: list[int], cuts: list[int]
) -> None:
    from cassette_tui.core.format.columns import ToolColumnBuilder

    tools = [f"tool{k}" for k in numbers]  # past 256 names: the ids widen on the way
    builder = ToolColumnBuilder()
    start = 0
    for cut in sorted(cuts):
        builder.add(tools[start:cut])
        start = max(start, cut)
    made = builder.column(tools[start:])
    whole = ToolColumn.of(tools)
    assert made.names == whole.names
    assert made.ids.typecode == whole.ids.typecode and made.ids == whole.ids
    _same_as_list(made, tools)
