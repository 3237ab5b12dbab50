"""Diff two cassettes: the entry point of the app and of ``cassette-tui diff``.

``diff_cassettes(a, b, align="seq")`` aligns the two runs (``align.py``) and returns a
``DiffResult``: it runs ``diff_job``, the same steps with progress and cancelling. Rows,
counts and the first divergence are ready at once and cost no deepdiff; the drift of a row
(``drift.py``) and the findings (``diagnose.py``) are computed on first use, cached, and
safe to ask for from a worker thread.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..format.cassette import Cassette
from ..format.columns import NO_RESPONSE_HASH
from ..format.jobs import CancelToken, JobGenerator, Progress, run_job
from ..format.outcome import outcome_index_job
from ..keys.replay_key import repeated_flags
from ._drift import entry_drift
from .align import _EXACT_BY_ENTRY_MAX, Check, Outcomes, SeqRows, outcome_index
from .align import align as align_rows
from .align_choice import ALIGN_CHOICES, resolve_alignment
from .model import Change, DriftItem, Finding, Row, Status
from .packed import PackedRows
from .refine import QUIET, first_real_divergence, numeric_drift, refine_rows

#: rows without drift items: nothing differs, or two different calls (see ``calls``)
_NO_DRIFT = frozenset({Status.SAME, Status.OTHER_CALL})


class DiffResult:
    """The aligned rows of two cassettes, with drift and findings on demand.

    Attributes:
        a, b: the two cassettes (A is usually the failing run, B the passing one).
        align: ``"seq"`` or ``"key"``, the alignment used (``"auto"`` resolves to one).
        align_reason: why ``auto`` chose it (``None`` when the caller chose).
        rows: the aligned rows in order; every entry of each side is in exactly one row.
        first_divergence: index in ``rows`` of the first row that is not ``same`` (nor
            another quiet status: ``metadata_drift``, ``moved``), passing over rows that
            differ only by float noise when a later row differs for real (see
            ``refine.first_real_divergence``); ``None`` when the runs are the same.
        counts: rows per ``Status`` (every status present, zero when absent).
    """

    def __init__(
        self,
        a: Cassette,
        b: Cassette,
        align: str,
        rows: Sequence[Row],
        align_reason: str | None = None,
    ) -> None:
        self.a = a
        self.b = b
        self.align = align
        #: why ``align`` was chosen when it was asked for as ``"auto"`` (``align_choice.py``)
        self.align_reason = align_reason
        self.rows = rows
        #: False when some statuses are provisional (``diff_cassettes(exact=False)``)
        self.exact = not (isinstance(rows, SeqRows) and rows.provisional)
        # by seq, the statuses are known before the rows are built (see SeqRows)
        statuses = _statuses(rows)
        # metadata-only drift, moved calls and float noise are shown but are not where the
        # runs part (provisional statuses: the first non-quiet one, for now)
        self.first_divergence: int | None = (
            first_real_divergence(a, b, rows, statuses)
            if self.exact
            else next((i for i, status in enumerate(statuses) if status not in QUIET), None)
        )
        counts = Counter(statuses)
        self.counts: dict[Status, int] = {status: counts.get(status, 0) for status in Status}
        self._drift: dict[int, list[DriftItem]] = {}
        self._lock = threading.Lock()
        self._findings_lock = threading.Lock()
        self._findings: list[Finding] | None = None
        self._contract: tuple[dict[str, Any] | None, dict[str, Any] | None] | None = None
        self._repeated: tuple[bytearray, bytearray] | None = None

    def contract(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The MCP server contracts of A and B from their server-facts sidecars
        (``_contract.contract_of``; ``None`` for a side without one), read once."""
        with self._lock:
            if self._contract is None:
                from ._contract import contract_of

                self._contract = (contract_of(self.a), contract_of(self.b))
            return self._contract

    @property
    def is_same(self) -> bool:
        """True when every row is ``same`` (also for two empty cassettes)."""
        return self.first_divergence is None

    def outcomes(self) -> tuple[Outcomes, Outcomes]:
        """The per-entry fingerprints and error flags of A and B (see ``align.Outcomes``)."""
        return outcome_index(self.a), outcome_index(self.b)

    def drift(self, row_index: int, *, keep: bool = True) -> list[DriftItem]:
        """The drift of row ``row_index``: deepdiff of args and outcome per JSON path (see
        ``drift.entry_drift``). ``[]`` for ``same`` rows and one-sided rows. Computed on
        first call and cached; thread-safe (two threads asking at once may both compute,
        one result is kept). ``keep=False``: not cached (a pass over every row, such as
        ``diff --limit 0``, in memory that does not grow with the rows).

        Raises:
            IndexError: ``row_index`` is out of range.
        """
        row = self.rows[row_index]
        with self._lock:
            cached = self._drift.get(row_index)
        if cached is not None:
            return cached
        items = self._compute_drift(row)
        if not keep:
            return items
        with self._lock:
            return self._drift.setdefault(row_index, items)

    def repeated(self) -> tuple[bytearray, bytearray]:
        """Per entry of A and of B, 1 when its key occurs more than once in its own run
        (``replay_key.repeated_flags``: one byte an entry), computed once."""
        if isinstance(self.rows, SeqRows):
            return self.rows.repeated()
        with self._lock:
            if self._repeated is None:
                a, b = self.a, self.b
                self._repeated = (
                    repeated_flags(a._tools, a.digest_codes()),
                    repeated_flags(b._tools, b.digest_codes()),
                )
            return self._repeated

    def rows_of_entries(self, side: str) -> array[int]:
        """Per entry of side ``"a"`` or ``"b"``, the index of the row that holds it: 8
        bytes an entry, built on each call (a finding that looks a few entries up, not a
        dict of every row); in a temporary file inside ``spill.spilling()`` (issue 31)."""
        from ..format.spill import maybe_on_disk

        c = self.a if side == "a" else self.b
        where = maybe_on_disk("q", len(c))
        rows = self.rows
        if isinstance(rows, PackedRows):  # the column itself: no row built
            for index, entry in enumerate(rows.entries(side)):
                if entry >= 0:
                    where[entry] = index
            return where
        for index, row in enumerate(rows):
            pos = row.a if side == "a" else row.b
            if pos is not None:
                where[pos] = index
        return where

    def _compute_drift(self, row: Row) -> list[DriftItem]:
        # two different tools are two calls side by side (``calls``), not a drift of one
        # tool's args and answer against another's
        if row.a is None or row.b is None or row.status in _NO_DRIFT:
            return []
        return entry_drift(self.a.entry_view(row.a), self.b.entry_view(row.b))

    @property
    def findings(self) -> list[Finding]:
        """The diagnosis (see ``diagnose.diagnose``), computed on first access, cached and
        thread-safe. The first finding is ``first_divergence`` whenever the runs differ,
        after ``contract_change`` when the MCP server's contract changed."""
        with self._findings_lock:
            if self._findings is None:
                from ._diagnose import diagnose

                self._findings = diagnose(self)
            return self._findings

    def findings_job(self, cancel: CancelToken | None = None) -> JobGenerator[list[Finding]]:
        """``findings`` as a job (``diagnose.diagnose_job``); the result is cached."""
        with self._findings_lock:
            if self._findings is not None:
                return self._findings
        from ._diagnose import diagnose_job

        found = yield from diagnose_job(self, cancel)
        with self._findings_lock:
            if self._findings is None:
                self._findings = found
            return self._findings

    def head_json(self) -> dict[str, Any]:
        """The ``--json`` document's fields before ``rows``: ``a``, ``b``, ``align``,
        ``counts``, ``first_divergence`` (see ``to_json``)."""
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
            "align_reason": self.align_reason,
            "counts": {status.value: n for status, n in self.counts.items()},
            "first_divergence": first,
        }

    def row_json(self, index: int, row: Row, drift: list[DriftItem]) -> dict[str, Any]:
        """One element of the ``--json`` document's ``rows`` (``row``: ``index + 1``)."""
        return {
            "row": index + 1,
            "a_seq": row.a_seq,
            "b_seq": row.b_seq,
            "status": row.status.value,
            "tool": row.tool,
            "tool_b": self.b.tool(row.b) if row.b is not None else None,
            # two different tools at one step: both calls, side by side (else null)
            "calls": self.calls(row) if row.status is Status.OTHER_CALL else None,
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
                for item in drift
            ],
            # how large the numeric drift is: {"count", "max_abs_delta"}, or null
            "numbers": numeric_drift(drift),
        }

    def calls(self, row: Row) -> dict[str, Any]:
        """Both sides' calls of a row, side by side: ``{"a": {"seq", "tool", "args"} |
        None, "b": ...}`` (the row's ``other_call`` view: two different tools)."""

        def call(c: Cassette, i: int | None) -> dict[str, Any] | None:
            if i is None:
                return None
            return {"seq": c.seq(i), "tool": c.tool(i), "args": c.entry_view(i).args}

        return {"a": call(self.a, row.a), "b": call(self.b, row.b)}

    def rows_json_job(
        self,
        emit: Callable[[dict[str, Any]], None],
        *,
        include_same: bool = False,
        cancel: CancelToken | None = None,
    ) -> JobGenerator[int]:
        """Stream the ``--json`` rows: ``emit(row_json)`` for each listed row, in order,
        as soon as its drift is computed; the drift is not cached, so memory does not grow
        with the number of rows. Yields ``Progress(stage="rows", unit="rows")``; returns
        the number of rows emitted. Raises ``Cancelled`` when ``cancel`` is set."""
        rows = self.rows
        total = len(rows)
        emitted = 0
        for index, row in enumerate(rows):
            if not index & 255:
                yield Progress("rows", index, total, "rows")
                if cancel is not None:
                    cancel.raise_if_cancelled()
            if row.status is Status.SAME and not include_same:
                continue
            with self._lock:
                drift = self._drift.get(index)
            if drift is None:
                drift = self._compute_drift(row)
            emit(self.row_json(index, row, drift))
            emitted += 1
        yield Progress("rows", total, total, "rows")
        return emitted

    def to_json(self, include_same: bool = False) -> dict[str, Any]:
        """The ``--json`` document of ``cassette-tui diff`` (docs/json.md):

        ``{"a": {"file", "entries"}, "b": {...}, "align", "counts": {status: n},
        "first_divergence": {"row", "a_seq", "b_seq", "status", "tool"} | null,
        "rows": [{"row", "a_seq", "b_seq", "status", "tool", "repeated_a", "repeated_b",
        "error_a", "error_b", "drift": [{"path", "a", "b", "change", "part"}]}],
        "findings": [{"kind", "seqs", "message", "action", "evidence"}]}``.

        ``row`` numbers are 1-based, as the text output and the app count rows. ``rows``
        leaves out ``same`` rows unless ``include_same``; computing it runs the drift of every
        row it lists.
        """
        rows: list[dict[str, Any]] = []
        run_job(self.rows_json_job(rows.append, include_same=include_same))
        return {
            **self.head_json(),
            "rows": rows,
            "findings": [f.to_diff_json() for f in self.findings],
        }


