"""A Rich renderable laid out line by line, on demand: only the lines asked for are built.

A step's detail may hold 2,000 lines of a value that wrap to twice as many; Rich renders
a renderable whole, so drawing it took most of a second on the UI thread, though a screen
shows 40 lines. ``LineLayout`` gives the same lines as Rich's render of the whole (the
lines Textual's ``Static`` draws), one at a time:

* the height of a text at a width is counted on its plain lines by the steps of Rich's
  line breaking (``divide_line``), with no styles and no segments: a line that fits is
  one line, uncounted;
* a line is built by rendering only the text line that holds it (with Rich, so it looks
  the same), kept for the next frame;
* a ``Table`` with no borders (the A and B columns of the detail) is laid out row by row
  with the column widths Rich gives it, each cell by the same two rules;
* anything else (a small part) is rendered whole once per width.

``tests/tui/test_line_layout.py`` holds that the lines equal Rich's render of the whole.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Protocol

from rich._ratio import ratio_distribute
from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Span, Text

Line = list[Segment]
#: lines built and kept at one width; past this they are built again when shown
KEPT_TEXT_LINES = 4_096
#: counts of long text lines kept, over the widths a layout was shown at
KEPT_COUNTS = 65_536


_WORD = re.compile(r"\s*\S+\s*")  # rich._wrap.re_word


def wrapped_rows(plain: str, width: int, fold: bool = True) -> int:
    """How many lines ``Text.wrap`` makes of one line ``plain`` (no newline, tabs
    expanded) at ``width`` cells: ``len(divide_line(plain, width, fold)) + 1``, counted by
    the same steps as ``rich._wrap.divide_line`` with a word of printable ASCII (one cell
    a character) measured by its length: 3x faster, and a detail's 4,000 lines are
    counted at each width it is shown at."""
    if fold and plain.isascii() and plain.isprintable():
        return _ascii_rows(plain, width)
    breaks = offset = 0
    for match in _WORD.finditer(plain):
        start, word = match.start(), match.group()
        ascii_word = word.isascii() and word.isprintable()
        if ascii_word:
            size, length = len(word.rstrip()), len(word)
        else:
            size, length = cell_len(word.rstrip()), cell_len(word)
        if width - offset >= size:
            offset += length
        elif size > width:
            if fold and ascii_word:  # pieces of ``width`` cells, each after a break
                pieces = -(-length // width)
                breaks += pieces - 1 + (1 if start else 0)
                offset = length - (pieces - 1) * width
            elif fold:  # as divide_line: a piece may be empty (a wide character at 1 cell)
                folded = chop_cells(word, width)
                for piece in folded[:-1]:
                    breaks += 1 if start else 0
                    start += len(piece)
                breaks += 1 if start else 0
                offset = cell_len(folded[-1])
            else:
                breaks += 1 if start else 0
                offset = length
        elif offset and start:
            breaks += 1
            offset = length
    return breaks + 1


_NOT_BLANK = re.compile(r"[^ ]")


def _ascii_rows(plain: str, width: int) -> int:
    """``wrapped_rows(plain, width, True)`` of printable ASCII (one cell a character, the
    blank the only space) a row at a time, not a word at a time (an expanded list's 2,000
    lines, 4 us each by words): the words of a row are those whose last character not
    blank is within ``width`` cells of where the row starts, so the first word that does
    not fit is the one holding the character at the row's end or, on a blank there, the
    next one. That word then starts a row (``divide_line``'s break), or, wider than a
    row, is folded into pieces of ``width`` (its blanks after it counted in its last),
    the row after it starting ``width`` cells after its last piece's start."""
    n = len(plain)
    first = _NOT_BLANK.search(plain)
    if first is None:
        return 1  # no word
    lead = first.start()  # the first word starts at 0, its blanks before it included
    breaks = row = 0  # ``row``: where the row starts (in a folded word, where it would)
    while True:
        end = row + width
        if end >= n:
            return breaks + 1
        if plain[end] == " ":
            found = _NOT_BLANK.search(plain, end)
            if found is None:
                return breaks + 1  # only blanks left: the last word's
            run = found.start()
        else:
            run = plain.rfind(" ", 0, end) + 1
        word = 0 if run == lead else run  # where the word that does not fit starts
        run_end = plain.find(" ", run)
        run_end = n if run_end < 0 else run_end
        if run_end - word > width:  # folded: pieces of ``width``, blanks after it too
            after = _NOT_BLANK.search(plain, run_end)
            length = (n if after is None else after.start()) - word
            pieces = -(-length // width)
            breaks += pieces - 1 + (1 if word else 0)
            row = word + (pieces - 1) * width
        else:
            breaks += 1
            row = word


class _Block(Protocol):
    """A part of a layout: its height and its lines at a width."""

    def height(self, width: int) -> int: ...

    def least(self) -> int:
        """A height it has at any width, known without laying it out."""
        ...

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
        self._offsets: list[int] | None = None
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
        # A and B often hold the same lines: each is counted once a width
        key, counted = (plain, width, self._fold), self._options.counted
        rows = counted.get(key)
        if rows is None:
            if len(counted) > KEPT_COUNTS:
                counted.clear()
            rows = counted[key] = wrapped_rows(plain, width, self._fold)
        return rows

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

    def least(self) -> int:
        return len(self._plain)

    def _render(self, text: Text, width: int) -> list[Line]:
        renderable: RenderableType = text
        if self._padding is not None:
            pad = self._padding
            renderable = Padding(text, (0, pad.right, 0, pad.left), style=pad.style)
        return self._options.console_lines(renderable, width, self._pad, self._style)

    def _logical(self, index: int) -> Text:
        """Text line ``index`` as ``Text.split`` gives it to ``Text.wrap``, with what the
        whole text decides for it; made alone (splitting 2,000 lines took 20 ms)."""
        text = self._text
        if len(self._plain) == 1:
            return text
        if self._offsets is None:
            self._offsets = [0, *accumulate(len(plain) + 1 for plain in self._plain)]
        start, plain = self._offsets[index], self._plain[index]
        end = start + len(plain)
        line = text.blank_copy(plain)
        line.end = "\n"
        line.spans = [
            Span(max(0, span.start - start), min(end, span.end) - start, span.style)
            for span in text.spans
            if span.end > start and span.start < end
        ]
        return line

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

    def least(self) -> int:
        return 0  # its height at one width says nothing of another's

    def line(self, width: int, y: int) -> Line:
        return self._at(width)[y]


class _Options:
    """The console and the options a part renders with (its width set per call)."""

    def __init__(
        self,
        console: Console,
        options: ConsoleOptions,
        counted: dict[tuple[str, int, bool], int] | None = None,
    ) -> None:
        self.console = console
        self.options = options
        #: rows of a long text line at a width, shared by the parts of one layout
        self.counted: dict[tuple[str, int, bool], int] = {} if counted is None else counted

    @property
    def no_wrap(self) -> bool | None:
        return self.options.no_wrap

    @property
    def overflow(self) -> str | None:
        return self.options.overflow

    def update(self, **changes: object) -> _Options:
        options = self.options.update(**changes)  # type: ignore[arg-type]
        return _Options(self.console, options, self.counted)

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
            and table.style in (None, "", "none")
            and not (table.row_styles or table.leading or table.show_lines)
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
        #: the table rendered whole, at a width too narrow for a column's text
        self._whole: _Whole | None = None

    def _at(self, width: int) -> None:
        if width == self._width:
            return
        table, console = self._table, self._options.console
        widths = column_widths(table, console, self._options.options.update_width(max(1, width)))
        self._width = width
        self._whole = None
        if any(w - table._get_padding_width(i) < 1 for i, w in enumerate(widths)):
            self._whole = _Whole(table, self._options)
            return
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

    def height(self, width: int) -> int:
        self._at(width)
        return self._whole.height(width) if self._whole else self._starts[-1]

    def least(self) -> int:
        # a row is as tall as its tallest cell, a text cell as its text lines at least
        return sum(
            max([1, *(len(c.plain.split("\n")) for c in row if isinstance(c, Text))])
            for row in zip(*(column.cells for column in self._table.columns), strict=True)
        )

    def line(self, width: int, y: int) -> Line:
        self._at(width)
        if self._whole:
            return self._whole.line(width, y)
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


def column_widths(table: Table, console: Console, options: ConsoleOptions) -> list[int]:
    """``table._calculate_column_widths(console, options)``. A table that expands with
    every column sharing by a ratio (the detail's A and B) gives each column its share of
    the width whatever its cells hold: Rich measures every cell first all the same (the
    widest word of each line: 11 ms for the 2,000 lines of an expanded list a side), so
    those widths are worked out here the way Rich does, without the measure. Any other
    table, or one whose columns' least widths pass the width, is left to Rich."""
    columns = table.columns
    ratios = [column.ratio for column in columns]
    if not (table.expand and table.min_width is None and all(ratios)):
        return table._calculate_column_widths(console, options)
    max_width = options.max_width
    least = [(c.width or 1) + table._get_padding_width(c._index) for c in columns]
    widths = ratio_distribute(max_width, [r or 0 for r in ratios], least)
    total = sum(widths)
    if total > max_width:  # Rich collapses the columns by their measures
        return table._calculate_column_widths(console, options)
    if total < max_width:
        widths = [w + pad for w, pad in zip(widths, ratio_distribute(max_width - total, widths),
                                             strict=True)]  # fmt: skip
    return widths


def _flatten(renderable: RenderableType) -> Iterator[RenderableType]:
    if isinstance(renderable, Group):  # ``fit`` is of its measure, not of its lines
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

    def least(self) -> int:
        """A height it has at any width, known without laying it out (a pane knows from
        it that its scrollbar shows, and lays the detail out at one width only)."""
        return sum(block.least() for block in self._blocks)

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
