"""Diagnosis of a diff: name where two runs part and the likely mismatch (issue 3).

``diagnose(result)`` turns a ``DiffResult`` into ``Finding``s, each with its evidence (seqs,
keys, paths, values) and a first action. The kinds, in the order they are reported:

``first_divergence``
    The first row that is not ``same``, with both sides' steps.
``error_response``
    A call whose outcome is an error (an ``error`` entry or an HTTP 4xx/5xx status) where
    the other run's aligned call succeeded: a rate limit or an outage, not the agent.
``args_miss``
    Args drift whose differing values look volatile (``volatile.value_kind``: UUIDs,
    timestamps, request ids, absolute or temp paths): the article's "miss on arguments"
    signature. Proposes the preset normalization rule that makes the args match and says
    whether it would merge other recorded calls with different responses
    (``normalize.over_normalization``).
``downstream_drift``
    A drifted argument value that an earlier response of the same run returned, where
    that earlier step differs between the runs (an answer both runs got alike is not a
    cause: the agent chose): the earlier step is the likelier cause. Each side names one
    source seq, the step that fed that side's value.
``stale_response``
    The same key answered differently by the two recordings: the article's "replay passes
    but live fails" signature; re-record and diff. A row whose responses differ only by
    float noise (``refine.float_noise_row``: numbers within 2**-23 of each other, relative)
    is not one: it stays shown with its drift, and when it is the first divergence that
    finding says it is only noise. At most ``refine.MAX_NOISE_ROWS`` rows are checked.
``repeated_key``
    A key called more than once within a run, with counts and seqs on both sides;
    consecutive repeats are named a retry storm, a repeating cycle of keys a loop.
    Passing runs repeat calls too, so these report counts, never blame.

Costs are bounded for 100k-entry cassettes: at most ``MAX_EXAMINED`` args-drift rows are
opened, at most ``MAX_EXAMPLES`` response-drift rows per tool are deepdiffed, the upstream
search traces ``MAX_TRACED`` args-drift rows ``LOOKBACK`` entries back (at most
``MAX_DOWNSTREAM`` findings), and the repeated-key findings are the ``MAX_REPEATED`` keys
whose counts differ most between the runs.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..format.digest import digest
from ..format.findings import Finding
from ..format.jobs import CancelToken, JobGenerator, Progress, run_job
from ..format.jsonpath import format_path as json_path
from ..format.jsonpath import iter_leaves
from ..format.plural import plural
from ..keys.normalize import NormalizationRules, over_normalization, rules_of
from ..keys.urls import is_url_spelling
from ..keys.volatile import difference_kind, volatile_kind
from .drift import value_drift
from .model import Change, DriftItem, Row, Status
from .refine import MAX_NOISE_ROWS, QUIET, float_noise_row

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from .result import DiffResult

MAX_EXAMINED = 200  # args-drift rows opened for args_miss / downstream_drift
MAX_EXAMPLES = 3  # response-drift rows deepdiffed per tool for stale_response
MAX_SEQS = 20  # seqs listed per finding
LOOKBACK = 20  # earlier entries searched for the source of a drifted argument
MAX_REPEATED = 5  # repeated_key findings per diagnosis
MAX_CYCLE = 6  # longest cycle of keys detected as a loop
MAX_TRACED = 100  # args-drift rows whose values are traced upstream
MAX_DOWNSTREAM = 5  # downstream_drift findings per diagnosis

#: value kind (volatile.value_kind) -> the preset that normalizes it (normalize.PRESETS)
PRESET_FOR_KIND = {
    "uuid": "uuid",
    "timestamp": "timestamp",
    "epoch": "timestamp",
    "request_id": "request_id",
    "abs_path": "path",
    "temp_path": "path",
}

_STATUS_WORDS = {
    Status.RESPONSE_DRIFT: "same call, different response",
    Status.ARGS_DRIFT: "same tool, different args",
    Status.OTHER_CALL: "a different tool at this step",
    Status.ONLY_A: "a step only A made",
    Status.ONLY_B: "a step only B made",
}


def diagnose(result: DiffResult) -> list[Finding]:
    """The findings of ``result`` (see the module docstring), ``[]`` when the runs are the
    same. Pure: reads the cassettes and the cached drift, changes nothing."""
    return run_job(diagnose_job(result))


def diagnose_job(
    result: DiffResult, cancel: CancelToken | None = None
) -> JobGenerator[list[Finding]]:
    """``diagnose`` as a job: yields ``Progress(stage="diagnose", unit="checks")`` before
    each of its six checks; raises ``Cancelled`` when ``cancel`` is set between them."""
    if result.is_same:
        return []
    findings: list[Finding] = []
    examined: list[tuple[int, Row, list[DriftItem]]] = []

    def check(done: int, message: str) -> Progress:
        if cancel is not None:
            cancel.raise_if_cancelled()
        return Progress("diagnose", done, 6, "checks", message)

    yield check(0, "first divergence")
    findings.append(_first_divergence(result))
    findings.extend(_error_responses(result))
    yield check(1, "args drift")
    examined = _args_drift_rows(result)
    yield check(2, "args misses")
    findings.extend(_args_misses(result, examined))
    yield check(3, "downstream drift")
    findings.extend(_downstream(result, examined))
    yield check(4, "stale responses")
    findings.extend(_stale_responses(result))
    yield check(5, "repeated keys")
    findings.extend(_repeated_keys(result))
    yield Progress("diagnose", 6, 6, "checks")
    return findings


# -- helpers ------------------------------------------------------------------------------


def _finding(
    kind: str,
    seqs: dict[str, list[int]],
    message: str,
    action: str,
    evidence: dict[str, Any] | None = None,
) -> Finding:
    return Finding(kind=kind, seqs=seqs, message=message, action=action, evidence=evidence or {})


def _seqs(row: Row) -> dict[str, list[int]]:
    return {
        "a": [row.a_seq] if row.a_seq is not None else [],
        "b": [row.b_seq] if row.b_seq is not None else [],
    }


def _short(value: Any, width: int = 40) -> str:
    text = (
        "null" if value is None else (repr(value) if not isinstance(value, str) else f'"{value}"')
    )
    return text if len(text) <= width else text[: width - 3] + "..."


def _json_short(value: Any, width: int = 60) -> str:
    """``value`` as compact JSON, cut to ``width`` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def _step(c: Cassette, i: int | None, side: str) -> str:
    if i is None:
        return f"no step in {side}"
    return f"{side} seq {c.seq(i)} {c.tool(i)}"


