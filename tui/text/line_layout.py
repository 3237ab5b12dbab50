"""A Rich renderable laid out line by line, on demand: only the lines asked for are built.

A step's detail may hold 2,000 lines of a value that wrap to twice as many; Rich renders
a renderable whole, so drawing it took most of a second on the UI thread, though a screen
shows 40 lines. ``LineLayout`` gives the same lines as Rich's render of the whole (the
lines Textual's ``Static`` draws), one at a time:

* the height of a text at a width comes from Rich's own line breaking (``divide_line``) on
  its plain lines, with no styles and no segments: a line that fits is one line uncounted;
* a line is built by rendering only the text line that holds it (with Rich, so it looks
  the same), kept for the next frame;
* a ``Table`` with no borders (the A and B columns of the detail) is laid out row by row
  with the column widths Rich gives it, each cell by the same two rules;
* anything else (a small part) is rendered whole once per width.

``tests/tui/test_line_layout.py`` holds that the lines equal Rich's render of the whole.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Protocol

from rich._wrap import divide_line
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

Line = list[Segment]
#: lines built and kept at one width; past this they are built again when shown
KEPT_TEXT_LINES = 4_096


class _Block(Protocol):
    """A part of a layout: its height and its lines at a width."""

    def height(self, width: int) -> int: ...

    def line(self, width: int, y: int) -> Line: ...


class _TextLines:
    """The lines of a ``Text`` rendered with ``options`` at a width, each built on demand.

    ``pad`` and ``style`` are those of ``Console.render_lines`` (a table cell pads its
    lines to its width and styles them); ``padding``: the left and right padding of a
    table cell around the text (``rich.padding.Padding``)."""

    def __init__(
        self,
        text: Text,
        options: _Options,
        *,
        pad: bool = False,
        style: Style | None = None,
        padding: Padding | None = None,
    ) -> None:
        self._text = text
        self._options = options
        self._pad = pad
        self._style = style
        self._padding = padding
        self._plain = text.plain.split("\n")
        self._split: list[Text] | None = None
        # what Text.__rich_console__ hands to Text.wrap
        self._no_wrap = bool(text.no_wrap if text.no_wrap is not None else options.no_wrap)
        self._fold = (text.overflow or options.overflow or "fold") == "fold"
        self._width = -1
        self._starts: list[int] = [0]
        self._built: dict[int, list[Line]] = {}

    def _inner(self, width: int) -> int:
        if self._padding is None:
            return width
        return width - self._padding.left - self._padding.right

    def _line_height(self, plain: str, width: int) -> int:
        if self._no_wrap or width <= 0:
            return 1
        if "\t" in plain:  # Text.wrap expands tabs first
            tabs, size = Text(plain), self._text.tab_size
            tabs.expand_tabs((self._options.console.tab_size if size is None else size) or 8)
            plain = tabs.plain
        if cell_len(plain) <= width:
            return 1
        return len(divide_line(plain, width, fold=self._fold)) + 1

    def _at(self, width: int) -> None:
        if width != self._width:
            inner = self._inner(width)
            heights = (self._line_height(plain, inner) for plain in self._plain)
            self._starts = [0, *accumulate(heights)]
            self._built = {}
            self._width = width

    def height(self, width: int) -> int:
        self._at(width)
        return self._starts[-1]

    def _render(self, text: Text, width: int) -> list[Line]:
        renderable: RenderableType = text
        if self._padding is not None:
            pad = self._padding
            renderable = Padding(text, (0, pad.right, 0, pad.left), style=pad.style)
        return self._options.console_lines(renderable, width, self._pad, self._style)

    def _logical(self, index: int) -> Text:
        if len(self._plain) == 1:
            return self._text
        if self._split is None:
            # as Text.wrap splits; the lines keep what the whole text decides for them
            text = self._text
            self._split = list(text.split("\n", allow_blank=True))
            for part in self._split:
                part.no_wrap, part.tab_size, part.end = text.no_wrap, text.tab_size, "\n"
        return self._split[index]

    def line(self, width: int, y: int) -> Line:
        self._at(width)
        index = bisect_right(self._starts, y) - 1
        built = self._built.get(index)
        if built is None:
            if len(self._built) >= KEPT_TEXT_LINES:
                self._built.clear()
            built = self._built[index] = self._render(self._logical(index), width)
        offset = y - self._starts[index]
        return built[offset] if offset < len(built) else (built[-1] if built else [])


class _Whole:
    """A renderable rendered whole, once per width (a small part of a layout)."""

    def __init__(
        self,
        renderable: RenderableType,
        options: _Options,
        *,
        pad: bool = False,
        style: Style | None = None,
    ) -> None:
        self._renderable = renderable
        self._options = options
        self._pad = pad
        self._style = style
        self._width = -1
        self._lines: list[Line] = []

    def _at(self, width: int) -> list[Line]:
        if width != self._width:
            self._lines = self._options.console_lines(
                self._renderable, width, self._pad, self._style
            )
            self._width = width
        return self._lines

    def height(self, width: int) -> int:
        return len(self._at(width))

    def line(self, width: int, y: int) -> Line:
        return self._at(width)[y]


class _Options:
    """The console and the options a part renders with (its width set per call)."""

    def __init__(self, console: Console, options: ConsoleOptions) -> None:
        self.console = console
        self.options = options

    @property
    def no_wrap(self) -> bool | None:
        return self.options.no_wrap

    @property
    def overflow(self) -> str | None:
        return self.options.overflow

    def update(self, **changes: object) -> _Options:
        return _Options(self.console, self.options.update(**changes))  # type: ignore[arg-type]

    def console_lines(
        self, renderable: RenderableType, width: int, pad: bool, style: Style | None
    ) -> list[Line]:
        """``Console.render_lines`` at ``width``, as Textual's ``Static`` splits them."""
        return self.console.render_lines(
            renderable, self.options.update_width(max(1, width)), style=style, pad=pad
        )


