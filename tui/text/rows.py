"""What the step list shows, row by row: a diff of two cassettes, or one cassette alone.

A row model renders one row as ``Text`` when it scrolls into view (entries are parsed on
demand by the ``Cassette``), says which rows are worth jumping to (``notable``) and
whether a row matches a search. It presents what ``core`` computed; it never diffs.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from cassette_tui.core.diff.align import is_error_outcome
from cassette_tui.core.diff.model import Row, Status
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.constants import BATCH_FIELD
from cassette_tui.core.scan.masking import mask_found, mask_value
from cassette_tui.core.scan.pair_masking import mask_pieces_in, pair_secrets
from rich.style import Style
from rich.text import Text

from .marks import ERROR, LINT, PARALLEL, REPEATED, STATUS_MARKS
from .names import shorten
from .safe import args_summary, compact, printable

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult

Styles = Mapping[str, Style]
SEQ_WIDTH = 5


def seq_width(cassettes: list[Cassette | None]) -> int:
    """Cells for the seq column: 5, or more when a seq is longer (100000 shifted the
    columns of its row by one), its first cell kept for the parallel mark (``⇉``). Reads
    the largest and smallest seq (``-1`` is as wide as ``10``), not every seq's digits."""
    width = SEQ_WIDTH
    for cassette in cassettes:
        if cassette is not None and len(cassette):
            seqs = cassette.seqs
            width = max(width, len(str(max(seqs))) + 1, len(str(min(seqs))) + 1)
    return width


class RowModel(Protocol):
    """The rows of a step list."""

    def __len__(self) -> int: ...

    def render(self, index: int, width: int, styles: Styles) -> Text: ...

    def notable(self, index: int) -> bool: ...

    def matches(self, index: int, needle: str) -> bool: ...

    def next_notable(self, start: int, direction: int) -> int | None:
        """The first notable row after ``start`` going ``direction`` (1 down, -1 up), not
        ``start`` itself; ``None`` when there is none. Called on the UI thread for each
        ``n``/``N``: answered from an index, never by walking the rows."""
        ...


def next_in(notable: Sequence[int], start: int, direction: int) -> int | None:
    """The first index in the sorted ``notable`` after ``start`` going ``direction``
    (a binary search: ``n`` at 1M rows costs as little as at 10)."""
    if direction > 0:
        at = bisect_right(notable, start)
        return notable[at] if at < len(notable) else None
    at = bisect_left(notable, start)
    return notable[at - 1] if at > 0 else None


def _entry_matches(cassette: Cassette, i: int, needle: str) -> bool:
    """``needle`` (lower case) occurs in entry ``i``'s tool name, args or response."""
    if needle in cassette.tool(i).lower():
        return True
    # cheap pre-check on the stored bytes; a hit is confirmed on the parsed entry
    quick = needle.isascii() and '"' not in needle and "\\" not in needle
    if quick and needle.encode() not in cassette.raw_line(i).lower():
        return False
    try:
        entry = cassette[i]
    except Exception:  # noqa: BLE001 - an unreadable entry matches nothing (its row says why)
        return False
    outcome = entry.error if entry.is_error else entry.response
    return needle in compact(entry.args).lower() or needle in compact(outcome).lower()


def unreadable_reason(exc: BaseException) -> str:
    """One printable line for an entry the engine could not parse (shown on its row)."""
    return printable(f"unreadable entry: {type(exc).__name__}: {exc}")


def entry_is_error(cassette: Cassette, index: int) -> bool:
    """The entry errored (or answered HTTP 4xx/5xx); an unreadable entry counts as one, so
    that n/N stop on it and no key press has to parse it on the UI thread twice."""
    try:
        entry = cassette[index]
    except Exception:  # noqa: BLE001 - the row says why
        return True
    return is_error_outcome(entry.is_error, entry.response)


def _tool_names(cassettes: list[Cassette]) -> frozenset[str]:
    """Every tool name of the cassettes (shortened together: tui/text/names.py)."""
    return frozenset(c.tool(i) for c in cassettes for i in range(len(c)))


def _tool_width(names: frozenset[str]) -> int:
    return max([4, *(len(name) for name in names)])


