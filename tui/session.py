"""What the app has open: one typed object that every screen reads.

The app owns one ``Session``: the cassettes (A alone, or A and B), the alignment the pair
screen shows, the diffs ``core`` computed for each alignment (computed once, cached), the
run selector's source, and room for the debug loop's results (replay, gate, pins,
re-record), which the loop's screens fill. Screens present what it holds; they never
compute a diff themselves.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cassette_tui.core.diff.align_choice import resolve_alignment
from cassette_tui.core.diff.result import DiffResult, diff_cassettes, diff_job
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.gcpause import no_cyclic_gc
from cassette_tui.core.format.jobs import CancelToken, JobGenerator

if TYPE_CHECKING:
    from cassette_tui.core.loop.agent import AgentCommand
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.loop.record import RecordResult
    from cassette_tui.core.loop.replay import ReplayResult
    from cassette_tui.core.why.bisect import BisectResult

    from .screens.select import RunSource

Alignment = Literal["seq", "key"]
ALIGNMENTS: tuple[Alignment, ...] = ("seq", "key")


@dataclass
class LoopResults:
    """The debug loop's results for the open run, filled by the loop's screens (``None``
    until that step has run): the last replay (``core.gate.ReplayResult``, a cancelled one
    too), the last gate (``GateResult``, partial when cancelled), the pinned entries and
    the re-recording (``core.loop.RecordResult``). ``pins``: the fixture files written
    from the app, in order; ``rerecord``: the last re-recording (``R``), run to its end
    or stopped; ``bisect``: the last bisect of A against B (``core.why.BisectResult``,
    a cancelled one too)."""

    replay: ReplayResult | None = None
    gate: GateResult | None = None
    pins: list[Path] = field(default_factory=list)
    rerecord: RecordResult | None = None
    bisect: BisectResult | None = None


class RunFolders:
    """Where the loop's jobs put their run files while the app is open, so runs can be
    opened side by side after the job ended: one temporary folder (``cassette-tui-*``,
    made on first use) with a folder per job in it. ``close`` removes it all; the app calls
    it when it ends (and ``tempfile``'s finalizer would at interpreter exit). Thread-safe."""

    #: seconds ``close`` keeps trying while a job still writes into its folder
    CLOSE_TRIES = (0.0, 0.1, 0.3, 0.6)

    def __init__(self) -> None:
        self._root: tempfile.TemporaryDirectory[str] | None = None
        self._lock = threading.Lock()

    @property
    def root(self) -> Path | None:
        """The temporary folder, or ``None`` before the first ``new`` (or after ``close``)."""
        root = self._root
        return Path(root.name) if root is not None else None

    def new(self, stage: str) -> Path:
        """A new empty folder for one job (``<stage>-*``), inside the app's temporary one."""
        with self._lock:
            if self._root is None:
                self._root = tempfile.TemporaryDirectory(
                    prefix="cassette-tui-", ignore_cleanup_errors=True
                )
            return Path(tempfile.mkdtemp(prefix=f"{stage}-", dir=self._root.name))

    def close(self) -> None:
        """Remove every job's folder (a job still stopping may write a last file: tried
        again for a moment). Never raises; a later ``new`` starts a new temporary folder."""
        with self._lock:
            root, self._root = self._root, None
        if root is None:
            return
        for pause in self.CLOSE_TRIES:
            time.sleep(pause)
            root.cleanup()
            if not os.path.exists(root.name):
                return


class Session:
    """The open cassettes and what ``core`` computed about them.

    Attributes:
        a: cassette A (the failing run), or the one cassette; ``None`` only while the run
            selector has not opened a run yet.
        b: cassette B (the passing run), or ``None`` for one cassette alone.
        align: the alignment the pair screen shows (``"seq"`` or ``"key"``); created with
            ``"auto"``, it is chosen per pair by ``resolve_align``.
        align_reason: why ``auto`` chose ``align``, or ``None``.
        run_source: the file of many runs the app started on, or ``None``.
        loop: the debug loop's results (see ``LoopResults``).
        run_folders: where the loop's jobs put their run files (``RunFolders``), removed
            when the app closes.
        agent: the agent command the loop runs (``--agent`` or the config), or ``None``.
        agent_problem: why there is no agent (how to configure one), or ``None``.
        config: the config file the app was started with (``--config``), handed to the
            loop's jobs, or ``None`` (the default lookup).

    Raises:
        ValueError: an unknown alignment, or neither a cassette nor runs to choose from.
    """

    def __init__(
        self,
        a: Cassette | None,
        b: Cassette | None = None,
        *,
        align: str = "seq",
        run_source: RunSource | None = None,
    ) -> None:
        if align not in (*ALIGNMENTS, "auto"):
            raise ValueError(f"align must be 'auto', 'seq' or 'key', not {align!r}")
        if a is None and run_source is None:
            raise ValueError("give a cassette, or runs to choose from")
        self.a = a
        self.b = b
        self.align: Alignment = "key" if align == "key" else "seq"
        #: ``align`` is still to be chosen for the open pair (``resolve_align``)
        self.align_auto = align == "auto"
        self._auto = align == "auto"
        #: why the alignment was chosen (``core.alignchoice``), once ``auto`` resolved
        self.align_reason: str | None = None
        self.run_source = run_source
        self.loop = LoopResults()
        #: the run files of the loop's jobs, until the app closes
        self.run_folders = RunFolders()
        self.agent: AgentCommand | None = None
        self.agent_problem: str | None = None
        self.config: str | None = None
        self._diffs: dict[Alignment, DiffResult] = {}
        self._lock = threading.Lock()

    def pair(self) -> tuple[Cassette, Cassette]:
        """A and B. Raises ``ValueError`` when one cassette alone is open."""
        if self.a is None or self.b is None:
            raise ValueError("two cassettes are not open")
        return self.a, self.b

    def open_runs(self, a: Cassette, b: Cassette | None) -> None:
        """Replace the open cassettes (a run picked in the selector); forgets the diffs and
        the loop's results, which were about the others."""
        with self._lock:
            self.a, self.b = a, b
            self._diffs = {}
            self.loop = LoopResults()
            self.align_auto = self._auto  # the new pair's story picks its alignment again
            self.align_reason = None

    def resolve_align(self) -> Alignment:
        """The alignment to show: with ``auto`` still pending, the one
        ``core.alignchoice.resolve_alignment`` picks for A and B (computing their keys:
        call it from a worker), kept in ``align`` with its reason; else ``align``. The
        three fields are set together under the session's lock, as ``set_align`` does."""
        if self.align_auto and self.a is not None and self.b is not None:
            align, reason = resolve_alignment(self.a, self.b, "auto")  # keys: outside the lock
            with self._lock:
                if self.align_auto:  # not settled by set_align meanwhile
                    self.align = "key" if align == "key" else "seq"
                    self.align_reason = reason
                    self.align_auto = False
        return self.align

    def set_align(self, align: Alignment) -> None:
        """Show ``align`` from now on, settled: the user chose it, or a stopped or failed
        diff fell back to it. Sets the three alignment fields together: ``align``,
        ``align_auto`` False (nothing left for ``resolve_align`` to choose), and
        ``align_reason`` kept only while ``align`` stays the one ``auto`` chose (another
        alignment has no reason). Raises ``ValueError`` for anything but ``"seq"`` or
        ``"key"``."""
        if align not in ALIGNMENTS:
            raise ValueError(f"align must be 'seq' or 'key', not {align!r}")
        with self._lock:
            if align != self.align:
                self.align_reason = None
            self.align = align
            self.align_auto = False

    def against(self, b: Cassette) -> Session:
        """A session of A against ``b`` (a re-recording of A) that shares this one's loop
        results, agent and config, so what the loop found stays in view on both."""
        # a session opened with "auto" lets the new pair pick its own alignment
        other = Session(self.a, b, align="auto" if self._auto else self.align)
        other.loop = self.loop
        other.run_folders = self.run_folders
        other.agent, other.agent_problem = self.agent, self.agent_problem
        other.config = self.config
        return other

    def cached_diff(self, align: Alignment) -> DiffResult | None:
        """The exact diff under ``align`` if it was computed already."""
        with self._lock:
            return self._diffs.get(align)

    def quick_diff(self, align: Alignment) -> DiffResult:
        """A first diff to show at once: the exact one when known, else by seq one whose
        statuses may come from the responses' bytes (``DiffResult.exact`` False; see
        ``core.diff.diff_cassettes``); by key, the exact one. Call it from a worker."""
        a, b = self.pair()
        cached = self.cached_diff(align)
        if cached is not None:
            return cached
        with no_cyclic_gc():
            result = diff_cassettes(a, b, align=align, exact=False)
        if result.exact:
            self._keep(a, b, align, result)
        elif self.align_reason is not None and align == self.align:
            result.align_reason = self.align_reason
        return result

    def diff_job(self, align: Alignment, token: CancelToken) -> JobGenerator[DiffResult]:
        """The exact diff under ``align`` as a ``core`` job (progress events, cancelled
        through ``token``), cached once computed. Run it in a worker."""
        a, b = self.pair()
        cached = self.cached_diff(align)
        if cached is not None:
            return cached
        with no_cyclic_gc():
            result = yield from diff_job(a, b, align, token)
        self._keep(a, b, align, result)
        return result

    def _keep(self, a: Cassette, b: Cassette, align: Alignment, result: DiffResult) -> None:
        if self.align_reason is not None and align == self.align and result.align_reason is None:
            result.align_reason = self.align_reason  # auto chose it: the header says so
        with self._lock:
            # a run picked in the selector meanwhile replaced A and B: not theirs
            if self.a is a and self.b is b:
                self._diffs.setdefault(align, result)
