"""The debug loop's jobs: replay a cassette, gate it over N replays, record a new one.

Each is a core job (``jobs.py``): a generator that yields ``Progress`` (stage ``"replay"``,
``"gate"`` or ``"record"``, unit ``"runs"``, message the pass/fail tally ``"3 ✓ 1 ✗"``,
``item`` the ``RunResult`` of the run that just ended, so a screen can list it at once),
honours a ``CancelToken`` (cancelling kills every agent's process group at once and the job
returns the partial result, ``cancelled=True``) and returns its result. The CLI drives
them with a progress bar, the app with a worker.

An agent run gets the environment contract (``constants.py``): ``CASSETTE_MODE``,
``CASSETTE_PATH`` (absolute), ``CASSETTE_REPORT`` (a file in the runs folder) and
``CASSETTE_CONFIG`` when a config was named. Replays run with the network off
(``isolation.py``); a recording runs live. Every file of a run goes in the runs folder::

    run-01.stdout  run-01.stderr      the agent's output
    run-01.report.json                the replay report the agent wrote
    run-01.jsonl                      its call log as a cassette (``calllog.py``)
    run-01.guard.log                  what the network guard refused (guard isolation)

The runs folder (``RunsFolder``) is ``runs_dir`` when the caller names one (``--runs-dir``):
it is kept, files and all. Without it the job makes a temporary folder
(``tempfile.mkdtemp``, ``cassette-<stage>-<stem>-*``) and removes it when it ends, however
it ends (its result, an error, a cancel, or the generator closed), after reading what it
needs (the reports, the call logs the gate compares); the result then names no file
(``runs_dir`` and each run's ``stdout``, ``stderr`` and ``call_log`` are ``None``).
``keep`` overrides either way: ``keep=True`` keeps a temporary folder, ``keep=False``
removes the files a job wrote in a named folder (the folder too when that leaves it
empty; nothing else in it is touched). A recording's cassette is never in the runs folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.atomic import check_new_file
from ..format.cassette import Cassette, load
from ..format.constants import ENV_CONFIG, ENV_MODE, ENV_PATH, ENV_REPORT
from ..format.errors import CassetteError, CassetteFormatError
from ..format.jobs import CancelToken, JobGenerator, Progress
from ..keys.config import load_rules
from .agent import AgentCommand
from .call_log import flatten_report, write_call_log
from .isolation import Isolation, choose
from .runner import ProcessOutcome, ProcessSpec, run_processes
from .served import open_served

#: seconds an agent run may take by default before its process group is killed
DEFAULT_TIMEOUT = 120.0
#: lines of the agent's stderr kept in a result
TAIL_LINES = 20
#: the status of a replay run that exited 0 but replayed nothing
NO_REPLAY = "no_replay"
#: why a run is ``no_replay``, for a person
NO_REPLAY_WHY = (
    "the agent exited 0 but replayed nothing: does it wrap its dispatcher with "
    "wrap_dispatcher / read CASSETTE_MODE?"
)


class AgentNotStarted(CassetteError):
    """The agent command could not be started at all (not found, not executable)."""


def default_jobs() -> int:
    """The default number of runs at once: the number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class RunResult:
    """One agent run.

    Attributes:
        run: 1-based run number.
        status: ``passed`` (exit 0), ``failed`` (another exit status), ``crashed`` (ended
            by a signal, or a Python traceback on stderr), ``timeout``, ``cancelled``,
            ``not_started``, or (replays only) ``no_replay``: the agent exited 0 but
            replayed nothing (no replay report, or one with no call while the cassette has
            entries), a mis-wired agent, never a pass.
        exit_code: the exit status (negative: the signal), ``None`` when it never ran.
        duration_s: wall time, seconds.
        isolation: ``"netns"``, ``"guard"``, ``"guard (not loaded)"`` when the guard never
            loaded (the agent is not a Python that honours ``PYTHONPATH``: the network was
            not off), or ``"none (live)"`` for a recording.
        report: the replay report the agent wrote, or ``None`` (it wrote none).
        call_log: the call-log cassette (``calllog.py``), or ``None`` without a report.
        blocked: what the guard refused: ``[{"what", "address", "pid"}]``.
        stdout, stderr: the files holding the agent's output.
        stderr_tail: its last lines of stderr.
        error: why it could not start, or why its report could not be read.
    """

    run: int
    status: str
    exit_code: int | None
    duration_s: float
    isolation: str
    report: dict[str, Any] | None = None
    call_log: Path | None = None
    blocked: list[dict[str, Any]] = field(default_factory=list)
    stdout: Path | None = None
    stderr: Path | None = None
    stderr_tail: str = ""
    error: str = ""

    @property
    def no_replay(self) -> bool:
        """The agent exited 0 without replaying anything (see ``status``)."""
        return self.status == NO_REPLAY

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def completed(self) -> bool:
        """The run ran to an end of its own or its timeout (not cancelled, not unstarted)."""
        return self.status not in ("cancelled", "not_started")

    def _calls(self, *outcomes: str) -> int:
        calls = (self.report or {}).get("calls") or []
        return sum(1 for c in calls if c.get("outcome") in outcomes)

    @property
    def hits(self) -> int:
        """Calls served from the cassette (a recorded error served counts too)."""
        return self._calls("hit", "error")

    @property
    def misses(self) -> int:
        """Calls whose key was never recorded."""
        return self._calls("miss")

    @property
    def exhausted(self) -> int:
        """Calls past the last recording of their key."""
        return self._calls("exhausted")

    @property
    def repeated_calls(self) -> int:
        """Calls of a key beyond its first call (summed over the report's ``repeats``)."""
        repeats = (self.report or {}).get("repeats") or []
        return sum(max(0, int(r.get("calls", 0)) - 1) for r in repeats)

    @property
    def unused_seqs(self) -> list[int]:
        return list((self.report or {}).get("unused_seqs") or [])

    def to_json(self) -> dict[str, Any]:
        """``{"run", "status", "passed", "exit_code", "duration_s", "isolation", "calls",
        "hits", "misses", "exhausted", "repeated_calls", "unused_seqs", "blocked",
        "call_log", "report", "stdout", "stderr", "stderr_tail", "error"}`` (paths as
        strings or null)."""

        def path(p: Path | None) -> str | None:
            return str(p) if p is not None else None

        calls = (self.report or {}).get("calls")
        return {
            "run": self.run,
            "status": self.status,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "duration_s": round(self.duration_s, 4),
            "isolation": self.isolation,
            "calls": len(calls) if calls is not None else None,
            "hits": self.hits,
            "misses": self.misses,
            "exhausted": self.exhausted,
            "repeated_calls": self.repeated_calls,
            "unused_seqs": self.unused_seqs,
            "blocked": self.blocked,
            "call_log": path(self.call_log),
            "report": path(self.stdout.with_name(f"run-{self.run:02d}.report.json"))
            if self.stdout is not None and self.report is not None
            else None,
            "stdout": path(self.stdout),
            "stderr": path(self.stderr),
            "stderr_tail": self.stderr_tail,
            "error": self.error,
        }


