"""The ``error_response`` findings: a call that failed (an ``error`` entry, an HTTP 4xx/5xx
status, an MCP ``isError``) where the other run succeeded (see ``diagnose.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..scan.lint import MALFORMED_FIELD
from ._contract import changed_tool_words
from ._error_kind import REFUSAL, TRANSIENT, UNKNOWN, error_kind
from ._finding import MAX_SEQS, finding, short
from ._run_keys import SCAN_STEP, CompactKey, RunKeys

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from .model import Row
    from .result import DiffResult


def error_responses(result: DiffResult) -> list[Finding]:
    """At most one finding per side: its first failed call, and how many more. A call
    whose arguments the model malformed is left out: it failed by the model's doing, not
    the environment's (``_malformed_args.py`` names it)."""
    failed = _failed_rows(result)
    return [
        _side_finding(result, side, count, kept)
        for side, (count, kept) in zip(("a", "b"), failed, strict=True)
        if count
    ]


def _malformed(c: Cassette, pos: int | None) -> bool:
    """True when the call at ``pos`` has the model's malformed arguments."""
    if pos is None:
        return False
    extra = c.entry_view(pos).extra
    return bool(extra) and isinstance(extra.get(MALFORMED_FIELD), str)


#: the failed rows of a side a finding lists; the rest are counted
_KEPT = MAX_SEQS

#: per side: how many failed rows, and the first ``_KEPT`` of them ``(row index, row)``
_Failed = tuple[int, list[tuple[int, "Row"]]]


def _failed_rows(result: DiffResult) -> tuple[_Failed, _Failed]:
    """Per side, the rows where it failed and the other succeeded: a pair, or a
    one-sided call that failed on a key the other run made with success; calls with
    malformed args left out. Counted, the first ``_KEPT`` kept: memory does not grow
    with the rows."""
    errors_a, errors_b = (o.errors for o in result.outcomes())
    keys = RunKeys(result.a, result.b)
    key_a, key_b = keys.of("a"), keys.of("b")
    # the digest codes of the one-sided failed calls (ints, no key made), then the
    # compact keys (``RunKeys``) the other run made with success among its entries of
    # those codes (a scan at C speed): no set of every key of a run, no key text
    codes_a: set[int] = set()
    codes_b: set[int] = set()
    for i, row in enumerate(result.rows):
        if not (i + 1) % SCAN_STEP:
            _drop(keys)  # the code pages read, let go (issue 31)
        if row.a is not None and row.b is None and row.error_a:
            codes_b.add(keys.code("a", row.a))
        elif row.b is not None and row.a is None and row.error_b:
            codes_a.add(keys.code("b", row.b))
    ok_keys_a = _ok_keys(keys, "a", errors_a, codes_a)
    ok_keys_b = _ok_keys(keys, "b", errors_b, codes_b)
    del codes_a, codes_b
    counts = [0, 0]
    kept: tuple[list[tuple[int, Row]], list[tuple[int, Row]]] = ([], [])
    for i, row in enumerate(result.rows):
        if not (i + 1) % SCAN_STEP:
            _drop(keys)
        if row.a is not None and row.b is not None:
            if not (row.error_a or row.error_b):
                continue
        elif row.a is not None:
            if not (row.error_a and key_a(row.a) in ok_keys_b):
                continue  # A's extra call failed on a key B made with success
        elif row.b is None or not (row.error_b and key_b(row.b) in ok_keys_a):
            continue
        for side, (c, pos, error) in enumerate(
            ((result.a, row.a, row.error_a), (result.b, row.b, row.error_b))
        ):
            if error and not _malformed(c, pos):
                counts[side] += 1
                if len(kept[side]) < _KEPT:
                    kept[side].append((i, row))
    return (counts[0], kept[0]), (counts[1], kept[1])


def _drop(keys: RunKeys) -> None:
    """Let go of the pages of both runs' key columns read so far (``RunKeys.drop``)."""
    keys.drop("a")
    keys.drop("b")


def _ok_keys(keys: RunKeys, side: str, errors: Sequence[bool], codes: set[int]) -> set[CompactKey]:
    """The compact keys (``RunKeys``) of the entries of run ``side`` made with success
    whose digest code is in ``codes``."""
    if not codes:
        return set()
    key_of = keys.of(side)
    return {key_of(i) for i in keys.positions(side, codes) if not errors[i]}


def _side_finding(
    result: DiffResult, side: str, count: int, mine: list[tuple[int, Row]]
) -> Finding:
    """The finding of one side (``"a"`` or ``"b"``) over its ``count`` failed rows
    (``mine``: the first of them)."""
    _index, row = mine[0]
    c = result.a if side == "a" else result.b
    pos = row.a if side == "a" else row.b
    assert pos is not None
    entry = c[pos]
    what = _error_summary(entry.error if entry.is_error else entry.response, entry.is_error)
    other = "B" if side == "a" else "A"
    name = side.upper()
    seqs = [r.a_seq if side == "a" else r.b_seq for _, r in mine]
    message = (
        f"{name} got an error where {other} succeeded: {name} seq {seqs[0]} {entry.tool} "
        f"returned {what}" + (f", and {count - 1} more such calls." if count > 1 else ".")
    )
    failed = entry.error if entry.is_error else entry.response
    kind = error_kind(failed, entry.is_error)
    # the failed call's own tool: by seq, the other side's row may be another tool's call
    action = changed_tool_words(result, entry.tool, entry.args, side) or _ACTIONS[kind]
    return finding(
        "error_response",
        {"a": [], "b": [], side: [s for s in seqs if s is not None][:MAX_SEQS]},
        message,
        action,
        {
            "rows": [i for i, _ in mine][:MAX_SEQS],
            "count": count,
            "first": what,
            "error_kind": kind,
        },  # fmt: skip
    )


#: the first thing to do, by the kind of failure (``_error_kind.py``)
_ACTIONS = {
    TRANSIENT: (
        "A transient failure (rate limit, outage) rather than the agent: check that the "
        "agent handles it (backoff within a retry budget, honour Retry-After), then "
        "re-record if the environment caused it."
    ),
    REFUSAL: (
        "A refusal by the tool's own rules (a business error), not a transient failure: "
        "compare what the agent asked here with the other run's call (its args, or the "
        "state its earlier calls left), and the rule the message names; re-recording "
        "will not change it."
    ),
    UNKNOWN: (
        "The tool failed here and not in the other run: read the error; if it is "
        "transient (rate limit, outage), check the agent's retry handling and re-record; "
        "if it is the tool refusing what the agent asked, compare the two runs' calls."
    ),
}


def _error_summary(value: Any, is_error: bool) -> str:
    if is_error and isinstance(value, dict):
        return f"{value.get('type', 'Error')}: {short(value.get('message', ''), 50)}"
    if isinstance(value, dict) and value.get("isError") is True:  # an MCP tool result
        texts = [c.get("text") for c in value.get("content") or [] if isinstance(c, dict)]
        text = next((t for t in texts if isinstance(t, str) and t), "")
        return "MCP isError" + (f" ({short(text, 40)})" if text else "")
    if isinstance(value, dict):
        for name in ("status", "status_code", "statusCode", "http_status", "code"):
            if name in value:
                status = value[name]
                if isinstance(status, dict):
                    status = status.get("code")
                detail = value.get("error") or value.get("message")
                return f"HTTP {status}" + (f" ({short(detail, 30)})" if detail else "")
    return short(value)
