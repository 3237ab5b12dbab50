"""``LineLayout`` builds a detail's lines one by one, and they are the lines Rich renders
for the whole detail (what the pane drew before it rendered only the lines shown): the same
text, styles and count, at any width, for texts, borderless tables and anything else."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from cassette_tui.tui.text.line_layout import (
    Line,
    LineLayout,
    column_widths,
    rich_lines,
    wrapped_rows,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich._wrap import divide_line
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

CONSOLE = Console(width=200, color_system="truecolor", force_terminal=True, legacy_windows=False)
BASE = Style(color="white", bgcolor="black")

words = st.sampled_from(
    ["a", "fox", "jumps", "  ", " ", "", "\t", "界界", "x" * 45, "ünï", "é", "-", "…", "0123456789"]
)
line = st.lists(words, max_size=14).map(" ".join)
styles = st.sampled_from(["", "bold", "dim italic", "red", "on blue", "underline green"])


@st.composite
def texts(draw: st.DrawFn) -> Text:
    text = Text(
        "\n".join(draw(st.lists(line, min_size=1, max_size=8))),
        style=draw(styles),
        overflow=draw(st.sampled_from([None, "fold", "ellipsis", "crop"])),
        no_wrap=draw(st.sampled_from([None, False, True])),
    )
    for _ in range(draw(st.integers(0, 3))):  # spans, some across lines
        start = draw(st.integers(0, max(0, len(text) - 1)))
        text.stylize(draw(styles), start, start + draw(st.integers(0, 30)))
    if draw(st.booleans()):
        text.append("\n… 12 more lines, press e to expand", style="dim italic")
    return text


@st.composite
def tables(draw: st.DrawFn) -> Table:
    grid = draw(st.booleans())
    table = (
        Table.grid(padding=(0, 2, 0, 0))
        if grid
        else Table(box=None, expand=True, show_header=True, padding=(0, 1, 0, 0))
    )
    columns = draw(st.integers(1, 3))
    for n in range(columns):
        table.add_column(Text(f"{'AB'[n % 2]} args", style="bold"), ratio=None if grid else 1)
    for _ in range(draw(st.integers(1, 4))):
        table.add_row(*(draw(st.one_of(texts(), st.just(Text("·", style="dim"))))
                        for _ in range(columns)))  # fmt: skip
    return table


parts = st.one_of(
    texts(),
    tables(),
    st.builds(lambda t: Panel(t, title="findings"), texts()),
    st.builds(lambda t: Text(t.plain[:40], no_wrap=True, overflow="ellipsis"), texts()),
)


def _simple(lines: Sequence[Line]) -> list[list[tuple[str, Style | None]]]:
    """Lines as (text, style) runs: two renders may cut a run of one style differently,
    and leave a segment unstyled (``None``) or with the null style."""
    return [
        [
            (s.text, s.style)
            for s in Segment.simplify(Segment(t, st or Style()) for t, st, _ in line)
            if s.text
        ]
        for line in lines
    ]


def _same_as_rich(renderable: RenderableType, width: int) -> None:
    layout = LineLayout(renderable, CONSOLE, style=BASE)
    expected = rich_lines(Group(renderable) if isinstance(renderable, Table) else renderable,
                          CONSOLE, width)  # fmt: skip
    styled = [list(Segment.apply_style(line, BASE)) for line in expected]
    height = layout.height(width)
    assert height == len(expected)
    assert _simple(layout.lines(width, 0, height)) == _simple(styled)
    # one line at a time, from the end back, as a scroll to the end builds them
    for y in reversed(range(height)):
        assert _simple(layout.lines(width, y, y + 1)) == _simple(styled[y : y + 1])


@settings(max_examples=100, deadline=None)
@given(st.lists(parts, min_size=1, max_size=4), st.integers(12, 120))
def test_the_lines_are_those_of_rich_rendering_the_whole(
    renderables: list[RenderableType], width: int
) -> None:
    _same_as_rich(Group(*renderables), width)


@settings(max_examples=100, deadline=None)
@given(tables(), st.integers(8, 120), st.integers(8, 120))
def test_a_table_follows_a_change_of_width(table: Table, first: int, then: int) -> None:
    layout = LineLayout(Group(table), CONSOLE)
    layout.lines(first, 0, layout.height(first))
    assert _simple(layout.lines(then, 0, layout.height(then))) == _simple(
        rich_lines(Group(table), CONSOLE, then)
    )


def test_a_long_value_counts_its_lines_without_building_them() -> None:
    """2,000 lines that fold to 4,000 at 60 cells: counted, and only the lines asked for
    are built."""
    value = "\n".join(f'"line {i}: the quick brown fox jumps over the lazy dog, ok {i}",'
                      for i in range(2000))  # fmt: skip
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1, 0, 0))
    table.add_column("A response", ratio=1)
    table.add_column("B response", ratio=1)
    table.add_row(Text(value, overflow="fold"), Text(value, overflow="fold"))
    layout = LineLayout(Group(Text("seq 2 · read_doc", no_wrap=True), table), CONSOLE)
    width = 120
    rendered: list[object] = []
    original = CONSOLE.render_lines

    def counting(*args: object, **kwargs: object) -> list[Line]:
        rendered.append(args[0])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    CONSOLE.render_lines = counting  # type: ignore[method-assign]
    try:
        height = layout.height(width)
        assert height > 4000
        # counted, not rendered: only the column heads (two words) were
        assert not any(isinstance(r, Padding) and isinstance(r.renderable, Text)
                       for r in rendered)  # fmt: skip
        rendered.clear()
        last = layout.lines(width, height - 3, height)
    finally:
        del CONSOLE.render_lines
    # the cells of the last two text lines (the last one folds), on each side
    assert sum(isinstance(r, Padding) for r in rendered) == 4
    assert "lazy dog, ok 1999" in "".join(s.text for line in last for s in line)
    assert _simple(last) == _simple(rich_lines(layout.renderable, CONSOLE, width)[-3:])


plain_lines = st.text(
    st.sampled_from(list("ab  -.,x\u00e9…界\u0301\u00a0")), max_size=200
) | st.lists(
    st.sampled_from(["a", "fox", " ", "   ", "x" * 45, "0123456789" * 3, "…(+9 chars)", "界" * 30]),
    max_size=20,
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(plain_lines, st.integers(1, 90), st.booleans())
@example("界", 1, True)  # chop_cells makes an empty first piece: no break before it
def test_rows_are_counted_as_rich_breaks_the_line(plain: str, width: int, fold: bool) -> None:
    assert wrapped_rows(plain, width, fold) == len(divide_line(plain, width, fold=fold)) + 1


@settings(max_examples=200, deadline=None)
@given(st.lists(parts, min_size=1, max_size=4), st.integers(12, 120))
def test_the_least_height_is_one_it_has(renderables: list[RenderableType], width: int) -> None:
    layout = LineLayout(Group(*renderables), CONSOLE)
    assert layout.least() <= layout.height(width)


@st.composite
def ratio_tables(draw: st.DrawFn) -> Table:
    """Tables that expand, their columns by a ratio (or not, or of ratio 0), some with a
    least width, any padding."""
    table = Table(
        box=None,
        expand=draw(st.booleans()) or draw(st.booleans()),
        show_header=draw(st.booleans()),
        padding=(0, draw(st.integers(0, 3)), 0, draw(st.integers(0, 3))),
        pad_edge=draw(st.booleans()),
        collapse_padding=draw(st.booleans()),
        min_width=draw(st.none() | st.none() | st.integers(1, 80)),
    )
    columns = draw(st.integers(1, 4))
    for n in range(columns):
        table.add_column(
            f"col {n}",
            ratio=draw(st.sampled_from([1, 1, 2, 3, 0, None])),
            width=draw(st.none() | st.none() | st.integers(1, 40)),
            no_wrap=draw(st.booleans()),
        )
    for _ in range(draw(st.integers(0, 3))):
        table.add_row(*(draw(texts()) for _ in range(columns)))
    return table


@settings(max_examples=100, deadline=None)
@given(ratio_tables(), st.integers(1, 150))
def test_the_columns_are_as_wide_as_rich_makes_them(table: Table, width: int) -> None:
    options = CONSOLE.options.update_width(width)
    assert column_widths(table, CONSOLE, options) == table._calculate_column_widths(
        CONSOLE, options
    )


def test_a_table_of_ratio_columns_is_laid_out_without_measuring_its_cells(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The detail's A and B share the width half and half whatever they hold: the 2,000
    lines of an expanded answer are not measured (Rich's measure of every word of them
    took 11 ms a side) to find it."""
    value = "\n".join(f"line {i}: the quick brown fox" for i in range(2000))
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1, 0, 0))
    table.add_column("A response", ratio=1)
    table.add_column("B response", ratio=1)
    table.add_row(Text(value), Text(value))
    expected = rich_lines(Group(table), CONSOLE, 120)

    def measured(*args: object) -> None:
        raise AssertionError("a cell measured")

    monkeypatch.setattr(Table, "_measure_column", measured)
    layout = LineLayout(Group(table), CONSOLE)
    assert layout.height(120) == len(expected)
    assert _simple(layout.lines(120, 0, 5)) == _simple(expected[:5])


ascii_lines = st.lists(
    st.sampled_from(["a", "fox", "jumps,", " ", "  ", "   ", "x" * 12, "y" * 45, "-"]),
    max_size=40,
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(ascii_lines, st.integers(1, 60))
@example(" " * 5 + "x" * 9 + " " * 3 + "ab", 4)  # blanks before the first word, folded
@example("ab " + " " * 20 + "cd", 3)  # a row's end in a run of blanks
def test_ascii_rows_are_counted_as_rich_breaks_the_line(plain: str, width: int) -> None:
    """Printable ASCII is counted a row at a time (``_ascii_rows``): as Rich breaks it."""
    assert wrapped_rows(plain, width, True) == len(divide_line(plain, width, fold=True)) + 1