@dataclass
class RunsResult:
    """What the runs of one job have in common, and the runs themselves.

    Attributes:
        cassette: the cassette replayed (or recorded).
        agent: the agent command as written.
        requested: runs asked for.
        results: one per run that started or was due, in run order.
        isolation: the isolation in force (``Isolation.name``), ``"none (live)"`` when
            recording.
        isolation_detail: how it was set up, for a person.
        runs_dir: the folder holding every run's files, or ``None``: the job's temporary
            folder, removed when it ended (see the module doc).
        cancelled: the job was cancelled; ``results`` holds what finished before.
        source_format: ``"cassette"``, or the format of an imported run (``cassette`` is
            then its path spec; the agent read it written as a cassette, ``served.py``).
    """

    cassette: Path
    agent: str
    requested: int
    results: list[RunResult]
    isolation: str
    isolation_detail: str
    runs_dir: Path | None
    cancelled: bool = False
    source_format: str = "cassette"

    @property
    def completed(self) -> list[RunResult]:
        return [r for r in self.results if r.completed]


def make_runs_dir(runs_dir: str | Path | None, prefix: str) -> Path:
    """``runs_dir`` created (it must not hold run files already: never overwritten), or a
    new folder in the system's temporary folder (``tempfile.mkdtemp(prefix=prefix)``).

    Raises:
        FileExistsError: ``runs_dir`` already holds ``run-*`` files.
    """
    if runs_dir is None:
        return Path(tempfile.mkdtemp(prefix=prefix))
    folder = Path(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.glob("run-*")):
        raise FileExistsError(
            f"{folder}: holds the files of earlier runs; choose an empty folder (never overwritten)"
        )
    return folder