def _key_text(key: tuple[str, str]) -> str:
    return f"{key[0]} {key[1]}"


def _seq_list(seqs: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3, 5"``; long lists are cut with a count."""
    parts: list[str] = []
    start = prev = None
    for s in seqs:
        if start is not None and prev is not None and s == prev + 1:
            prev = s
            continue
        if start is not None:
            parts.append(f"{start}-{prev}" if prev != start else f"{start}")
        start = prev = s
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else f"{start}")
    if len(parts) > 8:
        return ", ".join(parts[:8]) + f", ... ({len(seqs)} in all)"
    return ", ".join(parts)


# -- first divergence ---------------------------------------------------------------------


def _first_divergence(result: DiffResult) -> Finding:
    assert result.first_divergence is not None
    index = result.first_divergence
    row = result.rows[index]
    a, b = result.a, result.b
    where = f"row {index + 1}: {_step(a, row.a, 'A')} vs {_step(b, row.b, 'B')}"
    evidence: dict[str, Any] = {"row": index + 1, "status": row.status.value}
    paths: list[str] = []
    calls = ""
    if row.a is not None and row.b is not None:
        evidence["key_a"] = list(a.key(row.a))
        evidence["key_b"] = list(b.key(row.b))
        drift = result.drift(index)
        paths = [f"{d.part} {d.path}" for d in drift[:6]]
        evidence["paths"] = paths
        if row.status is Status.OTHER_CALL:
            # two different tools: both calls as made, never one's args against the other's
            args_a, args_b = a.entry_view(row.a).args, b.entry_view(row.b).args
            calls = (
                f": A called {a.tool(row.a)} {_json_short(args_a)}, "
                f"B called {b.tool(row.b)} {_json_short(args_b)}"
            )
    message = f"The runs part at {where} ({_STATUS_WORDS[row.status]}){calls}"
    message += f"; differing: {', '.join(paths)}." if paths else "."
    if float_noise_row(a, b, row):
        message += (
            " Only float noise: the numbers differ by at most 2^-23 of their size "
            "(float32 rounding, another summation order), not a stale recording."
        )
        evidence["float_noise"] = True
    empty = [(name, other) for name, c, other in (("A", a, b), ("B", b, a)) if not len(c)]
    if len(empty) == 1:
        # one run made no tool call at all: say so before anything else
        name, other = empty[0]
        other_name = "B" if name == "A" else "A"
        message = (
            f"{name} made no tool call; {other_name} made {plural(len(other), 'call')}. " + message
        )
        evidence["empty_side"] = name
    if row.status is Status.RESPONSE_DRIFT:
        action = (
            f"Compare the two responses of {row.tool} at A seq {row.a_seq} and B seq "
            f"{row.b_seq}: the agent asked the same thing and was answered differently."
        )
    elif row.status is Status.ARGS_DRIFT:
        action = (
            f"Find where the agent built the args of {row.tool} at A seq {row.a_seq}: "
            "look at the earlier responses it read and at volatile values in the args."
        )
    elif row.status is Status.OTHER_CALL:
        action = (
            "The agent chose another tool here: read what both runs saw just before this "
            "step (the previous responses, the prompt) to see why it decided differently."
        )
    else:
        side = "A" if row.status is Status.ONLY_A else "B"
        c, pos = (a, row.a) if side == "A" else (b, row.b)
        assert pos is not None
        context = _one_sided_context(result, side, pos)
        if context:
            message += " " + context["text"]
            evidence.update({k: v for k, v in context.items() if k != "text"})
        other_side = "B" if side == "A" else "A"
        if context:
            action = (
                f"{side} seq {c.seq(pos)} is an extra attempt of the same call: check the "
                "agent's retry policy (a cap, backoff, Retry-After) for this tool."
            )
        else:
            action = (
                f"{side} made a call {other_side} did not ({side} seq {c.seq(pos)}): check the "
                "response before it for the reason (an error, a retry, an extra lookup)."
            )
    return _finding("first_divergence", _seqs(row), message, action, evidence)