def _absent_side(change: Change) -> str | None:
    if change in (Change.ADDED, Change.ITEM_ADDED):
        return "a"
    if change in (Change.REMOVED, Change.ITEM_REMOVED):
        return "b"
    return None


def _side_json(cassette: Cassette) -> dict[str, Any]:
    from ..format.context import run_outcome

    outcome, _warnings = run_outcome(cassette)  # the command prints the warnings
    return {
        "file": str(cassette.path) if cassette.path is not None else None,
        "entries": len(cassette),
        # how the run ended (core/format/context.py), or null when the cassette does not say
        "outcome": outcome.to_json() if outcome is not None else None,
    }


def diff_cassettes(
    a: Cassette,
    b: Cassette,
    align: str = "seq",
    *,
    exact: bool = True,
    bytes_only: bool = False,
    tolerance: float | None = None,
    check: Check | None = None,
) -> DiffResult:
    """Align cassette ``a`` against cassette ``b`` and return the ``DiffResult``:
    ``diff_job`` run to its end, reading the outcomes only where the alignment needs them.

    ``align`` is ``"seq"`` (row *i* beside row *i*), ``"key"`` (LCS by call key; see
    ``align.py``) or ``"auto"`` (one of them, by ``align_choice.choose_alignment``; the
    result's ``align`` says which and ``align_reason`` why). Runs no deepdiff.
    ``exact=False`` (by seq): when many responses differ in their bytes, skip those reads
    and call them ``response_drift`` for now (``DiffResult.exact`` is then False; see
    ``align.seq_statuses``); with ``bytes_only`` too (by seq), every same-call pair whose
    stored responses differ in their bytes is provisional, however few (no response is
    parsed: the app's first look, drawn from the index alone; when no pair is unsure, the
    exact diff as without it). ``tolerance``: an absolute |Δ| within which numbers in
    responses count as equal (see ``refine.py``). ``check`` is called now and then while
    aligning by key and refining rows; what it raises (``Cancelled``, from
    ``CancelToken.raise_if_cancelled``) stops the diff.

    Raises:
        ValueError: an unknown ``align``; a ``tolerance`` that is negative, NaN or infinite.
    """
    if bytes_only and not exact and align == "seq":
        # no job: the keys are known or cheap (a first look), nothing else is read
        rows = SeqRows(a, b, exact=False, bytes_only=True)
        if rows.provisional:
            return DiffResult(a, b, "seq", rows)
    job = diff_job(a, b, align, outcomes=False, exact=exact, tolerance=tolerance, check=check)
    return run_job(job)


