"""One agent run's plumbing, for the replay and record jobs: the environment contract, the
executable checked before any run, the process to start, and what the run left read back
(its status, the replay report, the guard's log, the last lines of stdout and stderr).

An agent run gets the environment contract (``constants.py``): ``CASSETTE_MODE``,
``CASSETTE_PATH`` (absolute), ``CASSETTE_REPORT`` (a file in the runs folder) and
``CASSETTE_CONFIG`` when a config was named.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..format.constants import (
    ENV_CLAIM,
    ENV_CONFIG,
    ENV_FIXTURES,
    ENV_MODE,
    ENV_NEW_CALLS,
    ENV_NEW_PATH,
    ENV_PATH,
    ENV_REPORT,
    ENV_REPORT_OWNER,
)
from ..replay.report import ReplayReport, ReplayReportError
from ._runner import ProcessOutcome, ProcessSpec
from .agent import AgentCommand, AgentNotStarted
from .results import RunResult

#: lines of the agent's stdout, and of its stderr, kept in a result
TAIL_LINES = 20
#: what starts a Python traceback on stderr
TRACEBACK = b"Traceback (most recent call last):"
#: bytes of stderr scanned for a traceback (its first and its last ones)
TRACEBACK_SCAN = 4 * 1024 * 1024


def check_executable(argv0: str, cwd: Path | None, env: dict[str, str]) -> None:
    """Raise :class:`AgentNotStarted` unless ``argv0`` names an executable file (looked up
    on the agent's ``PATH`` when it has no ``/``, else relative to its folder). Checked
    before any run: behind ``unshare`` a missing program would look like a failed run."""
    if "/" in argv0:
        path = Path(argv0) if cwd is None else cwd / argv0
        ok = path.is_file() and os.access(path, os.X_OK)
    else:
        ok = shutil.which(argv0, path=env.get("PATH", os.defpath)) is not None
    if not ok:
        raise AgentNotStarted(f"agent command: {argv0!r} is not an executable program here")


def agent_env(mode: str, cassette: Path, report: Path, config: Any) -> dict[str, str]:
    """This process's environment with the contract's ``CASSETTE_*`` variables set."""
    dropped = (
        ENV_MODE, ENV_PATH, ENV_REPORT, ENV_REPORT_OWNER, ENV_CLAIM, ENV_NEW_CALLS,
        ENV_NEW_PATH, ENV_FIXTURES,
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env[ENV_MODE] = mode
    env[ENV_PATH] = str(cassette)
    env[ENV_REPORT] = str(report)
    # every process of the run appends its calls to the report's journal; none restarts it
    env[ENV_REPORT_OWNER] = f"0:{os.path.realpath(report)}"
    if config is not None:
        env[ENV_CONFIG] = str(Path(config).resolve())
    return env


def agent_spec(
    agent: AgentCommand,
    n: int,
    folder: Path,
    cassette: Path,
    env: dict[str, str],
    timeout: float | None,
    argv_prefix: Any = None,
) -> ProcessSpec:
    """Run ``n``'s process: the agent's arguments with ``{cassette}``, ``{report}`` and
    ``{run}`` filled in (``argv_prefix`` wraps them: an isolation's ``unshare``), its
    output into ``run-NN.stdout`` / ``run-NN.stderr`` in ``folder``."""
    name = f"run-{n:02d}"
    values = {"cassette": str(cassette), "report": str(report_path(folder, n)), "run": str(n)}
    argv = agent.render(values)
    if argv_prefix is not None:
        argv = argv_prefix(argv)
    return ProcessSpec(
        n, argv, env, folder / f"{name}.stdout", folder / f"{name}.stderr", agent.cwd, timeout
    )


def report_path(folder: Path, n: int) -> Path:
    """Where run ``n`` writes its report: ``run-NN.report.json`` in ``folder``."""
    return folder / f"run-{n:02d}.report.json"


def read_report(path: Path) -> tuple[ReplayReport | None, str]:
    """The report of the run at ``path`` (``ReplayReport.read_run``: the report file and
    its journal, so every call of every process of the run), or ``None`` and why it cannot
    be had."""
    try:
        return ReplayReport.read_run(path), ""
    except FileNotFoundError:
        return None, (
            "the agent wrote no replay report (it does not wrap its dispatcher, or it ended "
            "before writing one)"
        )
    except ReplayReportError as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:
        return None, f"{path}: unreadable replay report: {exc}"


def read_guard_log(path: Path) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the guard loaded, and what it refused (``[{"what", "address", "pid"}]``)."""
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


def masked_tail(path: Path | None, lines: int = TAIL_LINES) -> str:
    """``tail`` with every secret the scan finds in it masked (``masking.mask_value``): the
    tail is shown by the commands and the app, and saved in ``results.json``."""
    from ..scan.masking import mask_text

    return mask_text(tail(path, lines))


def read_uncovered(path: Path) -> list[dict[str, Any]]:
    """The programs the guard logged as started without it (``{"argv", "why", "pid"}``;
    the same program started twice by one process counts once: ``subprocess`` and
    ``os.posix_spawn`` both report it)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("event") != "uncovered":
            continue
        raw = event.get("argv")
        argv = [str(a) for a in raw] if isinstance(raw, list) else []
        entry = {"argv": argv, "why": str(event.get("why", "")), "pid": event.get("pid")}
        found.setdefault((entry["pid"], *argv), entry)
    return list(found.values())


def tail(path: Path | None, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of the file at ``path`` ("" when it cannot be read)."""
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


def run_status(outcome: ProcessOutcome, stderr: Path | None) -> str:
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


def ended_run(outcome: ProcessOutcome, isolation: str) -> RunResult:
    """The run of ``outcome`` as far as the process tells (status, exit, time, output
    files, stderr's tail), before its report is read."""
    spec = outcome.spec
    stderr = spec.stderr if spec is not None else None
    started = outcome.status != "not_started"
    return RunResult(
        outcome.index,
        run_status(outcome, stderr) if started else "not_started",
        outcome.returncode,
        outcome.duration_s,
        isolation,
        stdout=spec.stdout if spec is not None else None,
        stderr=stderr,
        stdout_tail=masked_tail(spec.stdout if spec is not None else None),
        stderr_tail=masked_tail(stderr),
        error=outcome.error,
        stdout_dropped=outcome.stdout_dropped,
        stderr_dropped=outcome.stderr_dropped,
        left_behind=outcome.left_behind,
    )


def tally(results: list[RunResult], replays: bool = False) -> str:
    """``3 ✓ 1 ✗``: the runs that passed and did not (the jobs' progress message); with
    ``replays``, a tick only for a pass whose replay was clean (``RunResult.replay``): a
    pass with a miss gets none."""
    passed = sum(r.passed and (not replays or r.replay()[0] == "clean") for r in results)
    return f"{passed} ✓ {len(results) - passed} ✗"