def _one_sided_context(result: DiffResult, side: str, pos: int) -> dict[str, Any]:
    """For a step only one run made: does it repeat its neighbour's key (a retry), and
    does the repeated call match the other run? ``{}`` when it does not."""
    c = result.a if side == "A" else result.b
    errors = (result.outcomes()[0] if side == "A" else result.outcomes()[1]).errors
    where = {row.a if side == "A" else row.b: row for row in result.rows}
    key = c.key(pos)
    for near in (pos + 1, pos - 1):
        if not 0 <= near < len(c) or c.key(near) != key:
            continue
        state = "an error" if errors[pos] else "a success"
        text = f"Its key equals {side} seq {c.seq(near)}'s (a repeated call; this one got {state})"
        paired = where.get(near)
        other_seq = None
        if paired is not None and paired.a is not None and paired.b is not None:
            other_seq = paired.b_seq if side == "A" else paired.a_seq
            other = "B" if side == "A" else "A"
            text += f", and {side} seq {c.seq(near)} pairs with {other} seq {other_seq}"
            text += f" ({paired.status.value.replace('_', ' ')})"
        return {
            "text": text + ".",
            "repeat_of_seq": c.seq(near),
            "repeat_error": errors[pos],
            "repeat_pairs_with": other_seq,
        }
    return {}


# -- error responses ----------------------------------------------------------------------


def _error_summary(value: Any, is_error: bool) -> str:
    if is_error and isinstance(value, dict):
        return f"{value.get('type', 'Error')}: {_short(value.get('message', ''), 50)}"
    if isinstance(value, dict) and value.get("isError") is True:  # an MCP tool result
        texts = [c.get("text") for c in value.get("content") or [] if isinstance(c, dict)]
        text = next((t for t in texts if isinstance(t, str) and t), "")
        return "MCP isError" + (f" ({_short(text, 40)})" if text else "")
    if isinstance(value, dict):
        for name in ("status", "status_code", "statusCode", "http_status", "code"):
            if name in value:
                status = value[name]
                if isinstance(status, dict):
                    status = status.get("code")
                detail = value.get("error") or value.get("message")
                return f"HTTP {status}" + (f" ({_short(detail, 30)})" if detail else "")
    return _short(value)


def _ok_keys(c: Cassette, errors: list[bool]) -> set[tuple[str, str]]:
    return {c.key(i) for i in range(len(c)) if not errors[i]}


