"""The pass-rate gate (the debug loop, step 3): replay a cassette N times with the
network off; the pass rate must be 0 or 1.

Verdict: ``deterministic`` when every completed run passed or every one failed, ``flaky``
otherwise (``is_flaky``: the one rule, which the pytest plugin's gate follows too;
``incomplete`` when no run completed, a gate cancelled at once; ``no_replay`` when a
completed run replayed nothing). Where runs part: ``divergence.py``, from the call logs the
runs wrote (kept in memory as they are written, never read back). Misses, exhausted calls
and repeated calls are summed over the runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..format.cassette import Cassette
from ..format.jobs import CancelToken, JobGenerator
from ._runs import replay_runs
from ._runs_folder import RunsFolder
from .agent import AgentCommand
from .divergence import Divergence, divergence
from .options import LoopOptions
from .results import RunResult, RunsResult

#: the gate's verdicts (``no_replay``: a completed run exited 0 but replayed nothing, a
#: mis-wired agent; never a pass)
VERDICTS = ("deterministic", "flaky", "incomplete", "no_replay")


def is_flaky(passed: int, runs: int) -> bool:
    """Whether ``passed`` of ``runs`` completed runs is a flaky pass rate: neither 0 nor 1."""
    return 0 < passed < runs


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
        return self.runs_result.passed

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def flaky(self) -> bool:
        """The pass rate is neither 0 nor 1 (``is_flaky``); the verdict may still be
        ``no_replay``."""
        return is_flaky(self.passed, self.runs)

    @property
    def verdict(self) -> str:
        """One of ``VERDICTS`` (the module doc)."""
        if not self.runs:
            return "incomplete"
        if any(r.no_replay for r in self.runs_result.completed):
            return "no_replay"
        return "flaky" if self.flaky else "deterministic"

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
         "misses", "exhausted", "repeated_calls", "runs_dir", "results": [RunResult],
         "not_covered": [what the isolation does not cut off]}
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
            "not_covered": list(rr.not_covered),
        }


def analyse(runs_result: RunsResult, logs: dict[int, Cassette]) -> GateResult:
    """The verdict and divergence of finished runs, from ``logs``: each run's call log by
    run number (a run without one left none)."""
    done = runs_result.completed
    flaky = is_flaky(runs_result.passed, len(done))
    return GateResult(runs_result, divergence([(r, logs.get(r.run)) for r in done], flaky))


def gate_job(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions | None = None,
    *,
    runs: int = 20,
    token: CancelToken | None = None,
) -> JobGenerator[GateResult]:
    """Replay ``cassette`` ``runs`` times (see ``_runs.replay_runs`` for the options, errors
    and where the run files go) and return the :class:`GateResult`, analysed from the call
    logs the runs wrote. Cancelled: the result of the runs that completed, ``cancelled``
    set."""
    options = options or LoopOptions()
    folder = RunsFolder(options.runs_dir, options.keep)
    try:
        result, _, logs = yield from replay_runs(
            cassette, agent, options, runs=runs, token=token, stage="gate", folder=folder
        )
        gate = analyse(result, logs)
        folder.forget(result, result.results)
        return gate
    finally:
        folder.remove()
