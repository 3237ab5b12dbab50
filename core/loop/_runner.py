"""Run agent processes: each in its own process group, with a timeout, several at once.

``run_processes(specs, jobs, token)`` starts up to ``jobs`` processes at a time and yields a
:class:`ProcessOutcome` as each one ends, in the order they end. Every process starts in a
new session (``start_new_session``), hence its own process group, so that a timeout, a
cancelled job (``CancelToken.cancel()`` runs the registered cleanup at once, from any
thread) or the caller closing the generator (Ctrl-C reaching ``run_job``) kills the agent
*and everything it started* with one ``killpg``. A process group is also killed after its
leader exits, so no stray child outlives its run. Processes not yet started when the token
is cancelled are never started.

Output goes to files (never pipes a stuck child could fill); the arguments are a list,
never a shell command.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..format.jobs import CancelToken

#: why a process ended: it exited by itself (``returncode`` >= 0, or < 0 for a signal it
#: did not get from us), we killed it at its timeout, we killed it for a cancel, or it
#: could not be started at all (``error`` says why)
STATUSES = ("exited", "timeout", "cancelled", "not_started")


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
    """

    index: int
    argv: Sequence[str]
    env: dict[str, str]
    stdout: Path
    stderr: Path
    cwd: Path | None = None
    timeout: float | None = None


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
    """

    index: int
    status: str
    returncode: int | None
    duration_s: float
    error: str = ""
    spec: ProcessSpec | None = field(default=None, repr=False, compare=False)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group led by ``proc`` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_processes(
    specs: Sequence[ProcessSpec], jobs: int, token: CancelToken | None = None
) -> Iterator[ProcessOutcome]:
    """Run ``specs``, at most ``jobs`` at once, yielding each outcome as its process ends.

    Cancelling ``token`` kills every running process group at once (their outcomes come
    out as ``cancelled``) and starts no more. Closing the generator early does the same
    before it returns. ``jobs`` below 1 counts as 1.
    """
    token = token or CancelToken()
    jobs = max(1, jobs)
    done: queue.Queue[ProcessOutcome] = queue.Queue()
    running: dict[int, subprocess.Popen[bytes]] = {}
    lock = threading.Lock()
    threads: list[threading.Thread] = []
    stopping = threading.Event()

    def kill_all() -> None:
        stopping.set()
        with lock:
            procs = list(running.values())
        for proc in procs:
            kill_group(proc)

    def run_one(spec: ProcessSpec) -> None:
        start = time.perf_counter()
        try:
            with open(spec.stdout, "wb") as out, open(spec.stderr, "wb") as err:
                proc = subprocess.Popen(
                    list(spec.argv),
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
            done.put(
                ProcessOutcome(
                    spec.index, "not_started", None, 0.0, f"{spec.argv[0]}: {what}", spec
                )
            )
            return
        with lock:
            running[spec.index] = proc
        timed_out = threading.Event()
        timer = None
        if spec.timeout is not None:

            def expire() -> None:
                timed_out.set()
                kill_group(proc)

            timer = threading.Timer(spec.timeout, expire)
            timer.daemon = True
            timer.start()
        if stopping.is_set():  # cancelled between the check and the start
            kill_group(proc)
        returncode = proc.wait()  # blocks in waitpid: no polling delay
        duration = time.perf_counter() - start
        if timer is not None:
            timer.cancel()
        kill_group(proc)  # children it left behind go with it
        with lock:
            running.pop(spec.index, None)
        if timed_out.is_set():
            status = "timeout"
        elif stopping.is_set() and returncode < 0:
            status = "cancelled"
        else:
            status = "exited"
        done.put(ProcessOutcome(spec.index, status, returncode, duration, "", spec))

    pending = list(reversed(specs))
    unregister = token.on_cancel(kill_all)
    outstanding = 0
    try:
        while True:
            while pending and outstanding < jobs and not stopping.is_set():
                thread = threading.Thread(
                    target=run_one, args=(pending.pop(),), name="cassette-run", daemon=True
                )
                threads.append(thread)
                thread.start()
                outstanding += 1
            if outstanding == 0:
                return
            try:
                outcome = done.get(timeout=0.2)
            except queue.Empty:
                continue
            outstanding -= 1
            yield outcome
    finally:
        unregister()
        if outstanding:
            kill_all()
        for thread in threads:
            thread.join(timeout=10)