def _error_responses(result: DiffResult) -> list[Finding]:
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
    findings = []
    for side in ("a", "b"):
        mine = [(i, r) for i, r in rows if (r.error_a if side == "a" else r.error_b)]
        if not mine:
            continue
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
            f"{name} got an error where {other} succeeded: {name} seq {seqs[0]} {row.tool} "
            f"returned {what}"
            + (f", and {len(mine) - 1} more such calls." if len(mine) > 1 else ".")
        )
        action = (
            "A transient failure (rate limit, outage) rather than the agent: check that the "
            "agent handles it (backoff within a retry budget, honour Retry-After), then "
            "re-record if the environment caused it."
        )
        findings.append(
            _finding(
                "error_response",
                {"a": [], "b": [], side: [s for s in seqs if s is not None][:MAX_SEQS]},
                message,
                action,
                {"rows": [i for i, _ in mine][:MAX_SEQS], "count": len(mine), "first": what},
            )
        )
    return findings


# -- args miss and downstream drift -------------------------------------------------------


def _args_drift_rows(result: DiffResult) -> list[tuple[int, Row, list[DriftItem]]]:
    """Up to ``MAX_EXAMINED`` args-drift rows with the drift of their args."""
    out = []
    for i, row in enumerate(result.rows):
        if row.status is not Status.ARGS_DRIFT:
            continue
        assert row.a is not None and row.b is not None
        args_a, args_b = result.a[row.a].args, result.b[row.b].args
        out.append((i, row, value_drift(args_a, args_b, "args")))
        if len(out) >= MAX_EXAMINED:
            break
    return out


def _null_or_volatile(d: DriftItem) -> str:
    """One args difference for a message: ``$.cabin absent in A, null in B`` or
    ``$.since "2024-..." -> "2025-..." (timestamp)``."""
    if d.change is Change.ADDED:
        return f"{d.path} absent in A, {_short(d.b, 30)} in B"
    if d.change is Change.REMOVED:
        return f"{d.path} {_short(d.a, 30)} in A, absent in B"
    return f"{d.path} {_short(d.a, 30)} -> {_short(d.b, 30)} ({difference_kind(d.a, d.b)})"


def _volatile_presets(items: list[DriftItem]) -> dict[str, str] | None:
    """``{path: preset}`` when every args difference is a volatile value on both sides
    that one preset normalizes; ``None`` otherwise."""
    presets: dict[str, str] = {}
    for item in items:
        # null on one side, absent on the other: the nulls preset drops null-valued args
        if (item.change is Change.ADDED and item.b is None) or (
            item.change is Change.REMOVED and item.a is None
        ):
            presets[item.path] = "nulls"
            continue
        if item.change is not Change.VALUE_CHANGED:
            return None
        if is_url_spelling(item.a, item.b):
            presets[item.path] = "url"  # one URL written two ways
            continue
        # a bare date (a flight date) that differs is a different request, not volatile
        ka, kb = volatile_kind(item.a), volatile_kind(item.b)
        pa, pb = PRESET_FOR_KIND.get(ka or ""), PRESET_FOR_KIND.get(kb or "")
        if pa is None or pa != pb:
            return None
        presets[item.path] = pa
    return presets or None


