"""``diff``'s row list keeps its columns under the header past 99,999 rows (``--limit 0``
on two 100k-step runs): the number columns widen to the last row's digits; before, the
row 100000 and its seqs pushed the status and tool right of the rows above."""

from __future__ import annotations

from cassette_tui.core.diff.model import Row, Status
from cassette_tui.tui.commands.diff import (
    ROW_HEADER,
    _column_width,
    _row_header,
    _row_line,
)


def _row(seq: int) -> Row:
    return Row(a=None, b=seq - 1, a_seq=None, b_seq=seq, status=Status.ONLY_B, tool="read_file")


def test_columns_line_up_past_99999_rows() -> None:
    width = _column_width(100_000)
    header = _row_header(width)
    lines = [_row_line(seq - 1, _row(seq), width).plain for seq in (2, 99_999, 100_000)]
    for column in ("status", "tool"):
        at = header.index(column)
        assert {line.index("only B" if column == "status" else "read_file") for line in lines} == {
            at
        }, (header, lines)
    for line in lines:  # each number ends under its heading
        assert line.index("  ..") == header.index("  RE")


def test_up_to_99999_rows_the_columns_are_as_before() -> None:
    assert _column_width(99_999) == 5
    assert _row_header(5) == ROW_HEADER
