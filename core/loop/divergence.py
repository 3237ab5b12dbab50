"""Where the runs of a gate part, from their call logs and the alignment engine:

- every run made the same calls (same keys, served by the same recordings): the
  nondeterminism is *after the tool layer* (model sampling, dates in prompts, ordering,
  scoring);
- otherwise the first call at which runs differ (the earliest first divergence of the
  by-seq diff of each distinct call log against the most common one) and, at that call,
  how many runs took each path and how many of those passed. When the runs part inside
  one batch of parallel calls (the recorder's ``batch`` mark, carried by the call logs)
  that every run made, only in another order, the message says so, and whether the
  order mattered: the runs of different orders passed differently (``parallel_order``).

Each distinct call log is diffed against the most common one once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..diff.result import DiffResult, diff_cassettes
from ..format.cassette import Cassette
from ..format.constants import BATCH_FIELD
from ..format.plural import plural

#: what a divergence says: ``after_tool_layer`` (same calls everywhere), ``calls`` (the
#: first call where runs differ), ``no_call_log`` (flaky, but no run left a call log)
DIVERGENCE_KINDS = ("after_tool_layer", "calls", "no_call_log")

Signature = tuple[tuple[Any, ...], ...]


class Run(Protocol):
    """What the analysis reads of a run (a ``RunResult``, or the pytest plugin's)."""

    @property
    def run(self) -> int: ...

    @property
    def passed(self) -> bool: ...


@dataclass(frozen=True)
class DivergencePath:
    """One path the runs took at the call where they part.

    Attributes:
        call: the call those runs made there, ``{"tool", "args", "seq", "outcome"}``
            (``seq`` the recorded entry that served it), or ``None``: they made no more calls.
        runs: the run numbers that took it.
        passed: how many of them passed.
        status: the by-seq diff status of this path against the most common one at that
            call (``same`` for the most common path itself, ``args_drift``, ``other_call``,
            ``response_drift``, ``only_a``, ``only_b``).
    """

    call: dict[str, Any] | None
    runs: tuple[int, ...]
    passed: int
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "call": self.call,
            "runs": list(self.runs),
            "count": len(self.runs),
            "passed": self.passed,
            "status": self.status,
        }


@dataclass(frozen=True)
class Divergence:
    """Where the runs of a gate part.

    Attributes:
        kind: one of ``DIVERGENCE_KINDS``.
        call: the 1-based call number where runs first differ (``None`` for
            ``after_tool_layer``).
        paths: the paths taken at that call, most runs first (empty for
            ``after_tool_layer``).
        calls: for ``after_tool_layer``, how many calls every run made.
        without_log: runs that left no call log (no replay report), left out.
        message: the explanation in one paragraph.
        parallel_order: the runs part inside one batch of parallel calls that every run
            made, in another order (``kind`` ``calls`` only).
    """

    kind: str
    call: int | None
    paths: tuple[DivergencePath, ...]
    calls: int | None
    without_log: tuple[int, ...]
    message: str
    parallel_order: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "call": self.call,
            "calls": self.calls,
            "paths": [p.to_json() for p in self.paths],
            "without_log": list(self.without_log),
            "message": self.message,
            "parallel_order": self.parallel_order,
        }


def _signature(log: Cassette) -> Signature:
    return tuple(
        (log.tool(i), log.digest(i), e.extra.get("outcome"), e.extra.get("replayed_seq"))
        for i, e in enumerate(log)
    )


def _call_summary(log: Cassette, i: int) -> tuple[dict[str, Any] | None, list[str]]:
    """Call ``i`` of ``log`` as a path shows it, its args masked, and the secrets masked."""
    if i >= len(log):
        return None, []
    from ..scan.masking import mask_found

    entry = log[i]
    args, found = mask_found(entry.args)  # shown and saved (gate --json, results): masked
    summary = {
        "tool": entry.tool,
        "args": args,
        "seq": entry.extra.get("replayed_seq"),
        "outcome": entry.extra.get("outcome"),
    }
    return summary, found


def _masked_across(calls: list[dict[str, Any] | None], found: list[list[str]]) -> None:
    """Each call's args with the secrets found in some path's call and not in another's
    masked (``pair_masking``), in place: a token one run sends cut or split, that its own scan
    misses, is not shown by that run's path."""
    from ..scan.pair_masking import mask_pieces_in, pair_secrets

    secrets = pair_secrets(*found)
    for call in calls:
        if call is not None and secrets:
            call["args"] = mask_pieces_in(call["args"], secrets)


def _describe(call: dict[str, Any] | None, passed: int) -> str:
    if call is None:
        return f"made no more calls ({passed} passed)"
    args = json.dumps(call["args"], ensure_ascii=False, sort_keys=True, default=str)
    if len(args) > 60:
        args = args[:57] + "..."
    served = f"seq {call['seq']}" if call.get("seq") is not None else call.get("outcome")
    return f"called {call['tool']} {args} ({served}; {passed} passed)"


@dataclass
class _Logged:
    """A run with its call log and that log's signature."""

    run: Run
    log: Cassette
    signature: Signature


class _Diffs:
    """The by-seq diffs of call logs against the reference, each computed once."""

    def __init__(self, reference: _Logged) -> None:
        self.reference = reference
        self._done: dict[int, DiffResult] = {}

    def against(self, log: Cassette) -> DiffResult:
        found = self._done.get(id(log))
        if found is None:
            found = diff_cassettes(self.reference.log, log, align="seq")
            self._done[id(log)] = found
        return found