def _args_misses(
    result: DiffResult, examined: list[tuple[int, Row, list[DriftItem]]]
) -> list[Finding]:
    by_tool: dict[tuple[str, tuple[str, ...]], list[tuple[int, Row, dict[str, str]]]] = defaultdict(
        list
    )
    for i, row, items in examined:
        presets = _volatile_presets(items)
        if presets is not None:
            by_tool[(row.tool, tuple(sorted(set(presets.values()))))].append((i, row, presets))
    findings = []
    for (tool, names), hits in by_tool.items():
        index, row, presets = hits[0]
        assert row.a is not None and row.b is not None
        entry_a, entry_b = result.a[row.a], result.b[row.b]
        proposed = NormalizationRules.from_presets(names)
        combined = NormalizationRules((*rules_of(result.a).rules, *proposed.rules))
        matches = sum(
            digest(combined.apply(tool, result.a[r.a].args))  # type: ignore[index]
            == digest(combined.apply(tool, result.b[r.b].args))  # type: ignore[index]
            for _, r, _ in hits
        )
        merged = [m for c in (result.a, result.b) for m in over_normalization(c, combined)]
        items = [d for d in result.drift(index) if d.part == "args"]
        shown = "; ".join(_null_or_volatile(d) for d in items[:3])
        rule_text = ", ".join(proposed.describe())
        kinds: dict[tuple[str, ...], str] = {
            ("nulls",): "nulls against left-out args",
            ("url",): "spellings of one URL",
        }
        what = kinds.get(names, "volatile values")
        message = (
            f"{tool} args differ only in {what} at {plural(len(hits), 'step')}, first at "
            f"A seq {row.a_seq} / B seq {row.b_seq}: {shown}. Replay would miss: normalize "
            f"before digesting. Rule {rule_text} makes {matches} of {len(hits)} match"
        )
        if merged:
            worst = merged[0]
            message += (
                f", but over-normalizes: it would merge {worst.distinct_calls} distinct "
                f"{worst.tool} calls with different responses (seqs "
                f"{_seq_list(list(worst.seqs))})."
            )
            action = (
                f"Scope the rule to {tool} and the paths {', '.join(sorted(presets))} "
                "(a drop or replace rule) instead of the global preset, then check again."
            )
        else:
            message += " and merges no other recorded calls."
            action = (
                f"Adopt the normalization rule: presets = {list(names)} under "
                "[tool.cassette.normalize], then re-run the diff."
            )
        findings.append(
            _finding(
                "args_miss",
                {
                    "a": [r.a_seq for _, r, _ in hits if r.a_seq is not None][:MAX_SEQS],
                    "b": [r.b_seq for _, r, _ in hits if r.b_seq is not None][:MAX_SEQS],
                },
                message,
                action,
                {
                    "tool": tool,
                    "paths": presets,
                    "rule": proposed.describe(),
                    "presets": list(names),
                    "matches": matches,
                    "steps": len(hits),
                    "over_normalization": [
                        {
                            "tool": m.tool,
                            "digest": m.digest,
                            "seqs": list(m.seqs)[:MAX_SEQS],
                            "distinct_calls": m.distinct_calls,
                            "distinct_responses": m.distinct_responses,
                        }
                        for m in merged
                    ],
                    "key_a": [entry_a.tool, result.a.digest(row.a)],
                    "key_b": [entry_b.tool, result.b.digest(row.b)],
                },
            )
        )
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


def _downstream(
    result: DiffResult, examined: list[tuple[int, Row, list[DriftItem]]]
) -> list[Finding]:
    findings: list[Finding] = []
    index_a, index_b = _LeafIndex(result.a), _LeafIndex(result.b)
    pos_a = {row.a: i for i, row in enumerate(result.rows) if row.a is not None}
    pos_b = {row.b: i for i, row in enumerate(result.rows) if row.b is not None}
    for index, row, items in examined[:MAX_TRACED]:
        assert row.a is not None and row.b is not None
        if len(findings) >= MAX_DOWNSTREAM:
            break
        for item in items:
            if item.change is not Change.VALUE_CHANGED:
                continue
            src_a = index_a.find(row.a, item.a) if _traceable(item.a) else None
            src_b = index_b.find(row.b, item.b) if _traceable(item.b) else None
            if src_a is None and src_b is None:
                continue
            sources = []
            for side, src, c, pos in (("A", src_a, result.a, pos_a), ("B", src_b, result.b, pos_b)):
                if src is None:
                    continue
                i, path = src
                up_row = result.rows[pos[i]]
                # the earlier step is a likelier cause only where it differs between the
                # runs: an identical answer (both runs read the same values) is not
                if up_row.status in QUIET:
                    continue
                sources.append((side, c, i, path, up_row, pos[i]))
            if not sources:
                continue
            parts = []
            actions = []
            seqs: dict[str, list[int]] = {"a": [row.a_seq], "b": [row.b_seq]}  # type: ignore[list-item]
            evidence: dict[str, Any] = {
                "row": index + 1,
                "path": item.path,
                "a": item.a,
                "b": item.b,
            }
            for side, c, i, path, up_row, up_index in sources:
                seq, tool = c.seq(i), c.tool(i)
                parts.append(
                    f"{side}'s value came from {side} seq {seq} {tool} response {path} "
                    f"({up_row.status.value.replace('_', ' ')} there)"
                )
                # one seq per side: the step that fed this side's value, never the seq its
                # row happens to pair it with
                actions.append(f"{side} seq {seq} ({tool}) fed {side}'s value")
                seqs[side.lower()].insert(0, seq)
                evidence[f"source_{side.lower()}"] = {
                    "seq": seq,
                    "tool": tool,
                    "path": path,
                    "row": up_index + 1,
                    "status": up_row.status.value,
                }
            message = (
                f"{row.tool} args {item.path} drifted at A seq {row.a_seq} / B seq "
                f"{row.b_seq} ({_short(item.a, 30)} -> {_short(item.b, 30)}), and "
                + "; ".join(parts)
                + ". The earlier step is the likelier cause."
            )
            action = (
                "Look upstream first, at the response that differs between the runs: "
                + "; ".join(actions)
                + "."
            )
            findings.append(_finding("downstream_drift", seqs, message, action, evidence))
    return findings


