"""The ``downstream_drift`` findings: a drifted argument value that an earlier response of
the same run returned, where that earlier step differs between the runs (see
``diagnose.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..format.jsonpath import format_path as json_path
from ..format.jsonpath import iter_leaves
from ..scan.masking import key_at
from ..scan.pair_masking import mask_pair
from ._finding import finding, short_pair
from .model import Change, DriftItem, Row
from .refine import QUIET

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from ._args_misses import Examined
    from .result import DiffResult

LOOKBACK = 20  # earlier entries searched for the source of a drifted argument
MAX_TRACED = 100  # args-drift rows whose values are traced upstream
MAX_DOWNSTREAM = 5  # downstream_drift findings per diagnosis


def downstream(result: DiffResult, examined: list[Examined]) -> list[Finding]:
    """The findings of the first ``MAX_TRACED`` args-drift rows ``examined``, until
    ``MAX_DOWNSTREAM`` are found (a row's findings are all kept)."""
    findings: list[Finding] = []
    if not examined:
        return findings
    tracer = _Tracer(result)
    for index, row, items in examined[:MAX_TRACED]:
        assert row.a is not None and row.b is not None
        if len(findings) >= MAX_DOWNSTREAM:
            break
        for item in items:
            if item.change is not Change.VALUE_CHANGED:
                continue
            sources = tracer.sources(row, item)
            if sources:
                findings.append(_finding(index, row, item, sources))
    return findings


def _traceable(value: Any) -> bool:
    """Values specific enough to trace to an earlier response: strings of 4+ characters
    and numbers of 3+ digits (not booleans, not small counts)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return len(value.strip()) >= 4
    if isinstance(value, (int, float)):
        return abs(value) >= 100
    return False


class _LeafIndex:
    """The leaves of earlier responses of one run, indexed once per entry: exact values
    by ``(type, value)`` and string leaves for substring search."""

    def __init__(self, c: Cassette) -> None:
        self.c = c
        self._cache: dict[
            int, tuple[dict[tuple[str, Any], tuple[Any, ...]], list[tuple[tuple[Any, ...], str]]]
        ] = {}

    def _index(
        self, i: int
    ) -> tuple[dict[tuple[str, Any], tuple[Any, ...]], list[tuple[tuple[Any, ...], str]]]:
        found = self._cache.get(i)
        if found is None:
            exact: dict[tuple[str, Any], tuple[Any, ...]] = {}
            strings: list[tuple[tuple[Any, ...], str]] = []
            entry = self.c[i]
            if not entry.is_error:
                for path, leaf in iter_leaves(entry.response):
                    if not _traceable(leaf):
                        continue
                    exact.setdefault((type(leaf).__name__, leaf), path)
                    if isinstance(leaf, str):
                        strings.append((path, leaf))
            found = self._cache[i] = (exact, strings)
        return found

    def find(self, before: int, value: Any) -> tuple[int, str] | None:
        """The nearest entry before position ``before`` (at most ``LOOKBACK`` back) whose
        response holds ``value`` as a leaf (or, for a string, inside a string leaf), with
        the JSON path of that leaf."""
        for i in range(before - 1, max(-1, before - 1 - LOOKBACK), -1):
            exact, strings = self._index(i)
            path = exact.get((type(value).__name__, value))
            if path is not None:
                return i, json_path(path)
            if isinstance(value, str):
                for parts, leaf in strings:
                    if value in leaf:
                        return i, json_path(parts)
        return None


class _Source(NamedTuple):
    """The earlier step that fed one side's drifted value."""

    side: str  # "A" or "B"
    c: Cassette
    pos: int  # its entry in ``c``
    path: str  # the JSON path of the value in its response
    row: Row  # the row it is in
    row_index: int


class _Tracer:
    """Finds, for a drifted value, the earlier responses of each run it came from."""

    def __init__(self, result: DiffResult) -> None:
        self.result = result
        self.index_a, self.index_b = _LeafIndex(result.a), _LeafIndex(result.b)
        # entry -> its row, per side: 8 bytes an entry (every entry is in one row), made
        # when a source is first found (most diagnoses find none)
        self._row_of: dict[str, Sequence[int]] = {}

    def row_of(self, side: str) -> Sequence[int]:
        """Per entry of side ``"a"`` or ``"b"``, its row (``rows_of_entries``), once."""
        found = self._row_of.get(side)
        if found is None:
            found = self._row_of[side] = self.result.rows_of_entries(side)
        return found

    def sources(self, row: Row, item: DriftItem) -> list[_Source]:
        """The sources of ``item``'s values on each side whose step differs between the
        runs (an identical answer, which both runs read alike, is not a cause)."""
        assert row.a is not None and row.b is not None
        src_a = self.index_a.find(row.a, item.a) if _traceable(item.a) else None
        src_b = self.index_b.find(row.b, item.b) if _traceable(item.b) else None
        if src_a is None and src_b is None:
            return []
        result = self.result
        sources = []
        for side, src, c in (("A", src_a, result.a), ("B", src_b, result.b)):
            if src is None:
                continue
            row_of = self.row_of(side.lower())
            i, path = src
            up_row = result.rows[row_of[i]]
            # the earlier step is a likelier cause only where it differs between the
            # runs: an identical answer (both runs read the same values) is not
            if up_row.status in QUIET:
                continue
            sources.append(_Source(side, c, i, path, up_row, row_of[i]))
        return sources


def _finding(index: int, row: Row, item: DriftItem, sources: list[_Source]) -> Finding:
    """The finding of one drifted value of row ``index`` and where it came from."""
    parts = []
    actions = []
    seqs: dict[str, list[int]] = {"a": [row.a_seq], "b": [row.b_seq]}  # type: ignore[list-item]
    # the evidence is printed by diff --json: its values masked as the message's
    a, b, _ = mask_pair(item.a, item.b, key_at(item.path))  # a secret of either side on both
    evidence: dict[str, Any] = {"row": index + 1, "path": item.path, "a": a, "b": b}
    for source in sources:
        side, c, i = source.side, source.c, source.pos
        seq, tool = c.seq(i), c.tool(i)
        parts.append(
            f"{side}'s value came from {side} seq {seq} {tool} response {source.path} "
            f"({source.row.status.value.replace('_', ' ')} there)"
        )
        # one seq per side: the step that fed this side's value, never the seq its
        # row happens to pair it with
        actions.append(f"{side} seq {seq} ({tool}) fed {side}'s value")
        seqs[side.lower()].insert(0, seq)
        evidence[f"source_{side.lower()}"] = {
            "seq": seq,
            "tool": tool,
            "path": source.path,
            "row": source.row_index + 1,
            "status": source.row.status.value,
        }
    shown_a, shown_b = short_pair(item.a, item.b, 30, item.path)
    message = (
        f"{row.tool} args {item.path} drifted at A seq {row.a_seq} / B seq "
        f"{row.b_seq} ({shown_a} -> {shown_b}), and "
        + "; ".join(parts)
        + ". The earlier step is the likelier cause."
    )
    action = (
        "Look upstream first, at the response that differs between the runs: "
        + "; ".join(actions)
        + "."
    )
    return finding("downstream_drift", seqs, message, action, evidence)
