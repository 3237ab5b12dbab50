"""The pass-rate gate (the debug loop, step 3): replay a cassette N times with the
network off; the pass rate must be 0 or 1.

Verdict: ``deterministic`` when every completed run passed or every one failed, ``flaky``
otherwise (``incomplete`` when no run completed, a gate cancelled at once). Where runs part
(:func:`divergence`), from their call logs and the alignment engine:

- every run made the same calls (same keys, served by the same recordings): the
  nondeterminism is *after the tool layer* (model sampling, dates in prompts, ordering,
  scoring);
- otherwise the first call at which runs differ (the earliest first divergence of the
  by-seq diff of each distinct call log against the most common one) and, at that call,
  how many runs took each path and how many of those passed.

Misses, exhausted calls and repeated calls are summed over the runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diff.result import diff_cassettes
from ..format.cassette import Cassette, load
from ..format.jobs import CancelToken, JobGenerator
from ..format.plural import plural
from .agent import AgentCommand
from .runs import DEFAULT_TIMEOUT, RunResult, RunsFolder, RunsResult, replay_runs

#: the gate's verdicts (``no_replay``: a completed run exited 0 but replayed nothing, a
#: mis-wired agent; never a pass)
VERDICTS = ("deterministic", "flaky", "incomplete", "no_replay")
#: what a divergence says: ``after_tool_layer`` (same calls everywhere), ``calls`` (the
#: first call where runs differ), ``no_call_log`` (flaky, but no run left a call log)
DIVERGENCE_KINDS = ("after_tool_layer", "calls", "no_call_log")


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
    """

    kind: str
    call: int | None
    paths: tuple[DivergencePath, ...]
    calls: int | None
    without_log: tuple[int, ...]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "call": self.call,
            "calls": self.calls,
            "paths": [p.to_json() for p in self.paths],
            "without_log": list(self.without_log),
            "message": self.message,
        }


def _signature(log: Cassette) -> tuple[tuple[Any, ...], ...]:
    return tuple(
        (log.tool(i), log.digest(i), e.extra.get("outcome"), e.extra.get("replayed_seq"))
        for i, e in enumerate(log)
    )


def _call_summary(log: Cassette, i: int) -> dict[str, Any] | None:
    if i >= len(log):
        return None
    entry = log[i]
    return {
        "tool": entry.tool,
        "args": entry.args,
        "seq": entry.extra.get("replayed_seq"),
        "outcome": entry.extra.get("outcome"),
    }


def _describe(call: dict[str, Any] | None, passed: int) -> str:
    if call is None:
        return f"made no more calls ({passed} passed)"
    args = json.dumps(call["args"], ensure_ascii=False, sort_keys=True, default=str)
    if len(args) > 60:
        args = args[:57] + "..."
    served = f"seq {call['seq']}" if call.get("seq") is not None else call.get("outcome")
    return f"called {call['tool']} {args} ({served}; {passed} passed)"


def divergence(logs: Sequence[tuple[RunResult, Cassette | None]], flaky: bool) -> Divergence | None:
    """Where the runs part (see the module docstring); ``None`` when every run with a call
    log made the same calls and the gate is not flaky, or no run left a log."""
    with_log = [(r, log) for r, log in logs if log is not None]
    without = tuple(r.run for r, log in logs if log is None)
    if not with_log:
        if not flaky:
            return None
        message = (
            "No run left a call log (no replay report: the agent does not wrap its "
            "dispatcher with wrap_dispatcher, or ended before writing one), so where the "
            "runs part cannot be told."
        )
        return Divergence("no_call_log", None, (), None, without, message)
    groups: dict[tuple[tuple[Any, ...], ...], list[tuple[RunResult, Cassette]]] = {}
    for run, log in with_log:
        groups.setdefault(_signature(log), []).append((run, log))
    if len(groups) == 1:
        if not flaky:
            return None
        n = len(with_log[0][1])
        passed = sum(r.passed for r, _ in with_log)
        message = (
            f"Every run made the same {plural(n, 'call')} (same keys, served by "
            f"the same recordings), yet {passed} of {len(with_log)} passed: the "
            "nondeterminism is after the tool layer (model sampling, dates in prompts, "
            "ordering, scoring)."
        )
        return Divergence("after_tool_layer", None, (), n, without, message)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), min(r.run for r, _ in g)))
    reference = ordered[0][0][1]
    first: int | None = None
    for group in ordered[1:]:
        result = diff_cassettes(reference, group[0][1], align="seq")
        at = result.first_divergence
        if at is None:  # same keys and outcomes, served by other recordings
            sig_a, sig_b = _signature(reference), _signature(group[0][1])
            at = next(
                (i for i, (x, y) in enumerate(zip(sig_a, sig_b, strict=False)) if x != y),
                min(len(sig_a), len(sig_b)),
            )
        first = at if first is None else min(first, at)
    assert first is not None
    by_call: dict[Any, list[tuple[RunResult, Cassette]]] = {}
    for run, log in with_log:
        key = _signature(log)[first] if first < len(log) else None
        by_call.setdefault(key, []).append((run, log))
    paths = []
    for members in by_call.values():
        log = members[0][1]
        rows = diff_cassettes(reference, log, align="seq").rows
        status = rows[first].status.value if first < len(rows) else "same"
        paths.append(
            DivergencePath(
                _call_summary(log, first),
                tuple(sorted(r.run for r, _ in members)),
                sum(r.passed for r, _ in members),
                status,
            )
        )
    paths.sort(key=lambda p: (-len(p.runs), p.runs))
    parts = [f"{plural(len(p.runs), 'run')} {_describe(p.call, p.passed)}" for p in paths]
    message = f"The runs part at call {first + 1}: " + "; ".join(parts) + "."
    return Divergence("calls", first + 1, tuple(paths), None, without, message)