class RunsFolder:
    """The folder of one job's run files (see the module doc), made by ``open``.

    Attributes:
        path: the folder, ``None`` until ``open``.
        made: the job makes it (``runs_dir`` was ``None``).
        kept: it outlives the job (a named ``runs_dir``, or ``keep=True``).
    """

    def __init__(self, runs_dir: str | Path | None = None, keep: bool | None = None) -> None:
        self.runs_dir = runs_dir
        self.made = runs_dir is None
        self.kept = (not self.made) if keep is None else keep
        self.path: Path | None = None

    def open(self, prefix: str) -> Path:
        """The folder, made on the first call (``make_runs_dir``; ``prefix`` names a
        temporary one). Raises ``FileExistsError`` as ``make_runs_dir``."""
        if self.path is None:
            self.path = make_runs_dir(self.runs_dir, prefix)
        return self.path

    def forget(self, result: RunsResult | RecordResult) -> None:
        """For a folder that goes when the job ends: ``result`` names none of its files."""
        if self.kept:
            return
        if isinstance(result, RunsResult):
            result.runs_dir = None
            runs = result.results
        else:
            runs = [result.run]
        for run in runs:
            run.stdout = run.stderr = run.call_log = None

    def remove(self) -> None:
        """Remove what goes when the job ends: a folder the job made, whole; in a named
        folder, the ``run-*`` files the job wrote (no other file was there: see
        ``make_runs_dir``), then the folder if that left it empty. Never raises."""
        path = self.path
        if self.kept or path is None:
            return
        if self.made:
            shutil.rmtree(path, ignore_errors=True)
            return
        for item in path.glob("run-*"):
            with contextlib.suppress(OSError):
                if not item.is_dir() or item.is_symlink():
                    item.unlink()
        with contextlib.suppress(OSError):
            path.rmdir()  # only when empty: anything else in it stays


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, (
            "the agent wrote no replay report (it does not wrap its dispatcher, or it ended "
            "before writing one)"
        )
    except (OSError, ValueError) as exc:
        return None, f"{path}: unreadable replay report: {exc}"
    if not isinstance(data, dict):
        return None, f"{path}: the replay report is not a JSON object"
    return flatten_report(data), ""


def _read_guard_log(path: Path) -> tuple[bool, list[dict[str, Any]]]:
    loaded, blocked = False, []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False, []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "installed":
            loaded = True
        elif event.get("event") == "refused":
            blocked.append({k: event.get(k) for k in ("what", "address", "pid")})
    return loaded, blocked


def _tail(path: Path | None, lines: int = TAIL_LINES) -> str:
    if path is None:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


#: what starts a Python traceback on stderr
TRACEBACK = b"Traceback (most recent call last):"
#: bytes of stderr scanned for a traceback (its first and its last ones)
TRACEBACK_SCAN = 4 * 1024 * 1024


def has_traceback(path: Path | None, limit: int = TRACEBACK_SCAN) -> bool:
    """Whether the file at ``path`` holds a Python traceback's first line, anywhere in its
    first ``limit`` bytes or its last ``limit`` bytes (read in 1 MiB chunks, so a long
    stderr costs at most ``2 * limit`` bytes read). ``False`` when it cannot be read."""
    if path is None:
        return False
    chunk, keep = 1 << 20, len(TRACEBACK) - 1
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            spans = [(0, min(size, limit))]
            if size > limit:
                spans.append((max(limit, size - limit), size))
            for start, end in spans:
                fh.seek(start)
                carry = b""
                while fh.tell() < end:
                    data = carry + fh.read(min(chunk, end - fh.tell()))
                    if TRACEBACK in data:
                        return True
                    carry = data[-keep:]
    except OSError:
        return False
    return False


def _status(outcome: ProcessOutcome, stderr: Path | None) -> str:
    """The run's status (``RunResult.status``); ``crashed`` for a Python traceback anywhere
    on stderr (``has_traceback``), not only in the tail kept for display."""
    if outcome.status != "exited":
        return outcome.status
    code = outcome.returncode
    if code == 0:
        return "passed"
    if code is not None and code < 0:
        return "crashed"
    if has_traceback(stderr):
        return "crashed"
    return "failed"


def _agent_env(
    mode: str, cassette: Path, report: Path, config: str | Path | None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_MODE, ENV_PATH, ENV_REPORT)}
    env[ENV_MODE] = mode
    env[ENV_PATH] = str(cassette)
    env[ENV_REPORT] = str(report)
    if config is not None:
        env[ENV_CONFIG] = str(Path(config).resolve())
    return env


