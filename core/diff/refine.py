"""Second look at aligned rows, so the diff blames the right step.

Two kinds of difference are real but are not where two runs part:

``metadata_drift``
    Same key; the responses differ only in volatile metadata (an LLM response's ``id``,
    ``created``, ``system_fingerprint``; HTTP ``Date``/request-id headers under a
    ``headers`` object at any depth; request or trace id fields; two uuids, epochs,
    request ids or date-times at one path; see ``volatile.response_metadata_reason``) or
    at response paths the user's rules name (``ignore_response`` under
    ``[tool.cassette.normalize]``). Shown with its drift; not a divergence, not a stale
    recording.
``moved``
    The same calls with the same answers, completed in another order (parallel tool
    calls): a run of consecutive differing rows whose A-side and B-side entries are the
    same multiset of (key, outcome). Each A entry is paired with its B twin, status
    ``moved``; not a divergence, and no advice about how the agent built its args.

Parallel calls in another order, an answer changed
    Calls the recorder marked as overlapping (the ``batch`` field: docs/format.md) that
    two runs issued or finished in another order are paired with each other: around a
    differing row, the stretch of rows whose every call is marked is paired again, by
    call key and outcome, then by call key, then by tool, each in issue order
    (``_in_batches``). A changed answer then shows as ``response_drift`` (or
    ``args_drift``) side by side, never as a call only one run made.

``same`` within a tolerance
    With ``tolerance`` (``diff --tolerance``), response drift made only of numbers whose
    |Δ| is within it (float noise in embeddings and scores) is ``same``; it is never the
    first divergence, whatever follows. ``numeric_drift`` says how large a row's numeric
    drift is (count, largest |Δ|).

Float noise without a tolerance
    A ``response_drift`` row whose every differing leaf is a number with at least one float
    side, both finite, and ``|a - b| <= FLOAT_NOISE * max(|a|, |b|)`` (volatile metadata
    may differ too) is float noise (``float_noise_row``): the same value computed in
    another order, or rounded once through float32 and printed through float64. It keeps
    its status and its drift (the ``numbers`` line), but it is not the first divergence
    when a row after it changes for real (``first_real_divergence``); when nothing else
    differs it still is, so the user sees it. ``FLOAT_NOISE`` is float32's machine epsilon,
    2**-23 (about 1.19e-7): one float32 rounding is at most half of it, and float64's
    rounding noise (2**-52 per operation) is far below it; two integers that differ are a
    count that changed, never noise; near zero nothing is noise (the bound scales with the
    values). ``diff --tolerance`` is the user's own, absolute bound.

``refine_rows`` applies these to the rows of either alignment.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..format.constants import BATCH_FIELD
from ..format.jsontext import sorted_json_bytes
from ..format.outcome import is_error_outcome
from ..keys.normalize import rules_of
from ..keys.volatile import response_metadata_reason
from .align import build_row, pair_status
from .model import DriftItem, Row, Status
from .packed import PackedRows

if TYPE_CHECKING:
    from ..format.cassette import Cassette

#: statuses that are not a divergence
QUIET = frozenset({Status.SAME, Status.MOVED, Status.METADATA_DRIFT})
#: at most this many response-drift rows are read to look for metadata-only drift (each
#: costs parsing both responses); past it, the rest keep ``response_drift``
MAX_METADATA_ROWS = 20_000
#: the examined rows between two cancel checks (each may run deepdiff: ~1 ms)
_CHECK_ROWS = 64
#: the relative bound of float noise (see the module doc): float32's machine epsilon
FLOAT_NOISE = 2.0**-23
#: at most this many float-noise rows are passed over looking for a real first divergence
MAX_NOISE_ROWS = MAX_METADATA_ROWS
#: a window of consecutive differing rows longer than this is not checked for a reorder
MAX_MOVED_WINDOW = 256
#: the recorder's mark on a call that overlapped another, as it stands in a line
_BATCH_BYTES = f'"{BATCH_FIELD}"'.encode()


def _is_number(v: Any) -> bool:
    return type(v) in (int, float)


def _float_noise(x: Any, y: Any) -> bool:
    """Two numbers that differ only by float noise (see the module doc)."""
    return (
        (type(x) is float or type(y) is float)
        and math.isfinite(x)
        and math.isfinite(y)
        and abs(x - y) <= FLOAT_NOISE * max(abs(x), abs(y))
    )


def classify_response_drift(
    tool: str,
    a: Any,
    b: Any,
    cassette_a: Cassette,
    tolerance: float | None = None,
    *,
    relative: bool = False,
) -> str | None:
    """How responses ``a`` and ``b`` differ: ``"noise"`` (only numbers within
    ``tolerance``, an absolute |Δ|; or with ``relative=True`` within float noise, see the
    module doc), ``"metadata"`` (only volatile metadata, or metadata and noise; see the
    module docstring, or paths the cassette's ``ignore_response`` rules name), or ``None``
    (the answer differs, or they are equal)."""
    rules = rules_of(cassette_a)
    # the user's ignore_response rules: a change at those paths is metadata
    ignored = rules.ignores_response(tool)
    compared = (rules.strip_metadata(tool, a), rules.strip_metadata(tool, b)) if ignored else (a, b)
    found = _quiet_differences(a, b, *compared, tolerance, relative)
    if found is None:
        return None
    metadata, noise = found
    if metadata:
        return "metadata"
    if ignored and sorted_json_bytes(a) != sorted_json_bytes(b):
        return "metadata"  # what differs is only at ignored paths (and numbers within noise)
    return "noise" if noise else None


def _quiet_differences(
    original_a: Any, original_b: Any, a: Any, b: Any, tolerance: float | None, relative: bool
) -> tuple[bool, bool] | None:
    """Walk responses ``a`` and ``b`` (``original_a``/``_b`` before the ignored paths were
    stripped: the metadata test reads them) to every difference: ``(some is volatile
    metadata, some is numbers within noise)``, or ``None`` at the first that is neither."""
    metadata = noise = False
    stack: list[tuple[tuple[Any, ...], Any, Any]] = [((), a, b)]
    while stack:
        parts, x, y = stack.pop()
        if type(x) is dict and type(y) is dict:
            for k in x.keys() | y.keys():
                if k in x and k in y:
                    stack.append(((*parts, k), x[k], y[k]))
                elif (
                    response_metadata_reason(original_a, original_b, (*parts, k), None, None)
                    is None
                ):
                    return None
                else:
                    metadata = True
            continue
        if type(x) is list and type(y) is list and len(x) == len(y):
            stack.extend(((*parts, i), p, q) for i, (p, q) in enumerate(zip(x, y, strict=True)))
            continue
        if type(x) is type(y) and (x == y or (x != x and y != y)):  # noqa: PLR0124 - NaN
            continue
        if _numbers_within(x, y, tolerance, relative):
            noise = True
            continue
        if response_metadata_reason(original_a, original_b, parts, x, y) is None:
            return None
        metadata = True
    return metadata, noise


def _numbers_within(x: Any, y: Any, tolerance: float | None, relative: bool) -> bool:
    """Whether ``x`` and ``y`` are numbers within ``tolerance`` (an absolute |Δ|) or, with
    ``relative``, within float noise."""
    return (
        tolerance is not None
        and _is_number(x)
        and _is_number(y)
        and math.isfinite(x)
        and math.isfinite(y)
        and abs(x - y) <= tolerance
    ) or (relative and _is_number(x) and _is_number(y) and _float_noise(x, y))


def float_noise_row(a: Cassette, b: Cassette, row: Row) -> bool:
    """Whether ``row`` is a ``response_drift`` whose responses differ only by float noise
    (and perhaps volatile metadata); see the module doc."""
    if row.status is not Status.RESPONSE_DRIFT or row.a is None or row.b is None:
        return False
    ea, eb = a._entry(row.a), b._entry(row.b)
    if ea.is_error or eb.is_error:
        return False
    how = classify_response_drift(row.tool, ea.response, eb.response, a, relative=True)
    return how is not None


def first_real_divergence(
    a: Cassette, b: Cassette, rows: Sequence[Row], statuses: Sequence[Status]
) -> int | None:
    """The index of the first row that is not quiet (``QUIET``), passing over rows of
    float noise (``float_noise_row``) when a later row differs for real; the first
    non-quiet row when only noise differs; ``None`` when every row is quiet. At most
    ``MAX_NOISE_ROWS`` noise rows are passed over."""
    first: int | None = None
    passed = 0
    for index, status in enumerate(statuses):
        if status in QUIET:
            continue
        if first is None:
            first = index
        if passed >= MAX_NOISE_ROWS or not float_noise_row(a, b, rows[index]):
            return index
        passed += 1
    return first


def numeric_drift(items: Sequence[DriftItem]) -> dict[str, Any] | None:
    """How large a row's numeric drift is: ``{"count": n, "max_abs_delta": x}`` over the
    drift items whose two sides are finite numbers (``None`` when there are none)."""
    deltas = [
        abs(i.a - i.b)
        for i in items
        if _is_number(i.a) and _is_number(i.b) and math.isfinite(i.a) and math.isfinite(i.b)
    ]
    if not deltas:
        return None
    return {"count": len(deltas), "max_abs_delta": max(deltas)}


def refine_rows(
    a: Cassette,
    b: Cassette,
    rows: Sequence[Row],
    statuses: Sequence[Status],
    tolerance: float | None = None,
    check: Callable[[], None] | None = None,
) -> PackedRows | None:
    """The rows with ``metadata_drift`` and ``moved`` found (see the module docstring),
    and with ``tolerance`` (an absolute |Δ|) response drift made only of numbers within
    it turned ``same`` (float noise: embeddings, scores); ``None`` when nothing changed
    (the caller keeps its rows, lazy ones included). ``check`` is called every
    ``_CHECK_ROWS`` examined rows; what it raises (a cancel) stops the work."""
    changed = _quieted_rows(a, b, rows, statuses, tolerance, check)
    # one byte a row (issue 31): 1 when the row is quiet
    quiet = bytearray(
        (changed[i].status if i in changed else s) in QUIET for i, s in enumerate(statuses)
    )
    windows = _moved_windows(a, b, rows, quiet)
    if not changed and not windows:
        moved = _one_sided_moves(a, b, rows, statuses)
        if moved is None:
            return _in_batches(a, b, rows, statuses, tolerance)
        return _in_batches(a, b, moved, moved.statuses, tolerance) or moved
    out = PackedRows(a, b)  # 18 bytes a row, not a Row object (packed.py)
    start = 0
    for i, j, moved_rows in windows:
        out.extend(changed.get(k, rows[k]) for k in range(start, i))
        out.extend(moved_rows)
        start = j
    out.extend(changed.get(k, rows[k]) for k in range(start, len(statuses)))
    out = _one_sided_moves(a, b, out, out.statuses) or out
    return _in_batches(a, b, out, out.statuses, tolerance) or out


def _quieted_rows(
    a: Cassette,
    b: Cassette,
    rows: Sequence[Row],
    statuses: Sequence[Status],
    tolerance: float | None,
    check: Callable[[], None] | None,
) -> dict[int, Row]:
    """The first ``MAX_METADATA_ROWS`` response-drift rows (without an error) that are
    metadata drift, or ``same`` within ``tolerance``, by index, with their new status."""
    changed: dict[int, Row] = {}
    examined = 0
    for index, status in enumerate(statuses):
        if status is not Status.RESPONSE_DRIFT or examined >= MAX_METADATA_ROWS:
            continue
        if check is not None and examined % _CHECK_ROWS == 0:
            check()
        examined += 1
        row = rows[index]
        if row.a is None or row.b is None:
            continue
        ea, eb = a._entry(row.a), b._entry(row.b)
        if ea.is_error or eb.is_error:
            continue
        how = classify_response_drift(row.tool, ea.response, eb.response, a, tolerance)
        if how == "metadata" and not _passed_on(a, b, row, ea.response, eb.response):
            changed[index] = _with_status(row, Status.METADATA_DRIFT)
        elif how == "noise":
            changed[index] = _with_status(row, Status.SAME)
    return changed


#: later calls searched for a response value the agent passed on (provenance)
PROVENANCE_CALLS = 50


def _passed_on(a: Cassette, b: Cassette, row: Row, x: Any, y: Any) -> bool:
    """Whether a value that differs between responses ``x`` (A) and ``y`` (B) is passed by
    the agent into one of its next ``PROVENANCE_CALLS`` calls' args, in its own run (a
    clock tool's ``now``, an id the next call uses): then it is data the run depends on,
    never "metadata only"."""
    values_a, values_b = _differing_leaves(x, y)
    assert row.a is not None and row.b is not None
    return _in_later_args(a, row.a, values_a) or _in_later_args(b, row.b, values_b)


def _differing_leaves(x: Any, y: Any) -> tuple[set[Any], set[Any]]:
    """The scalar values at the paths where ``x`` and ``y`` differ (strings of 4 characters
    or more, numbers; booleans and short strings say nothing of provenance)."""
    out_a: set[Any] = set()
    out_b: set[Any] = set()
    stack = [(x, y)]
    while stack:
        p, q = stack.pop()
        if type(p) is dict and type(q) is dict:
            stack.extend((p[k], q[k]) for k in p.keys() & q.keys())
            continue
        if type(p) is list and type(q) is list and len(p) == len(q):
            stack.extend(zip(p, q, strict=True))
            continue
        if p != q:
            for value, out in ((p, out_a), (q, out_b)):
                if _telling(value):
                    out.add(value)
    return out_a, out_b


def _telling(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) >= 4
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 1000


def _in_later_args(c: Cassette, i: int, values: set[Any]) -> bool:
    if not values:
        return False
    texts = [v for v in values if isinstance(v, str)]
    for j in range(i + 1, min(len(c), i + 1 + PROVENANCE_CALLS)):
        stack = [c.entry_view(j).args]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
            elif isinstance(v, str):
                if v in values or any(t in v for t in texts):
                    return True
            elif _telling(v) and v in values:
                return True
    return False


def _moved_windows(
    a: Cassette, b: Cassette, rows: Sequence[Row], quiet: bytearray
) -> list[tuple[int, int, list[Row]]]:
    """``(start, end, moved rows)`` of each stretch of 2 to ``MAX_MOVED_WINDOW`` rows that
    are not quiet between quiet ones and hold the same calls with the same answers on
    both sides (``_moved``)."""
    windows: list[tuple[int, int, list[Row]]] = []
    i = 0
    n = len(quiet)
    while i < n:
        if quiet[i]:
            i += 1
            continue
        j = i
        while j < n and not quiet[j]:
            j += 1
        if 2 <= j - i <= MAX_MOVED_WINDOW:
            moved = _moved(a, b, [rows[k] for k in range(i, j)])
            if moved is not None:
                windows.append((i, j, moved))
        i = j
    return windows


def _one_sided_moves(
    a: Cassette, b: Cassette, rows: Sequence[Row], statuses: Sequence[Status]
) -> PackedRows | None:
    """The call-key alignment leaves a reordered call as an ``only_a`` row and an
    ``only_b`` row a few rows apart: an ``only_a`` and an ``only_b`` of the same key and
    outcome, at most ``MAX_MOVED_WINDOW`` rows apart, become one ``moved`` row (at A's
    place). ``None`` when there is none."""
    only_b: dict[Any, list[int]] = {}
    for index, status in enumerate(statuses):
        if status is Status.ONLY_B:
            j = rows[index].b
            assert j is not None
            only_b.setdefault((b.key(j), b.fingerprint(j)), []).append(index)
    if not only_b:
        return None
    merged: dict[int, Row] = {}
    dropped: set[int] = set()
    for index, status in enumerate(statuses):
        if status is not Status.ONLY_A:
            continue
        i = rows[index].a
        assert i is not None
        twins = only_b.get((a.key(i), a.fingerprint(i)))
        if not twins:
            continue
        near = next((t for t in twins if abs(t - index) <= MAX_MOVED_WINDOW), None)
        if near is None:
            continue
        twins.remove(near)
        j = rows[near].b
        assert j is not None
        merged[index] = build_row(
            i, j, a.seq(i), b.seq(j), Status.MOVED, a.tool(i),
            repeated_a=rows[index].repeated_a, repeated_b=rows[near].repeated_b,
        )  # fmt: skip
        dropped.add(near)
    if not merged:
        return None
    return PackedRows(a, b, (merged.get(k, row) for k, row in enumerate(rows) if k not in dropped))


def _with_status(row: Row, status: Status) -> Row:
    return Row(row.a, row.b, row.a_seq, row.b_seq, status, row.tool,
               row.repeated_a, row.repeated_b, row.error_a, row.error_b)  # fmt: skip


def _moved(a: Cassette, b: Cassette, window: list[Row]) -> list[Row] | None:
    """The window re-paired as ``moved`` rows, or ``None`` when its two sides are not the
    same calls with the same answers."""
    ia = [r.a for r in window if r.a is not None]
    ib = [r.b for r in window if r.b is not None]
    if len(ia) != len(ib) or len(ia) < 2:
        return None
    ka = {i: (a.key(i), a.fingerprint(i)) for i in ia}
    kb = {j: (b.key(j), b.fingerprint(j)) for j in ib}
    if Counter(ka.values()) != Counter(kb.values()):
        return None
    free: dict[Any, list[int]] = {}
    for j in ib:
        free.setdefault(kb[j], []).append(j)
    by_row = {r.a: r for r in window if r.a is not None}
    out = []
    for i in ia:
        j = free[ka[i]].pop(0)
        status = Status.SAME if i == j and by_row[i].b == j else Status.MOVED
        out.append(
            build_row(
                i,
                j,
                a.seq(i),
                b.seq(j),
                status,
                a.tool(i),
                repeated_a=by_row[i].repeated_a,
                repeated_b=any(r.repeated_b for r in window if r.b == j),
            )
        )
    return out


def batch_of(c: Cassette, i: int) -> int | None:
    """The ``batch`` mark of entry ``i`` (the seq of the first call of the calls in flight
    with it, written by the recorder only on a call that overlapped another;
    docs/format.md), or ``None``. A line not parsed yet is looked at as bytes first, so
    a cassette without the mark costs one read of the line, not a parse."""
    entry = c.held(i)
    if entry is None:
        if c.is_file_backed and _BATCH_BYTES not in c.raw_line(i):
            return None
        entry = c.entry_view(i)
    mark = entry.extra.get(BATCH_FIELD)
    return mark if type(mark) is int else None


def _marked(a: Cassette, b: Cassette, row: Row) -> bool:
    """Whether every call of ``row`` carries the ``batch`` mark."""
    return all(batch_of(c, k) is not None for c, k in ((a, row.a), (b, row.b)) if k is not None)


def _in_batches(
    a: Cassette,
    b: Cassette,
    rows: Sequence[Row],
    statuses: Sequence[Status],
    tolerance: float | None = None,
) -> PackedRows | None:
    """The rows with each stretch of overlapping calls around a differing row paired
    again (``_batch_regions``, ``_repaired``; the module doc), or ``None`` when no pair
    changed. At most ``MAX_METADATA_ROWS`` differing rows are looked at (each reads its
    entries), a stretch is at most ``MAX_MOVED_WINDOW`` rows."""
    out = PackedRows(a, b)
    start = 0
    changed = False
    for i, j in _batch_regions(a, b, rows, statuses):
        repaired = _repaired(a, b, [rows[k] for k in range(i, j)], tolerance)
        if repaired is None:
            continue
        out.extend(rows[k] for k in range(start, i))
        out.extend(repaired)
        start, changed = j, True
    if not changed:
        return None
    out.extend(rows[k] for k in range(start, len(rows)))
    return out


def _batch_regions(
    a: Cassette, b: Cassette, rows: Sequence[Row], statuses: Sequence[Status]
) -> list[tuple[int, int]]:
    """``(start, end)`` of each stretch of rows whose every call is marked (``_marked``)
    that holds a differing row, found outward from the differing rows."""
    regions: list[tuple[int, int]] = []
    end = examined = 0
    n = len(statuses)
    for k in range(n):
        if k < end or statuses[k] in QUIET:
            continue
        if examined >= MAX_METADATA_ROWS:
            break
        examined += 1
        if not _marked(a, b, rows[k]):
            continue
        i, lo = k, max(end, k - MAX_MOVED_WINDOW)
        while i > lo and _marked(a, b, rows[i - 1]):
            i -= 1
        j = k + 1
        while j < n and j - i < MAX_MOVED_WINDOW and _marked(a, b, rows[j]):
            j += 1
        regions.append((i, j))
        end = j
    return regions


def _repaired(
    a: Cassette, b: Cassette, region: list[Row], tolerance: float | None = None
) -> list[Row] | None:
    """A stretch of overlapping calls paired again: each A entry with the first free B
    entry of the same key and outcome, then of the same key, then of the same tool, in
    issue order; what finds no twin stays one-sided. ``None`` when no pair changes."""
    ia = [r.a for r in region if r.a is not None]
    ib = [r.b for r in region if r.b is not None]
    if not ia or not ib:
        return None
    passes: list[tuple[Callable[[int], Any], Callable[[int], Any]]] = [
        (lambda i: (a.key(i), a.fingerprint(i)), lambda j: (b.key(j), b.fingerprint(j))),
        (a.key, b.key),
        (a.tool, b.tool),
    ]
    pairs: dict[int, int] = {}
    free = list(ib)
    for of_a, of_b in passes:
        for i in ia:
            if i in pairs:
                continue
            want = of_a(i)
            j = next((j for j in free if of_b(j) == want), None)
            if j is not None:
                pairs[i] = j
                free.remove(j)
    before = {(r.a, r.b): r for r in region}
    if all(p in before for p in pairs.items()):
        return None  # the alignment's own pairs (a one-sided row has no twin here either)
    repeated_a = {r.a: r.repeated_a for r in region}
    repeated_b = {r.b: r.repeated_b for r in region}
    made: list[Row] = []
    for i in ia:
        j = pairs.get(i)
        if j is None:
            made.append(build_row(i, None, a.seq(i), None, Status.ONLY_A, a.tool(i),
                                  repeated_a=repeated_a[i], error_a=_is_error(a, i)))  # fmt: skip
        elif (i, j) in before:
            made.append(before[(i, j)])  # a pair the alignment made keeps its row
        else:
            made.append(_pair_row(a, b, i, j, repeated_a[i], repeated_b[j], tolerance))
    for j in free:  # a B call with no twin: after the stretch's A calls
        made.append(build_row(None, j, None, b.seq(j), Status.ONLY_B, b.tool(j),
                              repeated_b=repeated_b[j], error_b=_is_error(b, j)))  # fmt: skip
    return made


def _pair_row(
    a: Cassette,
    b: Cassette,
    i: int,
    j: int,
    rep_a: bool,
    rep_b: bool,
    tolerance: float | None = None,
) -> Row:
    """The row of A's entry ``i`` beside B's ``j`` paired across positions: ``moved`` for
    the same call with the same outcome (or numbers within ``tolerance``), else the pair's
    status (``response_drift``: the same call answered differently; ``metadata_drift``
    when only volatile metadata differs, as ``_quieted_rows`` decides for the others)."""
    status = pair_status(
        (a.tool(i), b.tool(j)), (a.key(i), b.key(j)), a.fingerprint(i) == b.fingerprint(j)
    )
    ea, eb = a.entry_view(i), b.entry_view(j)
    if status is Status.RESPONSE_DRIFT and not (ea.is_error or eb.is_error):
        how = classify_response_drift(a.tool(i), ea.response, eb.response, a, tolerance)
        if how == "metadata":
            status = Status.METADATA_DRIFT
        elif how == "noise":
            status = Status.SAME
    return build_row(
        i, j, a.seq(i), b.seq(j), Status.MOVED if status is Status.SAME else status, a.tool(i),
        repeated_a=rep_a, repeated_b=rep_b, error_a=_is_error(a, i), error_b=_is_error(b, j),
    )  # fmt: skip


def _is_error(c: Cassette, i: int) -> bool:
    """``Outcome.is_error`` of entry ``i`` (an ``error`` entry, or an HTTP 4xx/5xx)."""
    entry = c.entry_view(i)
    return is_error_outcome(entry.is_error, entry.response)
