"""The ``error_response`` findings: a call that failed (an ``error`` entry, an HTTP 4xx/5xx
status, an MCP ``isError``) where the other run succeeded (see ``diagnose.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scan.lint import MALFORMED_FIELD
from ._contract import changed_tool_words
from ._error_kind import REFUSAL, TRANSIENT, UNKNOWN, error_kind
from ._finding import MAX_SEQS, finding, short

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from .model import Row
    from .result import DiffResult


def error_responses(result: DiffResult) -> list[Finding]:
    """At most one finding per side: its first failed call, and how many more. A call
    whose arguments the model malformed is left out: it failed by the model's doing, not
    the environment's (``_malformed_args.py`` names it)."""
    rows = _failed_rows(result)
    findings = []
    for side in ("a", "b"):
        c = result.a if side == "a" else result.b
        mine = [
            (i, r)
            for i, r in rows
            if (r.error_a if side == "a" else r.error_b)
            and not _malformed(c, r.a if side == "a" else r.b)
        ]
        if mine:
            findings.append(_side_finding(result, side, mine))
    return findings


def _malformed(c: Cassette, pos: int | None) -> bool:
    """True when the call at ``pos`` has the model's malformed arguments."""
    if pos is None:
        return False
    extra = c.entry_view(pos).extra
    return bool(extra) and isinstance(extra.get(MALFORMED_FIELD), str)


def _ok_keys(c: Cassette, errors: list[bool]) -> set[tuple[str, str]]:
    return {c.key(i) for i in range(len(c)) if not errors[i]}


def _failed_rows(result: DiffResult) -> list[tuple[int, Row]]:
    """The rows where one side failed and the other succeeded: a pair, or a one-sided
    call that failed on a key the other run made with success."""
    ok_keys_a = _ok_keys(result.a, result.outcomes()[0].errors)
    ok_keys_b = _ok_keys(result.b, result.outcomes()[1].errors)
    rows = []
    for i, row in enumerate(result.rows):
        if row.a is not None and row.b is not None:
            if row.error_a or row.error_b:
                rows.append((i, row))
        elif row.a is not None and row.error_a and result.a.key(row.a) in ok_keys_b:
            rows.append((i, row))  # A's extra call failed on a key B made with success
        elif row.b is not None and row.error_b and result.b.key(row.b) in ok_keys_a:
            rows.append((i, row))
    return rows


def _side_finding(result: DiffResult, side: str, mine: list[tuple[int, Row]]) -> Finding:
    """The finding of one side (``"a"`` or ``"b"``) over its failed rows ``mine``."""
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
        f"returned {what}" + (f", and {len(mine) - 1} more such calls." if len(mine) > 1 else ".")
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
            "count": len(mine),
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