def check_executable(argv0: str, cwd: Path | None, env: dict[str, str]) -> None:
    """Raise :class:`AgentNotStarted` unless ``argv0`` names an executable file (looked up
    on the agent's ``PATH`` when it has no ``/``, else relative to its folder). Checked
    before any run: behind ``unshare`` a missing program would look like a failed run."""
    import shutil

    if "/" in argv0:
        path = Path(argv0) if cwd is None else cwd / argv0
        ok = path.is_file() and os.access(path, os.X_OK)
    else:
        ok = shutil.which(argv0, path=env.get("PATH", os.defpath)) is not None
    if not ok:
        raise AgentNotStarted(f"agent command: {argv0!r} is not an executable program here")


def _tally(results: list[RunResult]) -> str:
    passed = sum(r.passed for r in results)
    return f"{passed} ✓ {len(results) - passed} ✗"


def replay_runs(
    cassette: str | Path,
    agent: AgentCommand,
    *,
    runs: int = 1,
    jobs: int | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    isolation: str | None = None,
    runs_dir: str | Path | RunsFolder | None = None,
    config: str | Path | None = None,
    token: CancelToken | None = None,
    stage: str = "gate",
    keep: bool | None = None,
) -> JobGenerator[tuple[RunsResult, Cassette]]:
    """Replay ``cassette`` ``runs`` times with ``agent``, ``jobs`` at once (default: the
    CPUs), network off. Returns the runs and the loaded cassette.

    ``runs_dir`` and ``keep``: where the run files go and whether they stay (module doc);
    a ``RunsFolder`` is the caller's to remove (a job that reads the files afterwards).

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
    owned = not isinstance(runs_dir, RunsFolder)
    folder = runs_dir if isinstance(runs_dir, RunsFolder) else RunsFolder(runs_dir, keep)
    try:
        result, loaded = yield from _replay_runs(
            cassette, agent, folder, runs, jobs, timeout, isolation, config, token, stage
        )
        if owned:
            folder.forget(result)
        return result, loaded
    finally:
        if owned:
            folder.remove()


def _replay_runs(
    cassette: str | Path,
    agent: AgentCommand,
    runs_folder: RunsFolder,
    runs: int,
    jobs: int | None,
    timeout: float | None,
    isolation: str | None,
    config: str | Path | None,
    token: CancelToken | None,
    stage: str,
) -> JobGenerator[tuple[RunsResult, Cassette]]:
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    token = token or CancelToken()
    rules = load_rules(config)
    served = open_served(cassette, rules)  # any path spec: an imported run too
    loaded = served.cassette
    chosen: Isolation = choose(isolation)
    check_executable(agent.argv[0], agent.cwd, dict(os.environ))
    folder = runs_folder.open(f"cassette-{stage}-{served.stem}-")
    source = served.place(folder)  # an imported run: written as a cassette for the agent
    specs = []
    for n in range(1, runs + 1):
        name = f"run-{n:02d}"
        report = folder / f"{name}.report.json"
        env = chosen.env(_agent_env("replay", source, report, config), folder / f"{name}.guard.log")
        argv = agent.render({"cassette": str(source), "report": str(report), "run": str(n)})
        specs.append(
            ProcessSpec(
                n,
                chosen.argv(argv),
                env,
                folder / f"{name}.stdout",
                folder / f"{name}.stderr",
                cwd=agent.cwd,
                timeout=timeout,
            )
        )
    result = RunsResult(
        served.source, agent.template, runs, [], chosen.name, chosen.detail, folder,
        cancelled=False, source_format=served.fmt,
    )  # fmt: skip
    yield Progress(stage, 0, runs, "runs", "")
    for outcome in run_processes(specs, jobs or default_jobs(), token):
        run = _run_result(outcome, folder, chosen, loaded)
        result.results.append(run)
        yield Progress(stage, len(result.results), runs, "runs", _tally(result.results), run)
    started = {r.run for r in result.results}
    result.results.extend(
        RunResult(n, "cancelled", None, 0.0, chosen.name, error="cancelled before it started")
        for n in range(1, runs + 1)
        if n not in started
    )
    result.results.sort(key=lambda r: r.run)
    if result.results and all(r.status == "not_started" for r in result.results):
        raise AgentNotStarted(f"agent command {agent.template!r}: {result.results[0].error}")
    result.cancelled = token.cancelled
    return result, loaded


def _run_result(
    outcome: ProcessOutcome, folder: Path, isolation: Isolation, cassette: Cassette
) -> RunResult:
    name = f"run-{outcome.index:02d}"
    spec = outcome.spec
    stderr = spec.stderr if spec is not None else None
    tail = _tail(stderr)
    iso = isolation.name
    blocked: list[dict[str, Any]] = []
    if iso == "guard":
        loaded, blocked = _read_guard_log(folder / f"{name}.guard.log")
        if not loaded and outcome.status != "not_started":
            iso = "guard (not loaded)"
    run = RunResult(
        outcome.index,
        _status(outcome, stderr) if outcome.status != "not_started" else "not_started",
        outcome.returncode,
        outcome.duration_s,
        iso,
        blocked=blocked,
        stdout=spec.stdout if spec is not None else None,
        stderr=stderr,
        stderr_tail=tail,
        error=outcome.error,
    )
    if outcome.status == "not_started":
        return run
    report, why = _read_json(folder / f"{name}.report.json")
    if run.status == "passed" and (
        report is None or (not report.get("calls") and len(cassette) > 0)
    ):
        run.status = NO_REPLAY
        why = f"{NO_REPLAY_WHY} (it wrote no replay report)" if report is None else NO_REPLAY_WHY
    if report is None:
        run.error = "stopped before it wrote a replay report" if run.status == "cancelled" else why
        return run
    run.report = report
    if run.no_replay:
        run.error = why
    try:
        run.call_log, _ = write_call_log(report, cassette, folder / f"{name}.jsonl")
    except (CassetteError, OSError, ValueError, TypeError) as exc:
        run.error = f"call log not written: {exc}"
    return run


# -- record -------------------------------------------------------------------------------


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
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    config: str | Path | None = None,
    runs_dir: str | Path | None = None,
    token: CancelToken | None = None,
    keep: bool | None = None,
) -> JobGenerator[RecordResult]:
    """Run ``agent`` once, live, recording its calls into ``output`` (a new file, always
    kept when it holds an entry; a run that recorded nothing leaves no file, so the same
    command can run again). ``runs_dir`` and ``keep``: where the run's output and report
    go and whether they stay (module doc).

    Raises:
        FileExistsError: ``output`` exists (checked before the agent starts; the agent's
            recorder refuses too).
        FolderNotWritable: (a ``CassetteError`` and ``OSError``) no new file can be
            created in ``output``'s folder (read-only, no permission), checked before the
            agent starts.
        AgentNotStarted: the agent command cannot be started.
        CassetteFormatError: the config is bad.
    """
    folder = RunsFolder(runs_dir, keep)
    try:
        result = yield from _record(agent, output, timeout, config, folder, token)
        folder.forget(result)
        return result
    finally:
        folder.remove()


def _record(
    agent: AgentCommand,
    output: str | Path,
    timeout: float | None,
    config: str | Path | None,
    runs_folder: RunsFolder,
    token: CancelToken | None,
) -> JobGenerator[RecordResult]:
    token = token or CancelToken()
    target = Path(output).resolve()
    if target.exists():
        raise FileExistsError(f"{output}: exists; a recording never overwrites a cassette")
    check_new_file(target)  # a read-only folder is refused before the agent runs live
    load_rules(config)  # a bad config is bad input before anything runs
    check_executable(agent.argv[0], agent.cwd, dict(os.environ))
    folder = runs_folder.open(f"cassette-record-{target.stem}-")
    report = folder / "run-01.report.json"
    env = _agent_env("record", target, report, config)
    argv = agent.render({"cassette": str(target), "report": str(report), "run": "1"})
    spec = ProcessSpec(
        1, argv, env, folder / "run-01.stdout", folder / "run-01.stderr", agent.cwd, timeout
    )
    yield Progress("record", 0, 1, "runs", "")
    outcome = None
    for outcome in run_processes([spec], 1, token):
        pass
    assert outcome is not None
    if outcome.status == "not_started":
        raise AgentNotStarted(f"agent command {agent.template!r}: {outcome.error}")
    tail = _tail(spec.stderr)
    run = RunResult(
        1,
        _status(outcome, spec.stderr),
        outcome.returncode,
        outcome.duration_s,
        "none (live)",
        stdout=spec.stdout,
        stderr=spec.stderr,
        stderr_tail=tail,
    )
    run.report, _ = _read_json(report)
    cassette = None
    if _remove_empty(target):
        run.error = f"{output}: the agent recorded nothing (the empty file it created was removed)"
    elif target.exists():
        try:
            cassette = load(target, lenient=True, rules=load_rules(config))
        except CassetteFormatError as exc:
            run.error = str(exc)
    else:
        run.error = f"{output}: the agent recorded nothing (no file written)"
    yield Progress("record", 1, 1, "runs", _tally([run]))
    return RecordResult(run, target, cassette, cancelled=token.cancelled)
