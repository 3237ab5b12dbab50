"""Diff two cassettes: the entry point of the app and of ``cassette-tui diff``.

``diff_cassettes(a, b, align="seq")`` aligns the two runs (``align.py``) and returns a
``DiffResult``. Rows, counts and the first divergence are ready at once and cost no
deepdiff; the drift of a row (``drift.py``) and the findings (``diagnose.py``) are computed
on first use, cached, and safe to ask for from a worker thread.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from .align import ALIGNMENTS, Outcomes, SeqRows, outcome_index
from .align import align as align_rows
from .cassette import Cassette
from .diff_model import Change, DriftItem, Finding, Row, Status
from .drift import entry_drift
from .jobs import CancelToken, JobGenerator, Progress
from .refine import QUIET, refine_rows


class DiffResult:
    """The aligned rows of two cassettes, with drift and findings on demand.

    Attributes:
        a, b: the two cassettes (A is usually the failing run, B the passing one).
        align: ``"seq"`` or ``"key"``, the alignment used.
        rows: the aligned rows in order; every entry of each side is in exactly one row.
        first_divergence: index in ``rows`` of the first row that is not ``same``, or
            ``None`` when the runs are the same.
        counts: rows per ``Status`` (every status present, zero when absent).
    """

    def __init__(self, a: Cassette, b: Cassette, align: str, rows: list[Row] | SeqRows) -> None:
        self.a = a
        self.b = b
        self.align = align
        self.rows = rows
        #: False when some statuses are provisional (``diff_cassettes(exact=False)``)
        self.exact = not (isinstance(rows, SeqRows) and rows.provisional)
        # by seq, the statuses are known before the rows are built (see SeqRows)
        statuses = rows.statuses if isinstance(rows, SeqRows) else [row.status for row in rows]
        # metadata-only drift and moved calls are shown but are not where the runs part
        self.first_divergence: int | None = next(
            (i for i, status in enumerate(statuses) if status not in QUIET), None
        )
        counts = Counter(statuses)
        self.counts: dict[Status, int] = {status: counts.get(status, 0) for status in Status}
        self._drift: dict[int, list[DriftItem]] = {}
        self._lock = threading.Lock()
        self._findings_lock = threading.Lock()
        self._findings: list[Finding] | None = None

    @property
    def is_same(self) -> bool:
        """True when every row is ``same`` (also for two empty cassettes)."""
        return self.first_divergence is None

    def outcomes(self) -> tuple[Outcomes, Outcomes]:
        """The per-entry fingerprints and error flags of A and B (see ``align.Outcomes``)."""
        return outcome_index(self.a), outcome_index(self.b)

    def drift(self, row_index: int) -> list[DriftItem]:
        """The drift of row ``row_index``: deepdiff of args and outcome per JSON path (see
        ``drift.entry_drift``). ``[]`` for ``same`` rows and one-sided rows. Computed on
        first call and cached; thread-safe (two threads asking at once may both compute,
        one result is kept).

        Raises:
            IndexError: ``row_index`` is out of range.
        """
        row = self.rows[row_index]
        with self._lock:
            cached = self._drift.get(row_index)
        if cached is not None:
            return cached
        if row.a is None or row.b is None or row.status is Status.SAME:
            items: list[DriftItem] = []
        else:
            items = entry_drift(self.a[row.a], self.b[row.b])
        with self._lock:
            return self._drift.setdefault(row_index, items)

    @property
    def findings(self) -> list[Finding]:
        """The diagnosis (see ``diagnose.diagnose``), computed on first access, cached and
        thread-safe. The first finding is ``first_divergence`` whenever the runs differ."""
        with self._findings_lock:
            if self._findings is None:
                from .diagnose import diagnose

                self._findings = diagnose(self)
            return self._findings

    def to_json(self, include_same: bool = False) -> dict[str, Any]:
        """The ``--json`` document of ``cassette-tui diff`` (docs/diff-json.md):

        ``{"a": {"file", "entries"}, "b": {...}, "align", "counts": {status: n},
        "first_divergence": {"row", "a_seq", "b_seq", "status", "tool"} | null,
        "rows": [{"row", "a_seq", "b_seq", "status", "tool", "repeated_a", "repeated_b",
        "error_a", "error_b", "drift": [{"path", "a", "b", "change", "part"}]}],
        "findings": [{"kind", "seqs", "message", "action", "evidence"}]}``.

        ``row`` numbers are 1-based, as the text output and the app count rows. ``rows``
        leaves out ``same`` rows unless ``include_same``; computing it runs the drift of every
        row it lists.
        """
        rows = []
        for index, row in enumerate(self.rows):
            if row.status is Status.SAME and not include_same:
                continue
            rows.append(
                {
                    "row": index + 1,
                    "a_seq": row.a_seq,
                    "b_seq": row.b_seq,
                    "status": row.status.value,
                    "tool": row.tool,
                    "repeated_a": row.repeated_a,
                    "repeated_b": row.repeated_b,
                    "error_a": row.error_a,
                    "error_b": row.error_b,
                    "drift": [
                        {
                            "path": item.path,
                            "a": item.a,
                            "b": item.b,
                            "change": item.change.value,
                            "part": item.part,
                            # a/b null may be a real null or an absent path: this names
                            # the absent side ("a", "b"), else null
                            "absent": _absent_side(item.change),
                        }
                        for item in self.drift(index)
                    ],
                }
            )
        first = None
        if self.first_divergence is not None:
            row = self.rows[self.first_divergence]
            first = {
                "row": self.first_divergence + 1,
                "a_seq": row.a_seq,
                "b_seq": row.b_seq,
                "status": row.status.value,
                "tool": row.tool,
            }
        return {
            "a": _side_json(self.a),
            "b": _side_json(self.b),
            "align": self.align,
            "counts": {status.value: n for status, n in self.counts.items()},
            "first_divergence": first,
            "rows": rows,
            "findings": [
                {
                    "kind": f.kind,
                    "seqs": f.seqs,
                    "message": f.message,
                    "action": f.action,
                    "evidence": f.evidence,
                }
                for f in self.findings
            ],
        }


def _absent_side(change: Change) -> str | None:
    if change in (Change.ADDED, Change.ITEM_ADDED):
        return "a"
    if change in (Change.REMOVED, Change.ITEM_REMOVED):
        return "b"
    return None


def _side_json(cassette: Cassette) -> dict[str, Any]:
    return {
        "file": str(cassette.path) if cassette.path is not None else None,
        "entries": len(cassette),
    }


def diff_cassettes(
    a: Cassette, b: Cassette, align: str = "seq", *, exact: bool = True
) -> DiffResult:
    """Align cassette ``a`` against cassette ``b`` and return the ``DiffResult``.

    ``align`` is ``"seq"`` (row *i* beside row *i*) or ``"key"`` (LCS by call key; see
    ``align.py``). Reads every entry's outcome once (one sequential pass per file-backed
    cassette) but runs no deepdiff. ``exact=False`` (by seq): when many responses differ in
    their bytes, skip those reads and call them ``response_drift`` for now
    (``DiffResult.exact`` is then False; see ``align.seq_statuses``).

    Raises:
        ValueError: an unknown ``align``.
    """
    if align not in ALIGNMENTS:
        raise ValueError(f"unknown alignment {align!r}; expected one of {ALIGNMENTS}")
    rows: list[Row] | SeqRows = (
        SeqRows(a, b, exact=exact) if align == "seq" else align_rows(a, b, align)
    )
    if isinstance(rows, SeqRows) and rows.provisional:
        return DiffResult(a, b, align, rows)  # the quick first look: no second look yet
    statuses = rows.statuses if isinstance(rows, SeqRows) else [row.status for row in rows]
    refined = refine_rows(a, b, rows, statuses)  # metadata-only drift, moved calls
    return DiffResult(a, b, align, rows if refined is None else refined)


def diff_job(
    a: Cassette, b: Cassette, align: str = "seq", token: CancelToken | None = None
) -> JobGenerator[DiffResult]:
    """``diff_cassettes(a, b, align)`` (exact) as a job: one ``Progress("outcomes", done,
    2, "files")`` per cassette whose outcomes it reads (the slow part: every response
    parsed), then ``Progress("align", 2, 2, "files")``.

    Raises:
        Cancelled: ``token`` was cancelled between two stages.
        ValueError: an unknown ``align``.
    """
    token = token or CancelToken()
    for done, cassette in enumerate((a, b)):
        name = cassette.path.name if cassette.path is not None else ""
        yield Progress("outcomes", done, 2, "files", name)
        token.raise_if_cancelled()
        outcome_index(cassette)
    yield Progress("align", 2, 2, "files")
    token.raise_if_cancelled()
    return diff_cassettes(a, b, align)
