"""The pass-rate gate (the debug loop, step 3): replay a cassette N times with the
network off; the pass rate must be 0 or 1.

Each run's replay is ``clean`` or not (``RunResult.replay``: a miss, a call past the last
recording, unused recordings under ``strict``, no tool call at all, or infrastructure: a
timeout, a signal from outside, a run not started, the runs folder not written). Only
clean replays are the agent's result. The verdict (``VERDICTS``, the first that holds):

- ``incomplete``: no run ended (a gate cancelled at once);
- ``no_replay``: a run exited 0 but replayed nothing (a mis-wired agent, never a pass);
- ``no_tool_call``: no run reached a tool call (an agent that crashes on import): the gate
  measured nothing;
- ``flaky``: clean replays disagree (``is_flaky``: the one rule, which the pytest
  plugin's gate follows too);
- ``unclean_replay``: a run's replay was not clean (a miss, an exhausted key, unused
  recordings under ``strict``, a run without a tool call);
- ``infrastructure``: a run timed out, was killed from outside, did not start, or its
  files could not be written;
- ``deterministic``: every run replayed cleanly, and all passed or all failed.

``VERDICT_EXIT`` gives each its exit status. Where runs part: ``divergence.py``, from the
call logs the runs wrote (kept in memory as they are written, never read back). Misses,
exhausted calls and repeated calls are summed over the runs.
"""

from __future__ import annotations

from collections.abc import Sequence
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

#: the gate's verdicts (the module doc)
VERDICTS = (
    "deterministic", "flaky", "unclean_replay", "infrastructure", "no_tool_call", "no_replay",
    "incomplete",
)  # fmt: skip
#: the exit status of each verdict: 0 deterministic, 1 flaky, 2 any verdict that is not a
#: measurement of the agent (a cancelled gate exits 130 whatever its verdict)
VERDICT_EXIT = {
    "deterministic": 0, "flaky": 1, "unclean_replay": 2, "infrastructure": 2,
    "no_tool_call": 2, "no_replay": 2, "incomplete": 2,
}  # fmt: skip


def is_flaky(passed: int, runs: int) -> bool:
    """Whether ``passed`` of ``runs`` completed runs is a flaky pass rate: neither 0 nor 1."""
    return 0 < passed < runs


def verdict_of(replays: Sequence[tuple[str, bool, bool, bool]]) -> str:
    """The verdict (``VERDICTS``, the module doc) of the runs that were due and not
    cancelled, each ``(kind, passed, called, no_replay)``: its ``REPLAY_KINDS`` kind,
    whether the agent passed, whether it made a tool call, whether it exited 0 having
    replayed nothing. The one rule of ``GateResult`` and the pytest plugin's gate."""
    if not replays:
        return "incomplete"
    if any(no_replay for _, _, _, no_replay in replays):
        return "no_replay"
    clean = [passed for kind, passed, _, _ in replays if kind == "clean"]
    if not clean and not any(called for _, _, called, _ in replays):
        return "no_tool_call"
    if is_flaky(sum(clean), len(clean)):
        return "flaky"
    kinds = {kind for kind, _, _, _ in replays}
    if kinds & {"unclean", "no_tool_call"}:
        return "unclean_replay"
    if "infrastructure" in kinds:
        return "infrastructure"
    return "deterministic"


@dataclass
class GateResult:
    """A gate: the runs, the verdict and where the runs part.

    ``runs`` counts the completed runs (not cancelled, not unstarted); ``clean`` the runs
    whose replay was clean (``RunResult.replay``); ``passed`` the clean ones that passed;
    ``pass_rate`` is ``passed / clean`` (0.0 when none was clean). ``strict``: unused
    recordings make a replay unclean.
    """

    runs_result: RunsResult
    divergence: Divergence | None
    strict: bool = False

    @property
    def results(self) -> list[RunResult]:
        return self.runs_result.results

    @property
    def runs(self) -> int:
        return len(self.runs_result.completed)

    def replays(self) -> list[tuple[RunResult, str, str]]:
        """Every run that was due and not cancelled, with its ``replay(strict)``:
        ``[(run, kind, why)]`` in run order."""
        out = []
        for r in self.results:
            kind, why = r.replay(self.strict)
            if kind != "not_run":
                out.append((r, kind, why))
        return out

    def runs_of(self, *kinds: str) -> list[RunResult]:
        """The runs whose replay is one of ``kinds`` (``REPLAY_KINDS``)."""
        return [r for r, kind, _ in self.replays() if kind in kinds]

    @property
    def clean(self) -> int:
        return len(self.runs_of("clean"))

    @property
    def passed(self) -> int:
        """How many clean replays passed."""
        return sum(r.passed for r in self.runs_of("clean"))

    @property
    def pass_rate(self) -> float:
        return self.passed / self.clean if self.clean else 0.0

    @property
    def flaky(self) -> bool:
        """The clean replays' pass rate is neither 0 nor 1 (``is_flaky``); the verdict may
        still be ``no_replay``."""
        return is_flaky(self.passed, self.clean)

    @property
    def verdict(self) -> str:
        """One of ``VERDICTS`` (the module doc)."""
        if not self.runs:
            return "incomplete"
        return verdict_of(
            [(kind, r.passed, bool(r.calls), r.no_replay) for r, kind, _ in self.replays()]
        )

    @property
    def exit_status(self) -> int:
        """The verdict's exit status (``VERDICT_EXIT``); a cancelled gate is the caller's."""
        return VERDICT_EXIT[self.verdict]

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
         "clean", "strict", "exit_status", "not_clean": [{"run", "replay", "why"}],
         "not_covered": [what the isolation does not cut off]}

        ``passed`` and ``pass_rate`` count clean replays only; ``not_clean`` names every
        run whose replay was not clean and why.
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
            "results": [r.to_json(self.strict) for r in self.results],
            "clean": self.clean,
            "strict": self.strict,
            "exit_status": self.exit_status,
            "not_clean": [
                {"run": r.run, "replay": kind, "why": why}
                for r, kind, why in self.replays()
                if kind != "clean"
            ],
            "not_covered": list(rr.not_covered),
        }


def analyse(runs_result: RunsResult, logs: dict[int, Cassette], strict: bool = False) -> GateResult:
    """The verdict and divergence of finished runs, from ``logs``: each run's call log by
    run number (a run without one left none). ``strict``: unused recordings make a replay
    unclean. Where the runs part is looked for over every completed run (a clean or not)."""
    done = runs_result.completed
    flaky = is_flaky(runs_result.passed, len(done))
    found = divergence([(r, logs.get(r.run)) for r in done], flaky)
    return GateResult(runs_result, found, strict)


def gate_job(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions | None = None,
    *,
    runs: int = 20,
    token: CancelToken | None = None,
    strict: bool = False,
) -> JobGenerator[GateResult]:
    """Replay ``cassette`` ``runs`` times (see ``_runs.replay_runs`` for the options, errors
    and where the run files go) and return the :class:`GateResult`, analysed from the call
    logs the runs wrote (``strict``: a recording left unused makes a replay unclean).
    Cancelled: the result of the runs that completed, ``cancelled`` set."""
    options = options or LoopOptions()
    folder = RunsFolder(options.runs_dir, options.keep)
    try:
        result, _, logs = yield from replay_runs(
            cassette, agent, options, runs=runs, token=token, stage="gate", folder=folder
        )
        gate = analyse(result, logs, strict)
        folder.forget(result, result.results)
        return gate
    finally:
        folder.remove()