def _block(renderable: RenderableType, options: _Options) -> _Block:
    if isinstance(renderable, Text) and renderable.end == "\n":
        return _TextLines(renderable, options)
    if isinstance(renderable, Table) and _TableLines.supports(renderable):
        return _TableLines(renderable, options)
    return _Whole(renderable, options)


def _cell(renderable: RenderableType, options: _Options, style: Style) -> _Block:
    """A table cell as ``Table._render`` renders it: ``render_lines`` padded, styled."""
    if (
        isinstance(renderable, Padding)
        and isinstance(renderable.renderable, Text)
        and renderable.renderable.end == "\n"
        and renderable.top == renderable.bottom == 0
        and renderable.expand
    ):
        return _TextLines(
            renderable.renderable,
            options,
            pad=True,
            style=style,
            padding=renderable,
        )
    return _Whole(renderable, options, pad=True, style=style)


class _TableLines:
    """A ``Table`` with no borders, title, caption, footer or row styles, row by row: the
    lines of ``Table._render`` with the widths of ``Table._calculate_column_widths``."""

    @staticmethod
    def supports(table: Table) -> bool:
        return (
            table.box is None
            and not (table.title or table.caption or table.show_footer)
            and not (table.style or table.row_styles or table.leading or table.show_lines)
            and table.width is None
            and all(row.style is None and not row.end_section for row in table.rows)
            and bool(table.columns)
        )

    def __init__(self, table: Table, options: _Options) -> None:
        self._table = table
        self._options = options
        self._width = -1
        self._widths: list[int] = []
        self._rows: list[list[tuple[_Block, str, Style]]] = []
        self._starts: list[int] = [0]
        self._heights: list[int] = []

    def _at(self, width: int) -> None:
        if width == self._width:
            return
        table, console = self._table, self._options.console
        widths = table._calculate_column_widths(
            console, self._options.options.update_width(max(1, width))
        )
        render = self._options.update(width=sum(widths), highlight=table.highlight, height=None)
        columns = []
        for index, (w, column) in enumerate(zip(widths, table.columns, strict=True)):
            options = render.update(
                width=w,
                justify=column.justify,
                no_wrap=column.no_wrap,
                overflow=column.overflow,
                height=None,
                highlight=column.highlight,
            )
            columns.append([(cell, options) for cell in table._get_cells(console, index, column)])
        get_style = console.get_style
        self._rows = []
        for number, cells in enumerate(zip(*columns, strict=True)):
            header = number == 0 and table.show_header
            row = []
            for cell, cell_options in cells:
                style = get_style(cell.style)
                vertical = "bottom" if header else (cell.vertical or "top")
                row.append((_cell(cell.renderable, cell_options, style), vertical, style))
            self._rows.append(row)
        self._widths = widths
        self._heights = [
            max([1, *(block.height(w) for (block, _, _), w in zip(row, widths, strict=True))])
            for row in self._rows
        ]
        self._starts = [0, *accumulate(self._heights)]
        self._width = width

    def height(self, width: int) -> int:
        self._at(width)
        return self._starts[-1]

    def line(self, width: int, y: int) -> Line:
        self._at(width)
        number = bisect_right(self._starts, y) - 1
        offset = y - self._starts[number]
        row_height = self._heights[number]
        out: Line = []
        for (block, vertical, style), w in zip(self._rows[number], self._widths, strict=True):
            height = block.height(w)
            extra = row_height - height
            # Segment.align_top / align_middle / align_bottom
            above = 0 if vertical == "top" else (extra // 2 if vertical == "middle" else extra)
            k = offset - above
            out.extend(block.line(w, k) if 0 <= k < height else [Segment(" " * w, style)])
        return out


def _flatten(renderable: RenderableType) -> Iterator[RenderableType]:
    if isinstance(renderable, Group) and not renderable.fit:
        for part in renderable.renderables:
            yield from _flatten(part)
    else:
        yield renderable


class LineLayout:
    """``renderable`` as lines at a width, each built when asked for.

    ``options``: the console options it renders with (Textual's ``app.console_options``);
    ``style``: a style under every segment (the widget's, as ``Static`` applies it).
    ``height(width)`` counts the lines (cheap: no line is built); ``lines(width, start,
    stop)`` builds lines ``start`` to ``stop - 1``, each a list of ``Segment``, no wider
    than ``width``."""

    def __init__(
        self,
        renderable: RenderableType,
        console: Console,
        options: ConsoleOptions | None = None,
        style: Style | None = None,
    ) -> None:
        self.renderable = renderable
        base = _Options(console, (options or console.options).update(highlight=False, height=None))
        self._blocks: list[_Block] = [_block(part, base) for part in _flatten(renderable)]
        self._style = style
        self._width = -1
        self._starts: list[int] = [0]

    def _at(self, width: int) -> None:
        if width != self._width:
            self._starts = [0, *accumulate(block.height(width) for block in self._blocks)]
            self._width = width

    def height(self, width: int) -> int:
        """How many lines the renderable takes at ``width`` cells."""
        self._at(width)
        return self._starts[-1]

    def lines(self, width: int, start: int, stop: int) -> list[Line]:
        """Lines ``start`` to ``stop - 1`` (fewer past the end) at ``width`` cells."""
        self._at(width)
        out: list[Line] = []
        for y in range(max(0, start), min(stop, self._starts[-1])):
            index = bisect_right(self._starts, y) - 1
            line = self._blocks[index].line(width, y - self._starts[index])
            if self._style:
                line = list(Segment.apply_style(line, self._style))
            out.append(line)
        return out

    def text(self, width: int) -> str:
        """Every line as plain text (for tests and a plain view): rendered whole."""
        return "\n".join(_plain(line) for line in self.lines(width, 0, self.height(width)))


def _plain(line: Iterable[Segment]) -> str:
    return "".join(segment.text for segment in line)


def rich_lines(renderable: RenderableType, console: Console, width: int) -> Sequence[Line]:
    """Rich's render of the whole at ``width``, split as Textual's ``Static`` splits it
    (the reference ``LineLayout`` is held to)."""
    options = console.options.update(highlight=False, width=width, height=None)
    segments = console.render(renderable, options)
    return list(Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False))
