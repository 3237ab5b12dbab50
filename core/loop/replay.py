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
    """One offline replay: the run, and the cassette it replayed.

    Attributes:
        runs_result: the job's one run.
        cassette: the cassette replayed.
        strict: recorded calls left unused make the replay unclean (``replay --strict``);
            they are named in the result either way.
    """

    runs_result: RunsResult
    cassette: Cassette
    strict: bool = False

    @property
    def run(self) -> RunResult:
        return self.runs_result.results[0]

    @property
    def no_replay(self) -> bool:
        """The agent exited 0 but replayed nothing (``RunResult.no_replay``)."""
        return bool(self.runs_result.results) and self.run.no_replay

    @property
    def clean(self) -> bool:
        """The agent passed with no miss and no exhausted call; no new call answered
        live unless the replay asked for them (``--new-calls``); with ``strict``, no
        recorded call left unused."""
        run = self.run
        if not run.passed or run.misses or run.exhausted:
            return False
        if run.new_calls and not run.new_calls_allowed:
            return False
        return not (self.strict and run.unused_seqs)

    @property
    def new_calls_policy(self) -> str:
        """The new-calls policy the replay ran under (``"error"`` by default)."""
        options = self.runs_result.options
        return getattr(options, "new_calls", "error") if options is not None else "error"

    @property
    def new_cassette(self) -> Path | None:
        """The file the ``record`` policy wrote the new calls to, when it is there."""
        options = self.runs_result.options
        path = getattr(options, "new_cassette", None) if options is not None else None
        if path is None or self.new_calls_policy != "record" or not Path(path).exists():
            return None
        return Path(path)

    @property
    def fixtures(self) -> list[str]:
        """The pinned fixtures the replay overlaid on the cassette."""
        options = self.runs_result.options
        return [str(f) for f in getattr(options, "fixtures", ())] if options is not None else []

    def to_json(self) -> dict[str, Any]:
        """``{"cassette", "agent", "isolation", "passed", "clean", "strict", "cancelled",
        "new_calls": the policy, "new_cassette": the file the new calls were written to
        or null, "fixtures": [path], "run": RunResult, "replay_report": the agent's report
        (``ReplayReport.to_json``) or null, "not_covered": [what the isolation does not
        cut off]}``."""
        rr = self.runs_result
        report = self.run.report
        new_cassette = self.new_cassette
        return {
            "cassette": str(rr.cassette),
            "agent": rr.agent,
            "isolation": self.run.isolation,
            "passed": self.run.passed,
            "clean": self.clean,
            "strict": self.strict,
            "cancelled": rr.cancelled,
            "new_calls": self.new_calls_policy,
            "new_cassette": str(new_cassette) if new_cassette is not None else None,
            "fixtures": self.fixtures,
            "run": self.run.to_json(self.strict),
            "replay_report": report.to_json() if report is not None else None,
            "not_covered": list(rr.not_covered),
        }


def replay_job(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions | None = None,
    *,
    token: CancelToken | None = None,
    strict: bool = False,
) -> JobGenerator[ReplayResult]:
    """One offline replay of ``cassette`` with ``agent`` (see ``_runs.replay_runs``; a
    temporary runs folder is removed when it ends; ``options.jobs`` does not apply).
    ``strict``: recorded calls left unused make the replay unclean. With
    ``options.new_calls`` other than ``"error"`` the run has the network: its new calls
    go live (``replay.new_calls``)."""
    result, loaded, _ = yield from replay_runs(
        cassette, agent, options or LoopOptions(), runs=1, token=token, stage="replay"
    )
    return ReplayResult(result, loaded, strict)