def diff_job(
    a: Cassette,
    b: Cassette,
    align: str = "seq",
    token: CancelToken | None = None,
    *,
    outcomes: bool = True,
    exact: bool = True,
    tolerance: float | None = None,
    check: Check | None = None,
) -> JobGenerator[DiffResult]:
    """``diff_cassettes(a, b, align)`` as a job: computes both cassettes' keys
    (``Cassette.keys_job``, progress ``"keys"`` in entries) and their outcomes
    (``outcome.outcome_index_job``, ``"outcomes"``: one full read of each file, so a bad
    response is found here, before anything is shown or written), then aligns
    (``"align"``, in rows). ``outcomes=False`` reads the outcomes only where the
    alignment needs them (by key; by seq, many responses that differ in their bytes, unless
    ``exact=False`` leaves those provisional). ``exact``, ``tolerance``: as for
    ``diff_cassettes``. ``check``: called now and then while aligning by key and refining
    rows (default: ``token.raise_if_cancelled`` when a ``token`` is given).

    Raises:
        Cancelled: ``token`` was cancelled (checked every few thousand entries, and as
            the alignment by key and the second look at the rows go).
        ValueError: an unknown ``align``; a ``tolerance`` that is negative, NaN or
            infinite (both before any work).
    """
    cancel = token
    _check_align(align)
    check_tolerance(tolerance)
    if cancel is not None:
        cancel.raise_if_cancelled()
        if check is None:
            check = cancel.raise_if_cancelled
    yield from a.keys_job(cancel)
    a.spill_columns()  # to temporary files inside ``spill.spilling()`` only (issue 31)
    yield from b.keys_job(cancel)
    b.spill_columns()
    align, reason = resolve_alignment(a, b, align)
    if outcomes or align == "key" or (exact and _unsure_pairs(a, b) > _EXACT_BY_ENTRY_MAX):
        yield from outcome_index_job(a, cancel)
        yield from outcome_index_job(b, cancel)
    yield Progress("align", 0, None, "rows")
    if cancel is not None:
        cancel.raise_if_cancelled()
    result = _diff_aligned(a, b, align, reason, exact=exact, tolerance=tolerance, check=check)
    yield Progress("align", len(result.rows), len(result.rows), "rows")
    return result


