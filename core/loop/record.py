"""The record job: run the agent once, live, recording its calls into a new cassette (the
debug loop's re-record step; see ``_runs.py`` for what a job is)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..format.atomic import FolderNotWritable, check_new_file, default_mode, write_atomic
from ..format.cassette import Cassette, load
from ..format.constants import ENV_CLAIM
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
        FileExistsError: ``output`` exists, a dangling symlink too (checked before the
            agent starts: the job creates the file exclusively, ``O_CREAT|O_EXCL``, so a
            second recording to the same path fails before its agent runs; the agent's
            recorder writes into that one file, ``CASSETTE_CLAIM``).
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
    claim = _claim(target, output)  # from here the file is this job's
    try:
        folder = runs_folder.open(f"cassette-record-{target.stem}-")
        report = report_path(folder, 1)
        env = agent_env("record", target, report, options.config)
        env.update(options.policy_env())  # pinned fixtures hold their answers live too
        env[ENV_CLAIM] = f"{claim[0]}:{claim[1]}"
        spec = agent_spec(agent, 1, folder, target, env, options.timeout)
        yield Progress("record", 0, 1, "runs", "")
        # one spec: the generator yields its one outcome when the agent ends
        (outcome,) = run_processes([spec], 1, token)
    except BaseException:
        _remove_empty(target, claim)
        raise
    if outcome.status == "not_started":
        _remove_empty(target, claim)
        raise AgentNotStarted(f"agent command {agent.template!r}: {outcome.error}")
    run = ended_run(outcome, LIVE)
    run.report, _ = read_report(report)
    cassette = _recorded(run, output, target, claim, options)
    if cassette is not None and not token.cancelled:
        _write_end(target, run)
    yield Progress("record", 1, 1, "runs", tally([run]))
    return RecordResult(run, target, cassette, cancelled=token.cancelled)


def _check_target(output: str | Path) -> Path:
    """``output``, absolute (its folder resolved, not its own name: a symlink there is a
    file that exists), once it is known a new cassette can be written there.

    Raises:
        FileExistsError: it exists (a dangling symlink too: never followed).
        FolderNotWritable: its folder takes no new file.
    """
    given = Path(output).absolute()
    target = given.parent.resolve() / given.name
    if os.path.lexists(target):
        what = " (a symlink)" if target.is_symlink() else ""
        raise FileExistsError(f"{output}: exists{what}; a recording never overwrites a cassette")
    check_new_file(target)  # a read-only folder is refused before the agent runs live
    return target


def _claim(target: Path, output: str | Path) -> tuple[int, int]:
    """Create ``target`` empty, exclusively (``O_CREAT|O_EXCL``, never through a symlink),
    before the agent starts: a second recording to the same path fails here, before its
    agent runs. Returns the file's ``(st_dev, st_ino)``: the agent's recorder writes into
    this file and no other (``CASSETTE_CLAIM``), and the job removes only this file.
    Missing folders above it are created.

    Raises:
        FileExistsError: something is at ``target`` (another recording took it).
        FolderNotWritable: the file cannot be created.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        target.parent.mkdir(parents=True, exist_ok=True)  # as the recorder would
        fd = os.open(target, flags, default_mode())
    except FileExistsError:
        raise FileExistsError(
            f"{output}: exists (another recording may have taken it); a recording never "
            "overwrites a cassette"
        ) from None
    except OSError as exc:
        raise FolderNotWritable(target, target.parent, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_dev, st.st_ino


def _recorded(
    run: RunResult, output: str | Path, target: Path, claim: tuple[int, int], options: LoopOptions
) -> Cassette | None:
    """The cassette the run recorded, loaded; ``None`` (and ``run.error`` says why) when it
    recorded nothing, the file is no longer the one the job made, or it cannot be read."""
    if _remove_empty(target, claim):
        run.error = f"{output}: the agent recorded nothing (no file written)"
        return None
    if not os.path.lexists(target):
        run.error = f"{output}: no file there when the agent ended (removed while it ran)"
        return None
    if not _is_claimed(target, claim):
        run.error = (
            f"{output}: the file there is not the one this recording made for its agent "
            "(removed or replaced while the agent ran): left as it is"
        )
        return None
    try:
        return load(target, lenient=True, rules=load_rules(options.config))
    except CassetteFormatError as exc:
        run.error = str(exc)
        return None


def end_file(cassette: Path) -> Path:
    """Where ``record`` says how the run ended: ``RUN.end.json`` beside ``RUN.jsonl`` (the
    name and the ``exit`` field a gate's runs folder uses, so ``group`` over a folder of
    recordings counts passes and failures)."""
    return cassette.with_suffix(".end.json")


def _write_end(target: Path, run: RunResult) -> None:
    """``{"exit": N, "status": "failed"}`` beside the new cassette. One already there is
    replaced: it told of an earlier cassette at this path, and this one is new (the job
    created it exclusively). A write that fails costs only the outcome."""
    doc = {"exit": run.exit_code, "status": run.status}
    with contextlib.suppress(OSError):
        write_atomic(
            end_file(target), [json.dumps(doc).encode() + b"\n"], make_parents=False, overwrite=True
        )


def _is_claimed(target: Path, claim: tuple[int, int]) -> bool:
    try:
        st = os.lstat(target)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == claim


def _remove_empty(target: Path, claim: tuple[int, int]) -> bool:
    """Remove ``target`` when it is still the empty file the job made (``claim``: an agent
    that was killed, or crashed, before its first entry, or never opened it); ``True`` when
    removed. Any other file there (a user's, another job's) is never touched."""
    try:
        st = os.lstat(target)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != 0 or (st.st_dev, st.st_ino) != claim:
        return False
    try:
        target.unlink()
    except OSError:
        return False
    return True
