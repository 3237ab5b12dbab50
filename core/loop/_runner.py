"""Run agent processes: each in its own process group, with a timeout, several at once;
each process tree ends with its run, and its output is capped.

``run_processes(specs, jobs, token)`` starts up to ``jobs`` processes at a time and yields a
:class:`ProcessOutcome` as each one ends, in the order they end. Each agent runs under
``_reaper.py`` (one small Python process per run, standard library only, started in a new
session), which starts the agent in a process group of its own and is:

- a child subreaper, so daemons the agent double-forks out of its process group and
  session come back to it, and it kills them all (and the agent's group) when the agent
  exits: no stray process outlives its run (``ProcessOutcome.left_behind`` counts them);
- under a parent-death signal, as the agent is under the reaper's, so the agent's tree
  ends when this process is killed (``kill -9`` of ``cassette-tui gate``);
- the copier of the agent's stdout and stderr to the run's files, each cut at
  ``ProcessSpec.output_cap`` bytes (the outcome says how much was dropped).

A timeout, a cancelled job (``CancelToken.cancel()`` runs the registered cleanup at once,
from any thread) or the caller closing the generator (Ctrl-C reaching ``run_job``) asks
each reaper (``SIGTERM``) to kill its agent's whole tree; the reaper's process group is
killed outright when it has not ended ``STOP_GRACE_S`` later. Processes not yet started
when the token is cancelled are never started.

Output goes to files through the reaper (which always drains the pipes, so a child never
blocks on a full one); the arguments are a list, never a shell command.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..format.jobs import CancelToken
from .options import OUTPUT_CAP

#: why a process ended: it exited by itself (``returncode`` >= 0, or < 0 for a signal it
#: did not get from us), we killed it at its timeout, we killed it for a cancel, or it
#: could not be started at all (``error`` says why)
STATUSES = ("exited", "timeout", "cancelled", "not_started")
#: the script between the runner and each agent (see the module doc)
REAPER = Path(__file__).resolve().with_name("_reaper.py")
#: seconds a reaper asked to stop has before its process group is killed outright
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class ProcessSpec:
    """One process to run.

    Attributes:
        index: the caller's number for it (a gate's 1-based run number).
        argv: the arguments (``argv[0]`` looked up on ``PATH``).
        env: the whole environment of the process.
        stdout, stderr: files that receive its output (created or truncated).
        cwd: its working folder (``None``: the caller's).
        timeout: seconds before its process group is killed (``None``: no limit).
        output_cap: bytes of stdout, and of stderr, kept in the files (``None``: no cap).
    """

    index: int
    argv: Sequence[str]
    env: dict[str, str]
    stdout: Path
    stderr: Path
    cwd: Path | None = None
    timeout: float | None = None
    output_cap: int | None = OUTPUT_CAP

    @property
    def end_file(self) -> Path:
        """Where the reaper writes how the run ended (``run-NN.end.json`` beside
        ``stdout``)."""
        return self.stdout.with_name(self.stdout.name.rsplit(".", 1)[0] + ".end.json")


@dataclass(frozen=True)
class ProcessOutcome:
    """How one process ended.

    Attributes:
        index: the spec's index.
        status: one of ``STATUSES``.
        returncode: the exit status (negative: the signal that ended it), ``None`` when it
            never started.
        duration_s: wall time from start to exit, seconds.
        error: why it could not start (``not_started``), else ``""``.
        stdout_dropped, stderr_dropped: bytes the agent wrote past ``output_cap`` (not in
            the files).
        left_behind: processes the agent left running when it ended (daemons, children),
            killed by the reaper.
    """

    index: int
    status: str
    returncode: int | None
    duration_s: float
    error: str = ""
    spec: ProcessSpec | None = field(default=None, repr=False, compare=False)
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    left_behind: int = 0


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group led by ``proc`` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask ``proc``'s reaper to kill the agent's whole tree (``SIGTERM``); its process
    group is killed outright if it has not ended ``STOP_GRACE_S`` later."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGTERM)
    timer = threading.Timer(STOP_GRACE_S, kill_group, (proc,))
    timer.daemon = True
    timer.start()


def _reaper_argv(spec: ProcessSpec) -> list[str]:
    cap = spec.output_cap if spec.output_cap is not None else -1
    return [
        sys.executable, "-I", "-S", str(REAPER), "--parent", str(os.getpid()),
        "--cap", str(cap if cap >= 0 else 1 << 62), "--status", str(spec.end_file),
        "--", *spec.argv,
    ]  # fmt: skip


def _read_end(spec: ProcessSpec) -> dict[str, object]:
    """What the reaper wrote of the run's end (``{}`` when it wrote nothing)."""
    try:
        data = json.loads(spec.end_file.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class _Processes:
    """The processes of one ``run_processes`` call: each run by a thread of its own, its
    outcome put on ``done`` when it ends."""

    def __init__(self) -> None:
        self.done: queue.Queue[ProcessOutcome] = queue.Queue()
        self.running: dict[int, subprocess.Popen[bytes]] = {}
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        #: cancelled (or closed early): kill what runs, start nothing more
        self.stopping = threading.Event()

    def kill_all(self) -> None:
        self.stopping.set()
        with self.lock:
            procs = list(self.running.values())
        for proc in procs:
            stop(proc)

    def start(self, spec: ProcessSpec) -> None:
        """Run ``spec`` in a new thread."""
        thread = threading.Thread(target=self.run_one, args=(spec,), name="cassette-run",
                                  daemon=True)  # fmt: skip
        self.threads.append(thread)
        thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=10)

    def run_one(self, spec: ProcessSpec) -> None:
        """Start ``spec``'s process, wait for it (killing its group at its timeout), kill
        what it left behind, and put its outcome on ``done``."""
        start = time.perf_counter()
        proc = self._popen(spec)
        if proc is None:
            return
        with self.lock:
            self.running[spec.index] = proc
        timed_out = threading.Event()
        timer = _start_timer(spec.timeout, proc, timed_out)
        if self.stopping.is_set():  # cancelled between the check and the start
            stop(proc)
        returncode = proc.wait()  # blocks in waitpid: no polling delay
        duration = time.perf_counter() - start
        if timer is not None:
            timer.cancel()
        kill_group(proc)  # the reaper killed the agent's tree; anything left in its group
        with self.lock:
            self.running.pop(spec.index, None)
        end = _read_end(spec)
        if end.get("exec_error"):
            error = str(end["exec_error"])
            self.done.put(ProcessOutcome(spec.index, "not_started", None, 0.0, error, spec))
            return
        if timed_out.is_set():
            status = "timeout"
        elif self.stopping.is_set() and returncode < 0:
            status = "cancelled"
        else:
            status = "exited"
        self.done.put(
            ProcessOutcome(
                spec.index,
                status,
                returncode,
                duration,
                "",
                spec,
                stdout_dropped=_count(end, "stdout_dropped"),
                stderr_dropped=_count(end, "stderr_dropped"),
                left_behind=_count(end, "left_behind"),
            )  # fmt: skip
        )

    def _popen(self, spec: ProcessSpec) -> subprocess.Popen[bytes] | None:
        """``spec``'s process, started in a session of its own (hence its own process
        group); ``None`` when it cannot start (its ``not_started`` outcome is put on
        ``done``)."""
        try:
            with open(spec.stdout, "wb") as out, open(spec.stderr, "wb") as err:
                return subprocess.Popen(
                    _reaper_argv(spec),
                    env=spec.env,
                    cwd=spec.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,  # its own session, hence its own process group
                    close_fds=True,
                )
        except OSError as exc:
            what = exc.strerror or str(exc)
            error = f"{spec.argv[0]}: {what}"
            self.done.put(ProcessOutcome(spec.index, "not_started", None, 0.0, error, spec))
            return None


def _count(end: dict[str, object], key: str) -> int:
    value = end.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _start_timer(
    timeout: float | None, proc: subprocess.Popen[bytes], timed_out: threading.Event
) -> threading.Timer | None:
    """A started timer that sets ``timed_out`` and kills ``proc``'s group after
    ``timeout`` seconds (``None``: no limit, no timer)."""
    if timeout is None:
        return None

    def expire() -> None:
        timed_out.set()
        stop(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    return timer


def run_processes(
    specs: Iterable[ProcessSpec], jobs: int, token: CancelToken | None = None
) -> Iterator[ProcessOutcome]:
    """Run ``specs``, at most ``jobs`` at once, yielding each outcome as its process ends.
    ``specs`` is read only as runs start, so a generator of a huge ``--runs`` costs the
    memory of the runs started, not of the runs asked for.

    Cancelling ``token`` kills every running process group at once (their outcomes come
    out as ``cancelled``) and starts no more. Closing the generator early does the same
    before it returns. ``jobs`` below 1 counts as 1.
    """
    token = token or CancelToken()
    jobs = max(1, jobs)
    processes = _Processes()
    pending = iter(specs)
    unregister = token.on_cancel(processes.kill_all)
    outstanding = 0
    try:
        while True:
            while outstanding < jobs and not processes.stopping.is_set():
                spec = next(pending, None)
                if spec is None:
                    break
                processes.start(spec)
                outstanding += 1
            if outstanding == 0:
                return
            try:
                outcome = processes.done.get(timeout=0.2)
            except queue.Empty:
                continue
            outstanding -= 1
            yield outcome
    finally:
        unregister()
        if outstanding:
            processes.kill_all()
        processes.join()