def divergence(logs: Sequence[tuple[Run, Cassette | None]], flaky: bool) -> Divergence | None:
    """Where the runs part (see the module docstring); ``None`` when every run with a call
    log made the same calls and the gate is not flaky, or no run left a log."""
    with_log = [_Logged(r, log, _signature(log)) for r, log in logs if log is not None]
    without = tuple(r.run for r, log in logs if log is None)
    if not with_log:
        return _no_call_log(without) if flaky else None
    groups: dict[Signature, list[_Logged]] = {}
    for logged in with_log:
        groups.setdefault(logged.signature, []).append(logged)
    if len(groups) == 1:
        return _after_tool_layer(with_log, without) if flaky else None
    ordered = sorted(groups.values(), key=lambda g: (-len(g), min(x.run.run for x in g)))
    diffs = _Diffs(ordered[0][0])
    first = min(_first_difference(diffs, group[0]) for group in ordered[1:])
    paths = _paths(with_log, diffs, first)
    parts = [f"{plural(len(p.runs), 'run')} {_describe(p.call, p.passed)}" for p in paths]
    message = f"The runs part at call {first + 1}: " + "; ".join(parts) + "."
    order = _parallel_order(with_log, first, paths)
    return Divergence("calls", first + 1, paths, None, without, message + order, bool(order))


def _parallel_order(with_log: list[_Logged], first: int, paths: tuple[DivergencePath, ...]) -> str:
    """The sentence saying that call ``first`` lies in one batch of parallel calls that
    every run made (the same recorded seqs), each run in its own order, and whether the
    order mattered; ``""`` otherwise."""
    spans: set[tuple[int, int]] = set()
    served: set[tuple[str, ...]] = set()
    for logged in with_log:
        log = logged.log
        if first >= len(log):
            return ""
        mark = log.entry_view(first).extra.get(BATCH_FIELD)
        if mark is None:
            return ""
        lo, hi = first, first + 1
        while lo > 0 and log.entry_view(lo - 1).extra.get(BATCH_FIELD) == mark:
            lo -= 1
        while hi < len(log) and log.entry_view(hi).extra.get(BATCH_FIELD) == mark:
            hi += 1
        spans.add((lo, hi))
        served.add(tuple(sorted(str(log.entry_view(k).extra.get("replayed_seq"))
                                for k in range(lo, hi))))  # fmt: skip
    if len(served) != 1:
        return ""  # not the same calls: the runs made other calls, not another order
    lo, hi = min(s[0] for s in spans) + 1, max(s[1] for s in spans)
    text = f" Calls {lo}-{hi} are parallel calls the runs made alike, issued in another order"
    if len({p.passed / len(p.runs) for p in paths if p.runs}) > 1:
        return text + ": the order mattered (runs of different orders passed differently)."
    return text + ": every order passed alike, so the order alone does not explain a failure."


def _no_call_log(without: tuple[int, ...]) -> Divergence:
    message = (
        "No run left a call log (no replay report: the agent does not wrap its "
        "dispatcher with wrap_dispatcher, or ended before writing one), so where the "
        "runs part cannot be told."
    )
    return Divergence("no_call_log", None, (), None, without, message)


def _after_tool_layer(with_log: list[_Logged], without: tuple[int, ...]) -> Divergence:
    n = len(with_log[0].log)
    passed = sum(x.run.passed for x in with_log)
    message = (
        f"Every run made the same {plural(n, 'call')} (same keys, served by "
        f"the same recordings), yet {passed} of {len(with_log)} passed: the "
        "nondeterminism is after the tool layer (model sampling, dates in prompts, "
        "ordering, scoring)."
    )
    return Divergence("after_tool_layer", None, (), n, without, message)


def _first_difference(diffs: _Diffs, other: _Logged) -> int:
    """The 0-based call where ``other`` first differs from the reference: the diff's first
    divergence, else (same keys and outcomes, served by other recordings) the first call
    whose signature differs."""
    at = diffs.against(other.log).first_divergence
    if at is not None:
        return at
    sig_a, sig_b = diffs.reference.signature, other.signature
    return next(
        (i for i, (x, y) in enumerate(zip(sig_a, sig_b, strict=False)) if x != y),
        min(len(sig_a), len(sig_b)),
    )


def _paths(with_log: list[_Logged], diffs: _Diffs, first: int) -> tuple[DivergencePath, ...]:
    """The paths the runs took at call ``first``, most runs first."""
    by_call: dict[Any, list[_Logged]] = {}
    for logged in with_log:
        key = logged.signature[first] if first < len(logged.log) else None
        by_call.setdefault(key, []).append(logged)
    calls: list[dict[str, Any] | None] = []
    found: list[list[str]] = []
    for members in by_call.values():
        call, secrets = _call_summary(members[0].log, first)
        calls.append(call)
        found.append(secrets)
    _masked_across(calls, found)
    paths = []
    for members, call in zip(by_call.values(), calls, strict=True):
        log = members[0].log
        rows = diffs.against(log).rows
        paths.append(
            DivergencePath(
                call,
                tuple(sorted(x.run.run for x in members)),
                sum(x.run.passed for x in members),
                rows[first].status.value if first < len(rows) else "same",
            )
        )
    paths.sort(key=lambda p: (-len(p.runs), p.runs))
    return tuple(paths)
