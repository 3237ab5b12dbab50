"""The ``args_miss`` findings: args drift whose differing values look volatile, with the
preset normalization rule that makes them match (see ``diagnose.py``). Also the args-drift
rows the diagnosis opens (``args_drift_rows``), shared with ``_downstream.py``."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

from ..format.digest import digest
from ..format.plural import plural
from ..keys.normalize import NormalizationRules, rules_of
from ..keys.rule_check import over_normalization
from ..keys.urls import is_url_spelling
from ..keys.volatile import difference_kind, volatile_kind
from ._drift import value_drift
from ._finding import MAX_SEQS, finding, seq_list, short, short_pair, side_seqs
from .model import Change, DriftItem, Row, Status

if TYPE_CHECKING:
    from ..format.findings import Finding
    from ..keys.rule_check import OverNormalization
    from .result import DiffResult

MAX_EXAMINED = 200  # args-drift rows opened for args_miss / downstream_drift

#: value kind (volatile.value_kind) -> the preset that normalizes it (keys._presets.PRESETS)
PRESET_FOR_KIND = {
    "uuid": "uuid",
    "timestamp": "timestamp",
    "epoch": "timestamp",
    "request_id": "request_id",
    "abs_path": "path",
    "temp_path": "path",
}

#: the presets of a finding -> what its differing values are, in its message
_WHAT: dict[tuple[str, ...], str] = {
    ("nulls",): "nulls against left-out args",
    ("url",): "spellings of one URL",
}

#: an args-drift row: its index, the row, the drift of its args
Examined = tuple[int, Row, list[DriftItem]]
#: an args-drift row one preset set explains: its index, the row, ``{path: preset}``
_Hit = tuple[int, Row, dict[str, str]]


def args_drift_rows(result: DiffResult) -> list[Examined]:
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


def args_misses(result: DiffResult, examined: list[Examined]) -> list[Finding]:
    """One finding per tool and set of presets that explain its args drift."""
    by_tool: dict[tuple[str, tuple[str, ...]], list[_Hit]] = defaultdict(list)
    for i, row, items in examined:
        presets = _volatile_presets(items)
        if presets is not None:
            by_tool[(row.tool, tuple(sorted(set(presets.values()))))].append((i, row, presets))
    return [_args_miss(result, tool, names, hits) for (tool, names), hits in by_tool.items()]


def _null_or_volatile(d: DriftItem) -> str:
    """One args difference for a message: ``$.cabin absent in A, null in B`` or
    ``$.since "2024-..." -> "2025-..." (timestamp)``."""
    if d.change is Change.ADDED:
        return f"{d.path} absent in A, {short(d.b, 30, d.path)} in B"
    if d.change is Change.REMOVED:
        return f"{d.path} {short(d.a, 30, d.path)} in A, absent in B"
    a, b = short_pair(d.a, d.b, 30, d.path)
    return f"{d.path} {a} -> {b} ({difference_kind(d.a, d.b)})"


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


class _RuleCheck(NamedTuple):
    """The preset rule an ``args_miss`` proposes, tried on the recordings."""

    proposed: NormalizationRules
    #: rows of the finding whose args match under the cassette's rules and the proposed
    matches: int
    #: other recorded calls it would merge although their responses differ
    merged: list[OverNormalization]


def _args_miss(result: DiffResult, tool: str, names: tuple[str, ...], hits: list[_Hit]) -> Finding:
    """The finding of one tool's rows ``hits``, all explained by the presets ``names``."""
    index, row, presets = hits[0]
    check = _try_rule(result, tool, names, hits)
    items = [d for d in result.drift(index) if d.part == "args"]
    shown = "; ".join(_null_or_volatile(d) for d in items[:3])
    message = (
        f"{tool} args differ only in {_WHAT.get(names, 'volatile values')} at "
        f"{plural(len(hits), 'step')}, first at A seq {row.a_seq} / B seq {row.b_seq}: "
        f"{shown}. Replay would miss: normalize before digesting. Rule "
        f"{', '.join(check.proposed.describe())} makes {check.matches} of {len(hits)} match"
    )
    if check.merged:
        worst = check.merged[0]
        message += (
            f", but over-normalizes: it would merge {worst.distinct_calls} distinct "
            f"{worst.tool} calls with different responses (seqs "
            f"{seq_list(list(worst.seqs))})."
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
    evidence = _evidence(result, tool, row, presets, names, check, len(hits))
    return finding("args_miss", side_seqs([r for _, r, _ in hits]), message, action, evidence)


def _try_rule(
    result: DiffResult, tool: str, names: tuple[str, ...], hits: list[_Hit]
) -> _RuleCheck:
    """The presets ``names`` as a rule, added to A's rules: how many of ``hits`` it makes
    match, and what else it would merge in either recording."""
    proposed = NormalizationRules.from_presets(names)
    combined = NormalizationRules((*rules_of(result.a).rules, *proposed.rules))
    matches = sum(
        digest(combined.apply(tool, result.a[r.a].args))  # type: ignore[index]
        == digest(combined.apply(tool, result.b[r.b].args))  # type: ignore[index]
        for _, r, _ in hits
    )
    merged = [m for c in (result.a, result.b) for m in over_normalization(c, combined)]
    return _RuleCheck(proposed, matches, merged)


def _evidence(
    result: DiffResult,
    tool: str,
    row: Row,
    presets: dict[str, str],
    names: tuple[str, ...],
    check: _RuleCheck,
    steps: int,
) -> dict[str, Any]:
    """The evidence of an ``args_miss`` finding: the rule, its matches, what it merges,
    and the first row's keys."""
    assert row.a is not None and row.b is not None
    return {
        "tool": tool,
        "paths": presets,
        "rule": check.proposed.describe(),
        "presets": list(names),
        "matches": check.matches,
        "steps": steps,
        "over_normalization": [
            {
                "tool": m.tool,
                "digest": m.digest,
                "seqs": list(m.seqs)[:MAX_SEQS],
                "distinct_calls": m.distinct_calls,
                "distinct_responses": m.distinct_responses,
            }
            for m in check.merged
        ],
        "key_a": [result.a[row.a].tool, result.a.digest(row.a)],
        "key_b": [result.b[row.b].tool, result.b.digest(row.b)],
    }