# -- stale responses ----------------------------------------------------------------------


def _stale_responses(result: DiffResult) -> list[Finding]:
    by_tool: dict[str, list[tuple[int, Row]]] = defaultdict(list)
    checked = 0
    for i, row in enumerate(result.rows):
        if row.status is Status.RESPONSE_DRIFT and not (row.error_a or row.error_b):
            if checked < MAX_NOISE_ROWS:
                # float noise alone is no stale recording (shown, with its numbers line)
                checked += 1
                if float_noise_row(result.a, result.b, row):
                    continue
            by_tool[row.tool].append((i, row))
    findings = []
    for tool, rows in by_tool.items():
        examples = []
        paths: list[str] = []
        number_type: list[str] = []
        for index, row in rows[:MAX_EXAMPLES]:
            drift = result.drift(index)
            examples.append(
                {
                    "row": index + 1,
                    "a_seq": row.a_seq,
                    "b_seq": row.b_seq,
                    "paths": [d.path for d in drift][:MAX_SEQS],
                }
            )
            for d in drift:
                if d.path not in paths:
                    paths.append(d.path)
                if d.change is Change.NUMBER_TYPE and d.path not in number_type:
                    number_type.append(d.path)
        first = rows[0][1]
        changed = ", ".join(paths[:5]) + (", ..." if len(paths) > 5 else "")
        message = (
            f"{tool} was answered differently for the same key at {plural(len(rows), 'step')}, "
            f"first A seq {first.a_seq} / B seq {first.b_seq} ({changed or 'outcome'})."
        )
        if number_type:
            message += f" Number type only (1 vs 1.0) at {', '.join(number_type[:3])}."
        findings.append(
            _finding(
                "stale_response",
                {
                    "a": [r.a_seq for _, r in rows if r.a_seq is not None][:MAX_SEQS],
                    "b": [r.b_seq for _, r in rows if r.b_seq is not None][:MAX_SEQS],
                },
                message,
                "The recording is stale for this call: re-record it and diff the old "
                "cassette against the new one.",
                {
                    "tool": tool,
                    "steps": len(rows),
                    "examples": examples,
                    "number_type": number_type,
                },
            )
        )
    return findings


# -- repeated keys, retry storms, loops ---------------------------------------------------


def _positions(c: Cassette) -> dict[tuple[str, str], list[int]]:
    pos: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in range(len(c)):
        pos[c.key(i)].append(i)
    return pos


def _longest_run(positions: list[int]) -> tuple[int, int]:
    """(length, start position) of the longest run of consecutive positions."""
    best_len, best_start = 1, positions[0]
    cur_len, cur_start = 1, positions[0]
    for prev, cur in itertools.pairwise(positions):
        if cur == prev + 1:
            cur_len += 1
        else:
            cur_len, cur_start = 1, cur
        if cur_len > best_len:
            best_len, best_start = cur_len, cur_start
    return best_len, best_start