def _side(
    cassette: Cassette,
    index: int | None,
    *,
    repeated: bool,
    width: int,
    tool_width: int,
    styles: Styles,
    base: str,
    seq_cells: int = SEQ_WIDTH,
    tool_names: frozenset[str] = frozenset(),
    reveal: bool = False,
    shown_args: tuple[Any] | None = None,
) -> Text:
    """One side of a row, exactly ``width`` cells wide; ``!`` when the entry is an error
    (raised, or answered HTTP 4xx/5xx), whatever the row's status (two 429s are ``=``);
    ``⇉`` before the seq when the call ran beside others (the recorder's ``batch``).
    Each secret in the args is masked (``mask_value``) unless ``reveal`` (``v``);
    ``shown_args``: the args masked already, in a 1-tuple (``_masked_pair``)."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if index is None:
        text.append("·" * width, styles.get("steplist--filler"))
        return text
    try:
        # read only here: the entry as held once ``_masked_pair`` has read it (no copy)
        entry = cassette[index] if shown_args is None else cassette.entry_view(index)
        args: Any = entry.args
        error, unreadable = is_error_outcome(entry.is_error, entry.response), ""
        parallel = type(entry.extra.get(BATCH_FIELD)) is int
    except Exception as exc:  # noqa: BLE001 - an entry the engine cannot parse: say so here
        # counted as an error, as entry_is_error does (its row says why)
        args, error, unreadable = None, True, unreadable_reason(exc)
        parallel = False
    if parallel:  # in the seq column's first cell, which seq_width keeps free
        text.append(PARALLEL.glyph, styles.get(PARALLEL.style))
        text.append(f"{cassette.seq(index):>{seq_cells - 1}}", styles.get("steplist--seq"))
    else:
        text.append(f"{cassette.seq(index):>{seq_cells}}", styles.get("steplist--seq"))
    text.append(REPEATED.glyph if repeated else " ", styles.get(REPEATED.style))
    text.append(ERROR.glyph if error else " ", styles.get(ERROR.style))
    tw = min(tool_width, max(4, width // 2 - seq_cells))
    # cut so that tools that differ still read differently (tui/text/names.py)
    full = cassette.tool(index)
    masked = full if reveal else mask_value(full)  # a token used as a tool name (issue 26)
    # a masked name is cut as it reads; the others so that tools that differ still differ
    cut = masked[:tw] if masked is not full else shorten(tool_names, tw).get(full) or full[:tw]
    tool = printable(cut)
    text.append(f"{tool:<{tw}} ", styles.get(base))
    if unreadable:
        text.append(f"⚠ {unreadable}", styles.get("steplist--error"))
    else:
        if shown_args is None:
            shown_args = (args if reveal else mask_value(args),)
        text.append(args_summary(shown_args[0], limit=max(width, 8)), styles.get("steplist--args"))
    text.truncate(width, overflow="ellipsis", pad=True)
    return text


def _masked_pair(result: DiffResult, row: Row) -> tuple[tuple[Any] | None, tuple[Any] | None]:
    """Both sides' args of a row masked, each in a 1-tuple, the secrets one side's scan
    found and the other's did not (a token cut, or split by a space, on one side:
    ``core.scan.pair_masking``) masked on both; ``(None, None)`` for a row on one side
    only or an entry that does not parse (``_side`` masks or says why)."""
    if row.a is None or row.b is None:
        return None, None
    try:
        a, found_a = mask_found(result.a.entry_view(row.a).args)
        b, found_b = mask_found(result.b.entry_view(row.b).args)
    except Exception:  # noqa: BLE001 - an entry the engine cannot parse: its row says why
        return None, None
    carried = pair_secrets(found_a, found_b)
    return (mask_pieces_in(a, carried),), (mask_pieces_in(b, carried),)


class PairRows:
    """Rows of a ``DiffResult``: A on the left, the status mark between, B on the right.
    ``reveal``: secrets in the args shown whole (``v``); masked by default."""

    def __init__(self, result: DiffResult) -> None:
        self.reveal = False
        self.result = result
        self.rows: Sequence[Row] = result.rows
        # the rows that are not same, in order (the by-seq rows know their statuses
        # without being built); built here, in the worker that made the diff
        statuses = getattr(result.rows, "statuses", None)
        if statuses is None:
            statuses = [row.status for row in result.rows]
        same = Status.SAME
        self.notable_rows = [i for i, status in enumerate(statuses) if status is not same]
        if len(self.rows):
            # the by-seq rows count repeated keys when the first row is built: here, not
            # when the header or the first paint asks for one on the UI thread
            self.rows[result.first_divergence or 0]
        self._tool_names = _tool_names([result.a, result.b])
        self._tool_width = _tool_width(self._tool_names)
        self.seq_width = seq_width([result.a, result.b])

    def __len__(self) -> int:
        return len(self.rows)

    def render(self, index: int, width: int, styles: Styles) -> Text:
        row = self.rows[index]
        mark = STATUS_MARKS[row.status]
        side = max(10, (width - 3) // 2)
        base = "steplist--same" if row.status is Status.SAME else "steplist--row"
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        common: dict[str, Any] = {
            "width": side,
            "tool_width": self._tool_width,
            "tool_names": self._tool_names,
            "styles": styles,
            "base": base,
            "seq_cells": self.seq_width,
            "reveal": self.reveal,
        }
        a_args = b_args = None
        if not self.reveal and row.status is not Status.SAME:
            a_args, b_args = _masked_pair(self.result, row)
        line.append_text(
            _side(self.result.a, row.a, repeated=row.repeated_a, shown_args=a_args, **common)
        )
        line.append(f" {mark.glyph} ", styles.get(mark.style))
        line.append_text(
            _side(self.result.b, row.b, repeated=row.repeated_b, shown_args=b_args, **common)
        )
        if row.status is Status.SAME:
            line.stylize(styles.get("steplist--same", ""))
        return line

    def notable(self, index: int) -> bool:
        return self.rows[index].status is not Status.SAME

    def next_notable(self, start: int, direction: int) -> int | None:
        return next_in(self.notable_rows, start, direction)

    def search_sides(self) -> list[tuple[Cassette, Callable[[int], int | None]]]:
        """A and B, each with the row of each of its entries (``text/search.py``)."""
        from cassette_tui.core.diff.align import SeqRows

        from .search import identity, rows_of_entries

        if isinstance(self.rows, SeqRows):  # row i is entry i of each side
            return [(self.result.a, identity), (self.result.b, identity)]
        return [
            (self.result.a, rows_of_entries(self.rows, "a")),
            (self.result.b, rows_of_entries(self.rows, "b")),
        ]

    def matches(self, index: int, needle: str) -> bool:
        row = self.rows[index]
        return (row.a is not None and _entry_matches(self.result.a, row.a, needle)) or (
            row.b is not None and _entry_matches(self.result.b, row.b, needle)
        )


class SingleRows:
    """Rows of one cassette, marked with its lint findings (repeated keys, errors, ...)."""

    def __init__(
        self,
        cassette: Cassette,
        findings_by_seq: Mapping[int, list[Any]],
        *,
        notable: Sequence[int] | None = None,
    ) -> None:
        """``notable``: the entries with a finding or an error, in order (computed with the
        lint, in a worker); ``None`` until then, when ``n`` finds nothing. ``reveal``
        (set later): secrets in the args shown whole (``v``); masked by default."""
        self.reveal = False
        self.cassette = cassette
        self.findings_by_seq = findings_by_seq
        self.notable_rows: Sequence[int] = notable if notable is not None else ()
        self._tool_names = _tool_names([cassette])
        self._tool_width = _tool_width(self._tool_names)
        self.seq_width = seq_width([cassette])

    def __len__(self) -> int:
        return len(self.cassette)

    def _repeated(self, seq: int) -> bool:
        return any(f.kind == "repeated_key" for f in self.findings_by_seq.get(seq, ()))

    def render(self, index: int, width: int, styles: Styles) -> Text:
        cassette = self.cassette
        seq = cassette.seq(index)
        findings = self.findings_by_seq.get(seq, ())
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        line.append_text(
            _side(
                cassette,
                index,
                repeated=self._repeated(seq),
                width=max(10, width - 2),
                tool_width=self._tool_width,
                tool_names=self._tool_names,
                seq_cells=self.seq_width,
                styles=styles,
                base="steplist--row",
                reveal=self.reveal,
            )
        )
        others = [f for f in findings if f.kind != "repeated_key"]
        line.append(f" {LINT.glyph}" if others else "  ", styles.get(LINT.style))
        return line

    def notable(self, index: int) -> bool:
        if self.findings_by_seq.get(self.cassette.seq(index)):
            return True
        # the diff engine's rule: an error entry, or a response with an HTTP 4xx/5xx status
        return entry_is_error(self.cassette, index)

    def next_notable(self, start: int, direction: int) -> int | None:
        return next_in(self.notable_rows, start, direction)

    def search_sides(self) -> list[tuple[Cassette, Callable[[int], int | None]]]:
        """The cassette, whose entries are the rows (``text/search.py``)."""
        from .search import identity

        return [(self.cassette, identity)]

    def matches(self, index: int, needle: str) -> bool:
        return _entry_matches(self.cassette, index, needle)
