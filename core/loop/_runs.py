"""The runs of a replay: ``replay_runs`` replays a cassette N times with the agent, network
off, and reads back what each run left; the replay and gate jobs are built on it.

The jobs (``replay.py``, ``gate.py``, ``record.py``) are core jobs (``jobs.py``): generators
that yield ``Progress`` (stage ``"replay"``, ``"gate"`` or ``"record"``, unit ``"runs"``,
message the pass/fail tally ``"3 ✓ 1 ✗"``, ``item`` the ``RunResult`` of the run that just
ended, so a screen can list it at once), honour a ``CancelToken`` (cancelling kills every
agent's process group at once and the job returns the partial result,
``cancelled=True``) and return their result. The CLI drives them with a progress bar, the
app with a worker. How they run the agent is one ``LoopOptions`` (``options.py``); where
the run files go, ``_runs_folder.py``; the agent's environment, ``_agent_run.py``. Replays
run with the network off (``isolation.py``); a recording runs live.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..format.cassette import Cassette
from ..format.errors import CassetteError
from ..format.jobs import CancelToken, JobGenerator, Progress
from ..importers.sources import parse_path_spec
from ..keys.config import load_rules
from ..replay.new_calls import new_cassette_path
from ._agent_run import (
    agent_env,
    agent_spec,
    check_executable,
    ended_run,
    read_guard_log,
    read_report,
    read_uncovered,
    report_path,
    tally,
)
from ._isolation import Isolation, choose, new_calls_live
from ._runner import ProcessOutcome, ProcessSpec, run_processes
from ._runs_folder import RunsFolder
from .agent import AgentCommand, AgentNotStarted
from .call_log import write_call_log
from .options import LoopOptions
from .results import NO_REPLAY, NO_REPLAY_WHY, RunResult, RunsResult
from .served import ServedCassette, open_served


def replay_runs(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions,
    *,
    runs: int = 1,
    token: CancelToken | None = None,
    stage: str = "gate",
    folder: RunsFolder | None = None,
) -> JobGenerator[tuple[RunsResult, Cassette, dict[int, Cassette]]]:
    """Replay ``cassette`` ``runs`` times with ``agent``, ``options.jobs`` at once (default:
    the CPUs), network off. Returns the runs, the loaded cassette, and each run's call log
    as written (by run number: the runs that left a report).

    Where the run files go and whether they stay: ``options.runs_dir`` and ``options.keep``
    (``_runs_folder.py``); a ``folder`` given is the caller's to remove (a job that reads
    the files afterwards).

    ``cassette`` is any path spec (``core.sources``): a run imported from another format
    (``FILE#task=31,trial=2``, a VCR cassette) is written as a cassette into the runs
    folder for the agent (``served.py``).

    Raises (before any run starts):
        CassetteFormatError: the cassette cannot be loaded, or the config is bad.
        IsolationError: the requested isolation cannot be had.
        FileExistsError: ``runs_dir`` holds earlier runs.
        ValueError: ``runs`` < 1.
        AgentNotStarted: the agent command cannot be started (every run failed to start).
    """
    owned = folder is None
    runs_folder = RunsFolder(options.runs_dir, options.keep) if folder is None else folder
    try:
        done = yield from _replay_runs(cassette, agent, options, runs_folder, runs, token, stage)
        if owned:
            runs_folder.forget(done[0], done[0].results)
        return done
    finally:
        if owned:
            runs_folder.remove()


def _replay_runs(
    cassette: str | Path,
    agent: AgentCommand,
    options: LoopOptions,
    runs_folder: RunsFolder,
    runs: int,
    token: CancelToken | None,
    stage: str,
) -> JobGenerator[tuple[RunsResult, Cassette, dict[int, Cassette]]]:
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    token = token or CancelToken()
    served = open_served(cassette, load_rules(options.config))  # an imported run too
    if options.new_calls == "record" and options.new_cassette is None:
        # beside the user's file, never in a runs folder that goes when the job ends
        spec_file = parse_path_spec(served.source).path
        options = replace(options, new_cassette=new_cassette_path(spec_file))
    # new calls answered live need the network: no isolation, said in the result
    chosen: Isolation = (
        new_calls_live() if options.new_calls != "error" else choose(options.isolation)
    )
    check_executable(agent.argv[0], agent.cwd, dict(os.environ))
    folder = runs_folder.open(f"cassette-{stage}-{served.stem}-")
    source = served.place(folder)  # an imported run: written as a cassette for the agent
    specs = (_spec(agent, n, folder, source, chosen, options) for n in range(1, runs + 1))
    result = RunsResult(
        served.source, agent.template, runs, [], chosen.name, chosen.detail, folder,
        cancelled=False, source_format=served.fmt, not_covered=chosen.not_covered,
    )  # fmt: skip
    result.jobs = min(options.workers, runs)
    result.options = options
    logs: dict[int, Cassette] = {}
    yield Progress(stage, 0, runs, "runs", "")
    for outcome in run_processes(specs, options.workers, token):
        run = _run_result(outcome, folder, chosen, served, logs)
        run.new_calls_allowed = options.new_calls != "error"
        result.results.append(run)
        yield Progress(
            stage, len(result.results), runs, "runs", tally(result.results, replays=True), run
        )
    _close(result, agent, runs, chosen, token)
    return result, served.cassette, logs


def _spec(
    agent: AgentCommand,
    n: int,
    folder: Path,
    source: Path,
    isolation: Isolation,
    options: LoopOptions,
) -> ProcessSpec:
    """Run ``n``'s process: the agent replaying ``source``, isolated."""
    env = agent_env("replay", source, report_path(folder, n), options.config)
    env.update(options.policy_env())
    env = isolation.env(env, folder / f"run-{n:02d}.guard.log")
    return agent_spec(agent, n, folder, source, env, options.timeout, isolation.argv)


def _close(
    result: RunsResult, agent: AgentCommand, runs: int, isolation: Isolation, token: CancelToken
) -> None:
    """The runs in order, a run never started (cancelled before it) listed as
    ``cancelled``; ``result.cancelled`` set from ``token``.

    Raises:
        AgentNotStarted: no run could be started.
    """
    started = {r.run for r in result.results}
    result.results.extend(
        RunResult(n, "cancelled", None, 0.0, isolation.name, error="cancelled before it started")
        for n in range(1, runs + 1)
        if n not in started
    )
    result.results.sort(key=lambda r: r.run)
    if result.results and all(r.status == "not_started" for r in result.results):
        raise AgentNotStarted(f"agent command {agent.template!r}: {result.results[0].error}")
    result.cancelled = token.cancelled


def _run_result(
    outcome: ProcessOutcome,
    folder: Path,
    isolation: Isolation,
    served: ServedCassette,
    logs: dict[int, Cassette],
) -> RunResult:
    """One ended run: its status, what the guard refused, its report and its call log
    (written to the runs folder, and kept in ``logs``)."""
    run = ended_run(outcome, isolation.name)
    if isolation.name == "guard":
        log = folder / f"run-{outcome.index:02d}.guard.log"
        loaded, run.blocked = read_guard_log(log)
        run.uncovered = read_uncovered(log)
        if not loaded and outcome.status != "not_started":
            run.isolation = "guard (not loaded)"
        elif run.uncovered:
            run.isolation = "guard (partial)"
    if outcome.status == "not_started":
        return run
    cassette = served.cassette
    report, why = read_report(report_path(folder, outcome.index))
    if run.status == "passed" and (report is None or (not report.calls and len(cassette) > 0)):
        run.status = NO_REPLAY
        why = f"{NO_REPLAY_WHY} (it wrote no replay report)" if report is None else NO_REPLAY_WHY
    if report is None:
        run.error = "stopped before it wrote a replay report" if run.status == "cancelled" else why
        return run
    run.report = report
    run.other_cassette = _other_cassette(report.cassette, served.path, outcome)
    if run.no_replay:
        run.error = why
    try:
        target = folder / f"run-{outcome.index:02d}.jsonl"
        run.call_log, logs[run.run] = write_call_log(report, cassette, target)
    except OSError as exc:  # disk full, a write error: the runs folder, not the agent
        run.error = f"call log not written: {exc}"
        run.write_error = f"{target}: {exc.strerror or exc}"
    except (CassetteError, ValueError, TypeError) as exc:
        run.error = f"call log not written: {exc}"
    return run


def _other_cassette(said: str | None, served: Path | None, outcome: ProcessOutcome) -> str | None:
    """The cassette a run's report names when it is not the file served (an agent that set
    ``CASSETTE_PATH`` itself replayed something else: not a replay of this cassette), else
    ``None``; a report that names none, or a path that cannot be resolved, is not held
    against the run."""
    if said is None or served is None:
        return None
    path = Path(said)
    cwd = outcome.spec.cwd if outcome.spec is not None else None
    if not path.is_absolute() and cwd is not None:
        path = Path(cwd) / path
    try:
        same = path.resolve() == Path(served).resolve()
    except (OSError, RuntimeError):
        return None
    return None if same else said