def _cycles(c: Cassette) -> list[tuple[int, int, int]]:
    """Loops: ``(start, period, repetitions)`` for each stretch where a cycle of 2 to
    ``MAX_CYCLE`` distinct keys repeats back to back at least twice; most steps first.
    O(n * MAX_CYCLE)."""
    keys = [c.key(i) for i in range(len(c))]
    n = len(keys)
    found: list[tuple[int, int, int]] = []
    covered = [False] * n
    for period in range(2, MAX_CYCLE + 1):
        i = 0
        while i + period < n:
            if keys[i] != keys[i + period]:
                i += 1
                continue
            run = 0  # keys[i + k] == keys[i + period + k] for k < run
            while i + period + run < n and keys[i + run] == keys[i + period + run]:
                run += 1
            span = run + period
            if span >= 2 * period and not covered[i] and len(set(keys[i : i + period])) == period:
                found.append((i, period, span // period))
                for k in range(i, i + span):
                    covered[k] = True
            i += run + 1
    found.sort(key=lambda f: -f[1] * f[2])
    return found


def _repeated_keys(result: DiffResult) -> list[Finding]:
    a, b = result.a, result.b
    pos_a, pos_b = _positions(a), _positions(b)
    errs_a, errs_b = (o.errors for o in result.outcomes())
    repeated = [
        k
        for k in pos_a.keys() | pos_b.keys()
        if len(pos_a.get(k, ())) > 1 or len(pos_b.get(k, ())) > 1
    ]
    repeated.sort(
        key=lambda k: (
            -abs(len(pos_a.get(k, ())) - len(pos_b.get(k, ()))),
            -max(len(pos_a.get(k, ())), len(pos_b.get(k, ()))),
            # ties: the key seen first, then the key itself (the set above iterates in
            # hash order, which changes with PYTHONHASHSEED)
            min(pos_a.get(k, [len(a)])[0], pos_b.get(k, [len(b)])[0]),
            k,
        ),
    )
    findings = []
    for key in repeated[:MAX_REPEATED]:
        pa, pb = pos_a.get(key, []), pos_b.get(key, [])
        sa, sb = [a.seq(i) for i in pa], [b.seq(i) for i in pb]
        patterns: dict[str, Any] = {}
        notes = []
        for side, pos, c, errs in (("A", pa, a, errs_a), ("B", pb, b, errs_b)):
            if len(pos) < 2:
                continue
            length, start = _longest_run(pos)
            if length >= 2:
                n_err = sum(errs[i] for i in range(start, start + length))
                if n_err and length >= 3:
                    pattern, name = "retry_storm", f"a retry storm: {n_err} errors"
                elif n_err:
                    pattern, name = "retry", "one retry after an error"
                else:
                    pattern, name = "consecutive", "no error between them"
                notes.append(
                    f"{side} calls it {length} times in a row at seqs "
                    f"{c.seq(start)}-{c.seq(start + length - 1)} ({name})"
                )
                patterns[side.lower()] = {
                    "pattern": pattern,
                    "run": length,
                    "start_seq": c.seq(start),
                    "errors": n_err,
                }
        message = (
            f"{_key_text(key)} is called {plural(len(sa), 'time')} in A (seqs {_seq_list(sa) or '-'}) "
            f"and {plural(len(sb), 'time')} in B (seqs {_seq_list(sb) or '-'})."
        )
        if notes:
            message += " " + "; ".join(notes) + "."
        differs = len(sa) != len(sb)
        action = (
            "Check the agent's retry policy for this call (a cap, backoff, Retry-After); "
            "the repeat count differs between the runs but repeats alone are not the cause: "
            "confirm with the first divergence."
            if differs
            else "Both runs repeat this call as often: it is not what tells them apart."
        )
        findings.append(
            _finding(
                "repeated_key",
                {"a": sa[:MAX_SEQS], "b": sb[:MAX_SEQS]},
                message,
                action,
                {
                    "key": list(key),
                    "count_a": len(sa),
                    "count_b": len(sb),
                    "patterns": patterns,
                },
            )
        )
    cycles = {"a": _cycles(a), "b": _cycles(b)}
    for side, c in (("a", a), ("b", b)):
        other_side = "b" if side == "a" else "a"
        other = b if side == "a" else a
        for start, period, reps in cycles[side][:2]:
            keys = [c.key(start + k) for k in range(period)]
            end = start + period * reps - 1
            tools = ", ".join(k[0] for k in keys)
            other_reps = max(
                (
                    r
                    for s, p, r in cycles[other_side]
                    if p == period and {other.key(s + k) for k in range(p)} == set(keys)
                ),
                default=0,
            )
            message = (
                f"{side.upper()} loops: a cycle of {period} keys ({tools}) repeats {reps} "
                f"times back to back at seqs {c.seq(start)}-{c.seq(end)}; "
                + (
                    f"{other_side.upper()} repeats it {other_reps} times."
                    if other_reps
                    else f"{other_side.upper()} does not loop over it."
                )
            )
            seqs = {side: [c.seq(i) for i in range(start, end + 1)][:MAX_SEQS], other_side: []}
            findings.append(
                _finding(
                    "repeated_key",
                    seqs,
                    message,
                    "Look at the response the loop keeps reading: the agent does not see the "
                    "progress it waits for, or a stop condition is missing.",
                    {
                        "pattern": "loop",
                        "side": side,
                        "keys": [list(k) for k in keys],
                        "repetitions": reps,
                        "other_repetitions": other_reps,
                    },
                )
            )
    return findings
