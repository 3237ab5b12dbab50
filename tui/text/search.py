"""The app's search over the rows of a screen (``/``, then ``n``/``N``), off the UI thread.

A row matches when the term (lower case) is in a side's tool name, args or response
(``RowModel.matches``). Looking at each row in turn parses every entry between the cursor
and the match: a row near the end of a 1M-entry cassette took minutes. So the search
looks at the nearest rows one by one (a match close by is found at once), then, for a
term the stored bytes can show (ASCII, no quote or backslash), reads each cassette file
once in large chunks for the lines holding the term (``core.format.line_search``) and
confirms only those rows on the parsed entries. The candidates are kept for ``n``/``N``.
Other terms, and rows with no file behind them, are looked at one by one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any, Protocol

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.jobs import CancelToken, Progress, run_job
from cassette_tui.core.format.line_search import lines_containing_job

__all__ = ["NEAR_ROWS", "RowSearch", "search_order"]

#: rows looked at one by one before the files are read for the term
NEAR_ROWS = 2_000
#: the fields of a stored line a match is in (``RowModel.matches``: the tool name, the
#: args and the outcome), not its seq, args digest or timing
SEARCHED_FIELDS = frozenset({"tool", "args", "response", "error"})


class SearchableRows(Protocol):
    def __len__(self) -> int: ...

    def matches(self, index: int, needle: str) -> bool: ...


#: a progress sink: the fraction of the search done, in [0, 1]
OnProgress = Callable[[float], None]


class RowSearch:
    """The search for ``needle`` (lower case) in the rows of ``model``. A model that
    has ``search_sides()`` (the cassettes behind its rows, each with a map from an entry
    index to its row) is searched through the files."""

    def __init__(self, model: SearchableRows, needle: str) -> None:
        self.model = model
        self.needle = needle
        self._rows: list[int] | None = None  # the candidate rows, sorted

    def find(
        self,
        cursor: int,
        direction: int,
        token: CancelToken,
        on_progress: OnProgress | None = None,
        include_current: bool = False,
    ) -> tuple[int, bool] | None:
        """The first matching row from ``cursor`` in ``direction`` (as ``search_order``
        visits them) and whether the search wrapped past the end to reach it; ``None``
        when no row matches. Raises ``Cancelled`` when ``token`` is cancelled."""
        model, needle = self.model, self.needle
        length = len(model)
        order = search_order(cursor, length, direction, include_current)
        if self._rows is None:
            for index, past_end in islice(order, NEAR_ROWS):
                if model.matches(index, needle):
                    return index, past_end
            self._rows = self._candidate_rows(token, on_progress)
        if self._rows is None:  # one by one, the rest of the way
            return _one_by_one(model, needle, order, length, token, on_progress)
        rows = self._rows
        for n, (index, past_end) in enumerate(_in_order(rows, cursor, direction, include_current)):
            token.raise_if_cancelled()
            if on_progress is not None and n % 256 == 255:  # many rows to confirm
                on_progress(n / len(rows))
            if model.matches(index, needle):
                return index, past_end
        return None

    def _candidate_rows(
        self, token: CancelToken, on_progress: OnProgress | None
    ) -> list[int] | None:
        """The rows whose stored lines hold the term, sorted; ``None`` when the files
        cannot tell (a term with a quote, a backslash or a non-ASCII letter, or a side
        with no file)."""
        needle = self.needle
        sides: Sequence[tuple[Cassette, Callable[[int], int | None]]] | None = getattr(
            self.model, "search_sides", lambda: None
        )()
        if not sides or not needle.isascii() or not needle.isprintable():
            return None
        if '"' in needle or "\\" in needle:
            return None
        spans = [cassette.line_spans() for cassette, _ in sides]
        if any(span is None for span in spans):
            return None
        total = sum(s[0][-1] + s[1][-1] - s[0][0] for s in spans if s is not None and s[0]) or 1
        done = 0
        rows: set[int] = set()
        for cassette, row_of in sides:

            def sink(progress: Progress, base: int = done) -> None:
                if on_progress is not None:
                    on_progress((base + progress.done) / total)

            job = lines_containing_job(cassette, needle.encode(), token, SEARCHED_FIELDS)
            entries = run_job(job, sink)
            if entries is None:
                return None
            for entry in entries:
                row = row_of(entry)
                if row is not None:
                    rows.add(row)
            span = cassette.line_spans()
            if span is not None and span[0]:
                done += span[0][-1] + span[1][-1] - span[0][0]
        return sorted(rows)


def _one_by_one(
    model: SearchableRows,
    needle: str,
    order: Iterator[tuple[int, bool]],
    length: int,
    token: CancelToken,
    on_progress: OnProgress | None,
) -> tuple[int, bool] | None:
    for n, (index, past_end) in enumerate(order, NEAR_ROWS):
        if n % 512 == 0:
            token.raise_if_cancelled()
            if on_progress is not None and n % 4096 == 0:
                on_progress(n / max(length, 1))
        if model.matches(index, needle):
            return index, past_end
    return None


def _in_order(
    rows: list[int], cursor: int, direction: int, include_current: bool
) -> Iterator[tuple[int, bool]]:
    """The sorted ``rows`` in the order ``search_order`` visits them, each with whether
    it is past the end."""
    start = cursor if include_current else cursor + direction
    if direction > 0:
        at = bisect_left(rows, start)
        yield from ((row, False) for row in rows[at:])
        yield from ((row, True) for row in rows[:at])
    else:
        at = bisect_right(rows, start)
        yield from ((row, False) for row in reversed(rows[:at]))
        yield from ((row, True) for row in reversed(rows[at:]))


def search_order(
    cursor: int, length: int, direction: int, include_current: bool = False
) -> Iterator[tuple[int, bool]]:
    """The rows a search visits from row ``cursor`` of ``length`` rows, in ``direction``
    (1: down, -1: up), each with whether it is past the end (wrapped around to the other
    end, as less and vim do): down from the row after the cursor (or the cursor itself
    with ``include_current``) to the last row, then from the first row back to the cursor;
    up likewise. Every row once, the cursor's row last unless ``include_current``."""
    if length <= 0:
        return
    first = cursor if include_current else cursor + direction
    for step in range(length):
        index = first + step * direction
        yield index % length, not 0 <= index < length


def identity(index: int) -> int | None:
    """The row of entry ``index`` where rows are the entries (one cassette, by seq)."""
    return index


def rows_of_entries(rows: Sequence[Any], side: str) -> Callable[[int], int | None]:
    """The row of each entry of side ``side`` (``"a"`` or ``"b"``) of aligned ``rows``."""
    where: dict[int, int] = {}
    for n, row in enumerate(rows):
        entry = getattr(row, side)
        if entry is not None:
            where.setdefault(entry, n)
    return where.get