@dataclass
class GateResult:
    """A gate: the runs, the verdict and where the runs part.

    ``runs`` counts the completed runs (not cancelled); ``pass_rate`` is ``passed / runs``
    (0.0 when none completed).
    """

    runs_result: RunsResult
    divergence: Divergence | None

    @property
    def results(self) -> list[RunResult]:
        return self.runs_result.results

    @property
    def runs(self) -> int:
        return len(self.runs_result.completed)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.runs_result.completed)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def verdict(self) -> str:
        if not self.runs:
            return "incomplete"
        if any(r.no_replay for r in self.runs_result.completed):
            return "no_replay"
        return "deterministic" if self.passed in (0, self.runs) else "flaky"

    @property
    def cancelled(self) -> bool:
        return self.runs_result.cancelled

    def total(self, what: str) -> int:
        """``misses``, ``exhausted`` or ``repeated_calls`` summed over the runs."""
        return sum(int(getattr(r, what)) for r in self.results)

    def to_json(self) -> dict[str, Any]:
        """The ``gate --json`` document (docs/json.md, "`gate --json`"), with
        the per-run results::

        {"runs", "passed", "pass_rate", "verdict", "isolation", "divergence",
         "cassette", "agent", "requested", "cancelled", "isolation_detail",
         "misses", "exhausted", "repeated_calls", "runs_dir", "results": [RunResult]}
        """
        rr = self.runs_result
        return {
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": round(self.pass_rate, 4),
            "verdict": self.verdict,
            "isolation": rr.isolation,
            "divergence": self.divergence.to_json() if self.divergence else None,
            "cassette": str(rr.cassette),
            "agent": rr.agent,
            "requested": rr.requested,
            "cancelled": rr.cancelled,
            "isolation_detail": rr.isolation_detail,
            "misses": self.total("misses"),
            "exhausted": self.total("exhausted"),
            "repeated_calls": self.total("repeated_calls"),
            "runs_dir": str(rr.runs_dir) if rr.runs_dir is not None else None,
            "results": [r.to_json() for r in self.results],
        }


def analyse(runs_result: RunsResult) -> GateResult:
    """The verdict and divergence of finished runs (their call logs read back from the
    runs folder)."""
    logs: list[tuple[RunResult, Cassette | None]] = []
    for run in runs_result.completed:
        log = load(run.call_log) if run.call_log is not None else None
        logs.append((run, log))
    completed = runs_result.completed
    passed = sum(r.passed for r in completed)
    flaky = bool(completed) and passed not in (0, len(completed))
    return GateResult(runs_result, divergence(logs, flaky))


def gate_job(
    cassette: str | Path,
    agent: AgentCommand,
    *,
    runs: int = 20,
    jobs: int | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    isolation: str | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    token: CancelToken | None = None,
    keep: bool | None = None,
) -> JobGenerator[GateResult]:
    """Replay ``cassette`` ``runs`` times (see ``loop.replay_runs`` for the arguments,
    errors and where the run files go) and return the :class:`GateResult`, analysed from
    the call logs before a temporary runs folder is removed. Cancelled: the result of the
    runs that completed, ``cancelled`` set."""
    folder = RunsFolder(runs_dir, keep)
    try:
        result, _ = yield from replay_runs(
            cassette,
            agent,
            runs=runs,
            jobs=jobs,
            timeout=timeout,
            isolation=isolation,
            runs_dir=folder,
            config=config,
            token=token,
            stage="gate",
        )
        gate = analyse(result)
        folder.forget(result)
        return gate
    finally:
        folder.remove()


@dataclass
class ReplayResult:
    """One offline replay: the run, and the cassette it replayed."""

    runs_result: RunsResult
    cassette: Cassette

    @property
    def run(self) -> RunResult:
        return self.runs_result.results[0]

    @property
    def no_replay(self) -> bool:
        """The agent exited 0 but replayed nothing (``RunResult.no_replay``)."""
        return bool(self.runs_result.results) and self.run.no_replay

    @property
    def clean(self) -> bool:
        """The agent passed with no miss and no exhausted call."""
        run = self.run
        return run.passed and run.misses == 0 and run.exhausted == 0

    def to_json(self) -> dict[str, Any]:
        """``{"cassette", "agent", "isolation", "passed", "clean", "cancelled", "run":
        RunResult, "replay_report": the agent's report or null}``."""
        rr = self.runs_result
        return {
            "cassette": str(rr.cassette),
            "agent": rr.agent,
            "isolation": self.run.isolation,
            "passed": self.run.passed,
            "clean": self.clean,
            "cancelled": rr.cancelled,
            "run": self.run.to_json(),
            "replay_report": self.run.report,
        }


def replay_job(
    cassette: str | Path,
    agent: AgentCommand,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    isolation: str | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    token: CancelToken | None = None,
    keep: bool | None = None,
) -> JobGenerator[ReplayResult]:
    """One offline replay of ``cassette`` with ``agent`` (see ``loop.replay_runs``; a
    temporary runs folder is removed when it ends)."""
    result, loaded = yield from replay_runs(
        cassette,
        agent,
        runs=1,
        jobs=1,
        timeout=timeout,
        isolation=isolation,
        runs_dir=runs_dir,
        config=config,
        token=token,
        stage="replay",
        keep=keep,
    )
    return ReplayResult(result, loaded)
