"""The replay job: one offline replay of a cassette with the agent (see ``_runs.py`` for what
a job is)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..format.cassette import Cassette
from ..format.jobs import CancelToken, JobGenerator
from ._runs import replay_runs
from .agent import AgentCommand
from .options import LoopOptions
from .results import RunResult, RunsResult


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
        RunResult, "replay_report": the agent's report (``ReplayReport.to_json``) or
        null, "not_covered": [what the isolation does not cut off]}``."""
        rr = self.runs_result
        report = self.run.report
        return {
            "cassette": str(rr.cassette),
            "agent": rr.agent,
            "isolation": self.run.isolation,
            "passed": self.run.passed,
            "clean": self.clean,
            "cancelled": rr.cancelled,
            "run": self.run.to_json(),
            "replay_report": report.to_json() if report is not None else None,
            "not_covered": list(rr.not_covered),
        }


def replay_job(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions | None = None,
    *,
    token: CancelToken | None = None,
) -> JobGenerator[ReplayResult]:
    """One offline replay of ``cassette`` with ``agent`` (see ``_runs.replay_runs``; a
    temporary runs folder is removed when it ends; ``options.jobs`` does not apply)."""
    result, loaded, _ = yield from replay_runs(
        cassette, agent, options or LoopOptions(), runs=1, token=token, stage="replay"
    )
    return ReplayResult(result, loaded)
