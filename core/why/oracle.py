"""The gate as a test oracle: N offline replays of a cassette give one of ddmin's three
outcomes. A flaky gate, or runs that left the recording (a miss: the agent asked for
something neither run was asked), is ``UNRESOLVED``, never counted as a pass or a fail.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..loop.gate import GateResult
from ..loop.options import LoopOptions
from ..replay.report import ReplayReport
from .ddmin import FAIL, PASS, UNRESOLVED


def candidate_options(options: LoopOptions, name: str) -> LoopOptions:
    """``options`` for the gate of one candidate called ``name``: with ``--runs-dir DIR``
    its runs go to ``DIR/name``, since a runs folder must be new or empty and every
    candidate's gate would otherwise find the previous one's files there."""
    if options.runs_dir is None:
        return options
    return replace(options, runs_dir=Path(options.runs_dir) / name)


def gate_outcome(gate: GateResult) -> tuple[str, str]:
    """``(outcome, why)`` of a gate: ``PASS`` when every run replayed cleanly and passed,
    ``FAIL`` when every run replayed cleanly and failed, else ``UNRESOLVED`` with why:
    ``"flaky: 3/5 passed"``, ``"left the recording: a miss of read_file at call 4 (after
    seq 3) in run 2"`` (the step where the agent left it), or
    the verdict's own reason (a timeout, a crash from outside, no tool call)."""
    verdict = gate.verdict
    if verdict == "deterministic":
        return (PASS, "") if gate.passed == gate.clean else (FAIL, "")
    if verdict == "flaky":
        return UNRESOLVED, f"flaky: {gate.passed}/{gate.clean} passed"
    for run, kind, why in gate.replays():
        if kind == "clean":
            continue
        report = run.report
        if report is not None and report.misses:
            return UNRESOLVED, f"left the recording: {_left_at(report)} in run {run.run}"
        died = _last_line(run.stderr_tail) if report is None else ""
        # an agent that died before any call (an import error): what it died of
        return UNRESOLVED, f"{verdict}: run {run.run}: {why}" + (f" ({died})" if died else "")
    return UNRESOLVED, verdict


#: a gate's verdicts that measured nothing: the agent, not the cassette, is at fault
MEASURED_NOTHING = frozenset({"no_replay", "no_tool_call", "incomplete", "infrastructure"})


def _last_line(text: str) -> str:
    """The last line of a run's stderr that says something (a traceback ends with the
    exception), cut to 200 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _left_at(report: ReplayReport) -> str:
    """Where a replay left the recording: ``a miss of read_file at call 4 (after seq 3)``,
    the first miss in call order and the last recorded entry served before it (the call
    numbers and seqs of the report's ``calls``; without them, the tool alone)."""
    miss = report.misses[0]
    calls = report.calls or ()
    first = next((c for c in calls if c.outcome == "miss"), None)
    if first is None:
        return f"a miss of {miss.tool}"
    served = [c.seq for c in calls if c.n < first.n and c.seq is not None]
    after = f" (after seq {served[-1]})" if served else " (before any recorded call)"
    return f"a miss of {first.tool} at call {first.n}{after}"
