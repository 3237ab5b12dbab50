"""Engine work as jobs: progress events out, cancellation in.

A job is a generator that yields :class:`Progress` events and returns its result. The same
job runs under the CLI (a progress bar on stderr when it is a terminal) and under the app
(a worker that posts each event as a Textual message): neither knows which. Cancellation is
cooperative: the job checks its :class:`CancelToken` between units of work, and cleanups
registered with :meth:`CancelToken.on_cancel` (killing a child process group, say) run the
moment ``cancel()`` is called, from whichever thread calls it.

Shapes: ``Progress(stage="load", done=120, total=1000, unit="entries")``; ``total`` is
``None`` when unknown. A job that can keep a partial result returns it when cancelled (and
says so in the result); one that cannot raises :class:`Cancelled`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

from .errors import CassetteError

T = TypeVar("T")

#: a job: yields progress, returns its result
JobGenerator = Generator["Progress", None, T]
#: what a runner calls with each event
ProgressSink = Callable[["Progress"], None]


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress event.

    Attributes:
        stage: what is being done, in a word or two (``"load"``, ``"diff"``, ``"replay"``).
        done: units finished so far (>= 0).
        total: units in all, or ``None`` when not known in advance.
        unit: what a unit is (``"entries"``, ``"rows"``, ``"files"``, ``"runs"``, ``"bytes"``).
        message: a short line for a person (a file name, a tally such as ``"3 ✓ 1 ✗"``).
        item: the unit just finished, when the job hands it out (a loop job: the
            ``loop.RunResult`` of the run that ended), else ``None``.
    """

    stage: str
    done: int
    total: int | None = None
    unit: str = ""
    message: str = ""
    item: object | None = None

    @property
    def fraction(self) -> float | None:
        """``done / total`` in [0, 1], or ``None`` when the total is unknown or 0."""
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class Cancelled(CassetteError):
    """The job was cancelled before it could produce a result."""


class CancelToken:
    """A flag a job polls, plus cleanups that run as soon as it is set. Thread-safe."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._cleanups: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Set the flag and run every registered cleanup once (errors in one do not stop
        the others)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            cleanups, self._cleanups = self._cleanups, []
        for cleanup in reversed(cleanups):
            # a failed cleanup must not keep the others from running
            with contextlib.suppress(Exception):
                cleanup()

    def on_cancel(self, cleanup: Callable[[], None]) -> Callable[[], None]:
        """Run ``cleanup`` when cancelled (at once if already cancelled). Returns a function
        that unregisters it (call it when the resource is gone)."""
        with self._lock:
            if not self._event.is_set():
                self._cleanups.append(cleanup)

                def unregister() -> None:
                    with self._lock:
                        if cleanup in self._cleanups:
                            self._cleanups.remove(cleanup)

                return unregister
        cleanup()
        return lambda: None

    def raise_if_cancelled(self) -> None:
        """Raise :class:`Cancelled` when the flag is set."""
        if self._event.is_set():
            raise Cancelled("cancelled")

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds or until cancelled; ``True`` when cancelled."""
        return self._event.wait(timeout)


def run_job(job: JobGenerator[T], on_progress: ProgressSink | None = None) -> T:
    """Drive ``job`` to its end, passing each event to ``on_progress``; return its result.

    Raises whatever the job raises (``Cancelled`` included). When ``on_progress`` raises
    (a UI that wants to stop, ``KeyboardInterrupt``), the job is closed first, so its
    ``finally`` blocks release what it holds."""
    try:
        while True:
            event = next(job)
            if on_progress is not None:
                on_progress(event)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    except BaseException:
        job.close()
        raise
