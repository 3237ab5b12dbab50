"""Lint and the secret scan of one cassette in one read, over two processes when it pays.

``check`` reads every entry of a cassette once for both (``lint(each=...)``). On a large
file-backed cassette and a machine with two CPUs or more, a forked worker process reads
the entries from ``start`` on, about half, giving their ``lint.entry_pass`` results (args
digests and per-entry findings) and their secret findings, while this process does the
same for the entries before ``start`` and then what needs the whole cassette (seq order,
repeated keys). The results are the same, in the same order, as one process gives. A
worker that fails hands its part back: this process reads those entries itself, so a bad
line is reported as ever. An exception here (Ctrl-C, a bad line) kills the worker.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from ..format.findings import Finding
from ..format.gcpause import no_cyclic_gc
from ._secret_prefilter import build_prefilter
from .lint import LintTail, TailResult, lint, pass_columns
from .redact_config import SecretConfig
from .secrets import SecretBatch, secret_findings

if TYPE_CHECKING:
    from ..format.cassette import Cassette

#: below this many entries one process is as fast (a fork and a pipe cost a few ms)
PARALLEL_MIN_ENTRIES = 20_000
#: the share of the entries this process reads itself: each process computes the digests
#: of its own entries, and what needs the whole cassette (seq order, repeated keys) is
#: done over its columns once the worker's part is in (``lint``), so each takes half
#: (measured on 1M entries: the two halves end within a second or two of each other)
MAIN_SHARE = 0.5


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a worker may be forked here: the ``fork`` start method exists, two CPUs or
    more are ours, and this process runs no other thread (a fork copies one thread only,
    and locks another holds would stay held in the child)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and _cpus() >= 2
        and threading.active_count() == 1
    )


def lint_and_scan(
    cassette: Cassette,
    config: SecretConfig | None,
    lint_too: bool = True,
    workers: int | None = None,
    min_entries: int = PARALLEL_MIN_ENTRIES,
) -> tuple[list[Finding], list[Finding]]:
    """``(lint findings, secret findings)`` of ``cassette``: ``lint(cassette)`` (or ``[]``
    when not ``lint_too``) and ``secret_findings(cassette, config)`` (or ``[]`` when
    ``config`` is ``None``), in one read of the entries. ``workers``: 2 to use a forked
    worker, 1 for one process; by default 2 when the cassette is file-backed, has at least
    ``min_entries`` entries and ``can_fork()``.

    Raises:
        CassetteFormatError: an entry that does not parse (file, line, field), as ``lint``.
    """
    with no_cyclic_gc():  # a pass over every entry builds no cycles (gcpause.py)
        return _lint_and_scan(cassette, config, lint_too, workers, min_entries)


def _lint_and_scan(
    cassette: Cassette,
    config: SecretConfig | None,
    lint_too: bool,
    workers: int | None,
    min_entries: int,
) -> tuple[list[Finding], list[Finding]]:
    if not lint_too:
        return [], (secret_findings(cassette, config) if config is not None else [])
    n = len(cassette)
    if workers is None:
        workers = 2 if n >= min_entries and can_fork() else 1
    batch = SecretBatch(config)
    scan = None if config is None else batch.add_batch

    if workers < 2 or not cassette.is_file_backed or n < 2:
        findings = lint(cassette, each_batch=scan)
        return findings, batch.flush()
    start = max(1, min(n - 1, int(n * MAIN_SHARE)))
    if config is not None:
        build_prefilter()  # once, here: the worker forked below shares it
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    worker = ctx.Process(
        target=_worker, args=(send, receive, os.getpid(), cassette, start, config), daemon=True
    )
    try:
        _start_without_ctrl_c(worker)
        send.close()
        tail = _WorkerTail(start, receive)
        findings = lint(cassette, each_batch=scan, tail=tail)
        return findings, batch.flush() + tail.secrets
    finally:
        send.close()
        receive.close()
        if worker.pid is not None:  # started
            if worker.is_alive():
                worker.kill()
            worker.join()


def _start_without_ctrl_c(worker: multiprocessing.process.BaseProcess) -> None:
    """Fork ``worker`` with SIGINT blocked in it from its first instruction on: Ctrl-C
    (sent to the whole process group) is this process's to answer, and it stops the
    worker. A worker that could take it printed a traceback when it landed during the
    fork's own bookkeeping (``threading._after_fork``, seen in CI under load). A Ctrl-C
    that reaches this process while the fork is made waits until it is done."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        worker.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class _WorkerTail(LintTail):
    """The worker's part, received when ``lint`` reaches it."""

    def __init__(self, start: int, receive: Connection) -> None:
        super().__init__(start)
        self._receive = receive
        self.secrets: list[Finding] = []

    def findings(self) -> TailResult | None:
        try:
            status, payload = self._receive.recv()
        except (EOFError, OSError):  # the worker died: read its part here
            return None
        if status != "ok":
            return None
        result, self.secrets = payload
        return TailResult(*result)


def _worker(
    send: Connection,
    receive: Connection,
    parent: int,
    cassette: Cassette,
    start: int,
    config: SecretConfig | None,
) -> None:
    """In the forked child: the digests, per-entry lint findings and secret findings of
    the entries from ``start`` on, sent as ``("ok", (TailResult fields, secrets))``, or
    ``("failed", None)`` on any error (the parent then reads those entries itself).

    The child closes its copy of the pipe's read end, so a send to a parent that is gone
    fails instead of blocking for ever, and stops as soon as it sees it has been orphaned
    (the parent killed by SIGTERM or SIGKILL runs no cleanup)."""
    receive.close()
    try:
        batch = SecretBatch(config)

        def orphaned() -> None:
            if os.getppid() != parent:
                os._exit(1)  # orphaned: nobody will read the result

        scan = None if config is None else batch.add_batch
        result = tuple(pass_columns(cassette, start, None, scan, orphaned))
        message: tuple[str, Any] = ("ok", (result, batch.flush()))
    except BaseException:  # noqa: BLE001 - any failure hands the part back
        message = ("failed", None)
    try:
        send.send(message)
    except (BrokenPipeError, OSError):  # the parent is gone (Ctrl-C, an error)
        pass
    finally:
        send.close()
