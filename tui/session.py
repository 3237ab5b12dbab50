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
from cassette_tui.core.format.cassette import Cassette, load_job
from cassette_tui.core.format.gcpause import no_cyclic_gc
from cassette_tui.core.format.jobs import CancelToken, JobGenerator, Progress

if TYPE_CHECKING:
    from cassette_tui.core.loop.agent import AgentCommand
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.loop.record import RecordResult
    from cassette_tui.core.loop.replay import ReplayResult
    from cassette_tui.core.why.bisect import BisectResult

    from .screens.group import GroupSource
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


def _lines_estimate(path: Path, head: Cassette) -> int | None:
    """The lines of the file at ``path`` as its first lines (``head``) let guess them:
    its size times their lines per byte; ``None`` when that cannot be told."""
    spans = head.line_spans()
    if not spans or not len(head):
        return None
    offsets, lengths = spans
    read = max(o + n for o, n in zip(offsets, lengths, strict=True))  # a few hundred
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return max(len(head), round(len(head) * size / read)) if read else None


def _whole_file(path: Path, head: Cassette) -> bool:
    """Whether ``head`` holds every line of the file at ``path``: nothing but whitespace
    after its last line (an unreadable file: not known, so not whole)."""
    spans = head.line_spans()
    if spans is None:
        return True  # held in memory: whole
    offsets, lengths = spans
    end = max((o + n for o, n in zip(offsets, lengths, strict=True)), default=0)
    try:
        with path.open("rb") as fh:
            fh.seek(end)
            rest = fh.read(1 << 16)
            return not rest.strip() and not fh.read(1)
    except OSError:
        return False


def _as_stage(job: JobGenerator[Cassette], stage: str) -> JobGenerator[Cassette]:
    """``job`` with its progress events renamed ``stage`` (``"reading A"``)."""
    try:
        while True:
            event = next(job)
            yield Progress(stage, event.done, event.total, event.unit, event.message)
    except StopIteration as stop:
        return stop.value
    finally:
        job.close()  # stopped early: the file and its reader thread are let go now


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
        group_source: the runs grouped by where they part the app started on (their
            tree), or ``None``.
        loop: the debug loop's results (see ``LoopResults``).
        run_folders: where the loop's jobs put their run files (``RunFolders``), removed
            when the app closes.
        agent: the agent command the loop runs (``--agent`` or the config), or ``None``.
        agent_problem: why there is no agent (how to configure one), or ``None``.
        config: the config file the app was started with (``--config``), handed to the
            loop's jobs, or ``None`` (the default lookup).
        reading: while A and B are the first lines of two large files (``load_head``),
            the files still to be read whole (``read_job``); ``None`` once they are, and
            for cassettes given whole.

    Raises:
        ValueError: an unknown alignment, or neither a cassette nor runs to choose from
            nor runs grouped.
    """

    def __init__(
        self,
        a: Cassette | None,
        b: Cassette | None = None,
        *,
        align: str = "seq",
        run_source: RunSource | None = None,
        group_source: GroupSource | None = None,
        reading: tuple[Path, Path] | None = None,
    ) -> None:
        if align not in (*ALIGNMENTS, "auto"):
            raise ValueError(f"align must be 'auto', 'seq' or 'key', not {align!r}")
        if a is None and run_source is None and group_source is None:
            raise ValueError("give a cassette, or runs to choose from or grouped")
        self.a = a
        self.b = b
        self.align: Alignment = "key" if align == "key" else "seq"
        #: ``align`` is still to be chosen for the open pair (``resolve_align``)
        self.align_auto = align == "auto"
        self._auto = align == "auto"
        #: why the alignment was chosen (``core.alignchoice``), once ``auto`` resolved
        self.align_reason: str | None = None
        self.run_source = run_source
        self.group_source = group_source
        self.loop = LoopResults()
        #: the run files of the loop's jobs, until the app closes
        self.run_folders = RunFolders()
        self.agent: AgentCommand | None = None
        self.agent_problem: str | None = None
        self.config: str | None = None
        self._diffs: dict[Alignment, DiffResult] = {}
        self._lock = threading.Lock()
        if reading is not None and (a is None or b is None):
            raise ValueError("reading two files needs their first lines as A and B")
        self.reading = reading
        self._heads_cut: tuple[Cassette, Cassette, tuple[bool, bool]] | None = None

    def read_job(self, token: CancelToken) -> JobGenerator[None]:
        """Read the two files of ``reading`` whole, A then B, as a ``core`` job: progress
        ``Progress(stage="reading A", unit="lines")`` (the total estimated from the bytes
        read so far), each file read once with its keys (``load(keys=True)``: what the
        diff needs, no second read). Then A and B are the whole cassettes, under the rules
        of their first lines, and ``reading`` is ``None``. Run it in a worker.

        Raises:
            Cancelled: ``token`` was cancelled (A and B stay the first lines).
            CassetteFormatError: a bad line (file, line, field).
        """
        reading, a, b = self.reading, self.a, self.b
        if reading is None or a is None or b is None:
            return
        whole: list[Cassette] = []
        for side, path, head in (("A", reading[0], a), ("B", reading[1], b)):
            # at once, before the first chunk is read: how many lines the first ones say
            yield self.reading_start(side)
            job = load_job(path, rules=head.rules, cancel=token, keys=True, unit="lines")
            whole.append((yield from _as_stage(job, f"reading {side}")))
        with self._lock:
            if self.a is a and self.b is b:
                self.a, self.b = whole
                self.reading = None
                self._diffs = {}

    def first_lines(self) -> tuple[Cassette, Cassette]:
        """A and B for the rows shown while the files are read: their first lines, cut to
        what both hold (a step past the shorter head is not known to be one-sided yet,
        unless that head is its whole file). Raises ``ValueError`` without two cassettes."""
        a, b = self.pair()
        reading = self.reading
        if reading is None:
            return a, b
        known = [len(head) for head, path in ((a, reading[0]), (b, reading[1]))
                 if not _whole_file(path, head)]  # fmt: skip
        if not known:
            return a, b
        return a.first(min(known)), b.first(min(known))

    def heads_cut(self) -> tuple[bool, bool]:
        """For A and B, whether the cassette open is its file's first lines only (the
        file being read, or its reading stopped); a head that is its whole file is not."""
        reading, a, b = self.reading, self.a, self.b
        if reading is None or a is None or b is None:
            return False, False
        cached = self._heads_cut
        if cached is None or cached[0] is not a or cached[1] is not b:
            # once per pair of heads: the header asks at every progress step
            cut = (not _whole_file(reading[0], a), not _whole_file(reading[1], b))
            cached = self._heads_cut = (a, b, cut)
        return cached[2]

    def reading_start(self, side: str = "A") -> Progress:
        """The progress of ``read_job`` before it reads side ``side`` (``"A"`` or ``"B"``):
        no line yet, of the lines its first lines let guess (``None``: not reading)."""
        reading, head = self.reading, self.a if side == "A" else self.b
        if reading is None or head is None:
            return Progress(f"reading {side}", 0, None, "lines")
        path = reading[0] if side == "A" else reading[1]
        return Progress(f"reading {side}", 0, _lines_estimate(path, head), "lines", path.name)

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
