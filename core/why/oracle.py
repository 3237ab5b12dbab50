"""The gate as a test oracle: N offline replays of a cassette give one of ddmin's three
outcomes. A flaky gate, or runs that left the recording (a miss: the agent asked for
something neither run was asked), is ``UNRESOLVED``, never counted as a pass or a fail.
"""

from __future__ import annotations

from ..loop.gate import GateResult
from .ddmin import FAIL, PASS, UNRESOLVED


def gate_outcome(gate: GateResult) -> tuple[str, str]:
    """``(outcome, why)`` of a gate: ``PASS`` when every run replayed cleanly and passed,
    ``FAIL`` when every run replayed cleanly and failed, else ``UNRESOLVED`` with why:
    ``"flaky: 3/5 passed"``, ``"left the recording: a miss of read_file in run 2"``, or
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
            return UNRESOLVED, (
                f"left the recording: a miss of {report.misses[0].tool} in run {run.run}"
            )
        return UNRESOLVED, f"{verdict}: run {run.run}: {why}"
    return UNRESOLVED, verdict
