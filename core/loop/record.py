"""The record job: run the agent once, live, recording its calls into a new cassette (the
debug loop's re-record step; see ``_runs.py`` for what a job is)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..format.atomic import check_new_file
from ..format.cassette import Cassette, load
from ..format.errors import CassetteFormatError
from ..format.jobs import CancelToken, JobGenerator, Progress
from ..keys.config import load_rules
from ._agent_run import (
    agent_env,
    agent_spec,
    check_executable,
    ended_run,
    read_report,
    report_path,
    tally,
)
from ._runner import run_processes
from ._runs_folder import RunsFolder
from .agent import AgentCommand, AgentNotStarted
from .options import LoopOptions
from .results import RunResult

#: a recording's isolation: none, the agent runs live
LIVE = "none (live)"


@dataclass
class RecordResult:
    """A live recording.

    Attributes:
        run: the agent run (isolation ``"none (live)"``; ``report`` the recorder's).
        path: the new cassette.
        cassette: it, loaded, or ``None`` when the agent wrote none.
        cancelled: the job was cancelled (the recording holds the calls made before).
    """

    run: RunResult
    path: Path
    cassette: Cassette | None
    cancelled: bool = False


def record_job(
    agent: AgentCommand,
    output: str | Path,
    options: LoopOptions | None = None,
    *,
    token: CancelToken | None = None,
) -> JobGenerator[RecordResult]:
    """Run ``agent`` once, live, recording its calls into ``output`` (a new file, always
    kept when it holds an entry; a run that recorded nothing leaves no file, so the same
    command can run again). From ``options``: the timeout, the config, and where the
    run's output and report go and whether they stay (``runs_dir``, ``keep``:
    ``_runs_folder.py``); its isolation and jobs do not apply.

    Raises:
        FileExistsError: ``output`` exists (checked before the agent starts; the agent's
            recorder refuses too).
        FolderNotWritable: (a ``CassetteError`` and ``OSError``) no new file can be
            created in ``output``'s folder (read-only, no permission), checked before the
            agent starts.
        AgentNotStarted: the agent command cannot be started.
        CassetteFormatError: the config is bad.
    """
    options = options or LoopOptions()
    folder = RunsFolder(options.runs_dir, options.keep)
    try:
        result = yield from _record(agent, output, options, folder, token or CancelToken())
        folder.forget(None, [result.run])
        return result
    finally:
        folder.remove()


def _record(
    agent: AgentCommand,
    output: str | Path,
    options: LoopOptions,
    runs_folder: RunsFolder,
    token: CancelToken,
) -> JobGenerator[RecordResult]:
    target = _check_target(output)
    load_rules(options.config)  # a bad config is bad input before anything runs
    check_executable(agent.argv[0], agent.cwd, dict(os.environ))
    folder = runs_folder.open(f"cassette-record-{target.stem}-")
    report = report_path(folder, 1)
    env = agent_env("record", target, report, options.config)
    spec = agent_spec(agent, 1, folder, target, env, options.timeout)
    yield Progress("record", 0, 1, "runs", "")
    # one spec: the generator yields its one outcome when the agent ends
    (outcome,) = run_processes([spec], 1, token)
    if outcome.status == "not_started":
        raise AgentNotStarted(f"agent command {agent.template!r}: {outcome.error}")
    run = ended_run(outcome, LIVE)
    run.report, _ = read_report(report)
    cassette = _recorded(run, output, target, options)
    yield Progress("record", 1, 1, "runs", tally([run]))
    return RecordResult(run, target, cassette, cancelled=token.cancelled)


def _check_target(output: str | Path) -> Path:
    """``output``, absolute, once it is known a new cassette can be written there.

    Raises:
        FileExistsError: it exists.
        FolderNotWritable: its folder takes no new file.
    """
    target = Path(output).resolve()
    if target.exists():
        raise FileExistsError(f"{output}: exists; a recording never overwrites a cassette")
    check_new_file(target)  # a read-only folder is refused before the agent runs live
    return target


def _recorded(
    run: RunResult, output: str | Path, target: Path, options: LoopOptions
) -> Cassette | None:
    """The cassette the run recorded, loaded; ``None`` (and ``run.error`` says why) when it
    recorded nothing or the file cannot be read."""
    if _remove_empty(target):
        run.error = f"{output}: the agent recorded nothing (the empty file it created was removed)"
        return None
    if not target.exists():
        run.error = f"{output}: the agent recorded nothing (no file written)"
        return None
    try:
        return load(target, lenient=True, rules=load_rules(options.config))
    except CassetteFormatError as exc:
        run.error = str(exc)
        return None


def _remove_empty(target: Path) -> bool:
    """Remove ``target`` when it is an empty regular file (an agent that created its
    cassette and was killed, or crashed, before its first entry); ``True`` when removed.
    Only called for a path that did not exist when the recording started: the file is
    the run's own, never a user's."""
    try:
        st = os.lstat(target)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != 0:
        return False
    try:
        target.unlink()
    except OSError:
        return False
    return True