def _unsure_pairs(a: Cassette, b: Cassette) -> int:
    """By-seq pairs with the same key whose stored responses are not byte-identical (see
    ``align.seq_statuses``): past ``_EXACT_BY_ENTRY_MAX`` the outcomes are read in one pass."""
    ha, hb = a.response_hashes(), b.response_hashes()
    ka, kb = a.digest_codes(), b.digest_codes()
    return sum(
        1
        for i in range(min(len(a), len(b)))
        if ka[i] == kb[i] and (ha[i] == NO_RESPONSE_HASH or ha[i] != hb[i])
    )


def _diff_aligned(
    a: Cassette,
    b: Cassette,
    align: str,
    reason: str | None,
    *,
    exact: bool,
    tolerance: float | None,
    check: Check | None,
) -> DiffResult:
    """``diff_job``'s rows once ``align`` is ``"seq"`` or ``"key"`` (``reason``: why
    ``auto`` chose it, else ``None``), the arguments are checked and the keys known."""
    rows: Sequence[Row] = (
        SeqRows(a, b, exact=exact) if align == "seq" else align_rows(a, b, align, check)
    )
    if isinstance(rows, SeqRows) and rows.provisional:
        # the quick first look: no second look yet
        return DiffResult(a, b, align, rows, reason)
    statuses = _statuses(rows)
    # metadata-only drift, moved calls, numbers within the tolerance
    refined = refine_rows(a, b, rows, statuses, tolerance, check)
    if isinstance(refined, PackedRows):
        refined.spill()  # to temporary files inside ``spill.spilling()`` only (issue 31)
    result = DiffResult(a, b, align, rows if refined is None else refined, reason)
    if isinstance(rows, PackedRows) and rows.repeated is not None:
        # the key alignment's own flags, the same per entry (issue 31: not counted again
        # with a table of 8 bytes an entry for the findings)
        result._repeated = rows.repeated
    return result


def _statuses(rows: Sequence[Row]) -> Sequence[Status]:
    """Every row's status, without building the rows where they are columns."""
    if isinstance(rows, SeqRows):
        return rows.statuses
    if isinstance(rows, PackedRows):
        return rows.statuses
    return [row.status for row in rows]


def check_tolerance(tolerance: float | None) -> None:
    """Refuse a ``tolerance`` that is not a finite number >= 0 (``ValueError``): NaN would
    make every number equal to none, infinity every number equal to any."""
    if tolerance is not None and not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")


def _check_align(align: str) -> None:
    if align not in ALIGN_CHOICES:
        raise ValueError(f"unknown alignment {align!r}; expected one of {ALIGN_CHOICES}")
