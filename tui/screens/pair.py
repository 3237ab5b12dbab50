"""The main screen: two cassettes side by side, step-aligned by seq or by call key."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from cassette_tui.core.diff.model import Row
from cassette_tui.core.diff.result import DiffResult, diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.findings import Finding
from cassette_tui.core.format.jobs import Cancelled, CancelToken, Progress, run_job
from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Static
from textual.worker import get_current_worker

from ..bindings import PAIR
from ..messages import DiagnosisReady, DiffReady, JobCancelled, JobProgress, WorkerFailed
from ..session import Alignment, Session
from ..text.detail import Limits, pair_detail, pair_title
from ..text.loop import loop_bar, loop_stages
from ..text.progress import progress_count, reading_line
from ..text.rows import SEQ_WIDTH, PairRows
from ..text.safe import describe_error, printable
from ..text.summary import file_label, loading_summary, pair_summary
from .swap import SwapKeysScreen

#: seconds the reading of two large files waits for the first rows to be painted
PAINT_WAIT_S = 1.0

#: what the header says while an exact diff runs
_STAGES = {"outcomes": "reading every response", "align": "aligning"}


class PairScreen(SwapKeysScreen):
    """A on the left, B on the right, the status mark between, the detail below.

    The first rows come from ``Session.quick_diff`` (by seq, statuses may come from the
    responses' bytes when many differ); the exact diff then runs as a ``core`` job whose
    progress shows in the header, and escape stops it (the rows shown stay)."""

    BINDINGS: ClassVar[list[BindingType]] = list(PAIR)
    KEYMAP_NAME = "main screen"
    result: DiffResult | None = None

    def __init__(self, session: Session | None = None) -> None:
        super().__init__(session)
        self._token: CancelToken | None = None
        #: the diff escape stopped before any row was shown (its rows by seq are coming)
        self._stopped: str | None = None
        #: the rows of the files' first lines shown while they are read whole, or None
        self._preview: DiffResult | None = None
        #: set once those rows are painted (the reading waits for it)
        self._painted: threading.Event | None = None
        #: the loop bar was last built with A read whole (its Record count is the run's)
        self._bar_read = True

    def compose_bars(self) -> ComposeResult:
        yield Static(self._loop_bar_text(), id="loopbar")

    def _loop_bar_text(self) -> Text:
        self._bar_read = self.session.reading is None  # Record's count is the whole run's
        width = (self.size.width or self.app.size.width) - 2  # the bar's padding
        return loop_bar(loop_stages(self.session, self.result), width)

    def refresh_loop_bar(self) -> None:
        """Say again what each stage of the loop found (after a diff, a pin...)."""
        self.query_one("#loopbar", Static).update(self._loop_bar_text())

    def on_screen_resume(self) -> None:
        self.refresh_loop_bar()  # a loop screen above may have stored a result

    def initial_summary(self) -> Text:
        session = self.session
        how = "" if session.align_auto else f" by {session.align}"
        return loading_summary(session.a, session.b, f"diffing{how}…")

    def column_titles(self) -> Text:
        # the step list: a pointer column, side A, a 3-cell mark, side B, a scrollbar
        width = (self.size.width or self.app.size.width) - 1
        side = max(10, (width - 1 - 3) // 2)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        cells = self.model.seq_width if isinstance(self.model, PairRows) else SEQ_WIDTH
        cassette_a, cassette_b = self.session.pair()
        a = f"{'seq':>{cells}}  A {file_label(cassette_a)}"
        b = f"{'seq':>{cells}}  B {file_label(cassette_b)}"
        text.append(f" {a[:side]:<{side}}", style="bold")
        text.append("   ")
        text.append(b[:side], style="bold")
        if self.search_term:
            return self.search_title()
        return text

    def on_mount(self) -> None:
        super().on_mount()
        self.compute_diff(self.session.align, None)

    def on_resize(self) -> None:
        self.refresh_columns()
        self.refresh_loop_bar()

    # -- the diff: a quick one, then the exact one as a core job --------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="diff", description="diff")
    def compute_diff(self, align: Alignment, keep: tuple[int | None, int | None] | None) -> None:
        """The rows to show first: the exact diff when it is cheap or cached, else by seq
        statuses from the bytes; by key, the exact diff as a job (escape stops it)."""
        worker = get_current_worker()
        session = self.session
        try:
            if session.reading is not None:
                if not self._read_files(worker):
                    return
                align = session.align  # as asked for while the files were read
            if session.align_auto:
                align = session.resolve_align()
            if align == "key" and session.cached_diff(align) is None:
                token = self._token = CancelToken()
                result = run_job(session.diff_job(align, token), self._progress_sink(token))
            else:
                result = session.quick_diff(align)
            rows = PairRows(result)
        except Cancelled:
            self.post_message(JobCancelled(f"diff by {align}"))
            return
        except Exception as exc:  # noqa: BLE001 - shown in the header and as a notification
            self.post_message(WorkerFailed(f"diff by {align}", exc, self.show_diff_failure))
            return
        cursor = _row_of(result.rows, keep) if keep is not None else result.first_divergence or 0
        if not worker.is_cancelled:
            self.post_message(DiffReady(result, rows, cursor))

    def _read_files(self, worker: Any) -> bool:
        """In the diff's worker, while A and B are the first lines of two large files: post
        the rows of those lines at once (by seq, statuses from the bytes), then read the
        files whole with progress in the header (``Session.read_job``; escape stops it,
        the first rows stay). True once A and B are whole."""
        session = self.session
        a, b = session.first_lines()
        token = self._token = CancelToken()
        # statuses from the keys and the responses' bytes alone: no response is parsed
        preview = diff_cassettes(a, b, "seq", exact=False, bytes_only=True)
        preview.exact = False  # a first look: no diagnosis, no refinement of these rows
        cursor = preview.first_divergence or 0
        painted = self._painted = threading.Event()
        if not worker.is_cancelled:
            # the header says at once how far the reading is (it starts once painted)
            note = f"{reading_line(session.reading_start())} · escape stops"
            message = DiffReady(preview, PairRows(preview), cursor, preview=True, note=note)
            self.post_message(message)
        # the rows are painted before the reading competes with the UI for the
        # interpreter (a read holds it most of the time: the first paint waited for it)
        deadline = time.monotonic() + PAINT_WAIT_S
        while not painted.wait(0.01) and time.monotonic() < deadline:
            if token.cancelled or worker.is_cancelled:
                break
        try:
            run_job(session.read_job(token), self._progress_sink(token))
        except Cancelled:
            self.post_message(JobCancelled("reading the files"))
            return False
        except Exception as exc:  # noqa: BLE001 - a bad line ends the app (report_failure)
            self.post_message(WorkerFailed("reading the files", exc, self.show_diff_failure))
            return False
        return not worker.is_cancelled

    @work(thread=True, exclusive=True, exit_on_error=False, group="exact", description="diff")
    def refine(self, align: Alignment) -> None:
        """The exact diff after statuses from the bytes, as a job; escape stops it."""
        token = self._token = CancelToken()
        try:
            result = run_job(self.session.diff_job(align, token), self._progress_sink(token))
            rows = PairRows(result)
        except Cancelled:
            self.post_message(JobCancelled("exact diff"))
            return
        except Exception as exc:  # noqa: BLE001 - shown in the header and as a notification
            self.post_message(WorkerFailed(f"diff by {align}", exc, self.show_diff_failure))
            return
        self.post_message(DiffReady(result, rows, result.first_divergence or 0))

    def _progress_sink(self, token: CancelToken) -> Callable[[Progress], None]:
        """Post a job's progress to the header until its token is cancelled (a stopped job
        runs on to its next check: its progress must not cover the rows shown since)."""

        def sink(progress: Progress) -> None:
            if not token.cancelled:
                self.post_message(JobProgress(progress))

        return sink

    def cancel_job(self) -> bool:
        token = self._token
        if token is None or token.cancelled:
            return self.cancel_swaps()
        token.cancel()
        if self.result is None:
            # nothing shown yet: the rows by seq now, not once the job sees its token (the
            # key diff's alignment pass does not look at it; what it returns is ignored)
            self._token = None
            self._rows_by_seq(f"diff by {self.session.align}")
        return True

    @on(JobProgress)
    def _job_progress(self, message: JobProgress) -> None:
        progress = message.progress
        if progress.stage.startswith("reading "):
            what = reading_line(progress)
        else:
            stage = _STAGES.get(progress.stage, progress.stage)
            what = f"{stage} ({progress_count(progress)})"
            if progress.message:
                what += f" {printable(progress.message)}"
        what += " · escape stops"
        self.show_summary(self._loading_or_rows(what))
        if not self._bar_read and self.session.reading is None:
            self.refresh_loop_bar()  # the files are read: Record counts the whole run

    def _loading_or_rows(self, what: str) -> Text:
        """The header while a job runs: the rows' header with ``what`` on its last line
        when rows are shown, else the loading header."""
        if self.result is not None and (
            self.result.align == self.session.align or self.session.reading is not None
        ):
            first_lines = self.session.heads_cut() if self.result is self._preview else False
            return pair_summary(
                self.result, with_findings=False, note=what, first_lines=first_lines
            )
        session = self.session
        return loading_summary(session.a, session.b, f"diffing by {session.align}: {what}")

    @on(JobCancelled)
    def _job_cancelled(self, message: JobCancelled) -> None:
        token = self._token
        if token is None or not token.cancelled:
            return  # stopped by a realignment, not by escape: the new diff is on its way
        self._token = None
        if self.session.reading is not None and self.result is not None:
            # the files were not read whole: the first lines' rows stay, a reads again
            self.app.notify(f"{message.stage} stopped", markup=False, timeout=3)
            rows = len(self.result.rows)
            words = f"reading stopped: the rows of the first {rows:,} lines (a reads again)"
            cut = self.session.heads_cut()
            summary = pair_summary(self.result, with_findings=False, note=words, first_lines=cut)
            self.show_summary(summary)
            self.steps.loading = False
            return
        if self.result is not None:
            self.app.notify(f"{message.stage} stopped", markup=False, timeout=3)
            self.session.set_align(self._align_of(self.result))
            note = None
            if not self.result.exact:
                note = f"statuses from the bytes ({message.stage} stopped; a realigns)"
            self.show_summary(pair_summary(self.result, with_findings=False, note=note))
            self.steps.loading = False
            if self.result.exact:
                self.diagnose(self.result)
        else:
            self._rows_by_seq(message.stage)

    def _rows_by_seq(self, stage: str) -> None:
        """After escape stopped the diff by key before any row was shown: the rows by seq,
        which the bytes give at once (never an empty screen), and no new job; ``a`` aligns
        by key again (at once if that diff ended anyway: the session keeps it)."""
        self._stopped = stage
        session = self.session
        session.set_align("seq")
        words = f"{stage} stopped: the rows by seq (a aligns by key again)"
        self.app.notify(words, markup=False, timeout=5)
        self.show_summary(loading_summary(session.a, session.b, f"{stage} stopped; by seq…"))
        self.compute_diff("seq", None)

    @staticmethod
    def _align_of(result: DiffResult) -> Alignment:
        return "key" if result.align == "key" else "seq"

    @on(DiffReady)
    def _diff_ready(self, message: DiffReady) -> None:
        result = message.result
        if message.preview:
            # the first lines' rows while the files are read: shown, nothing more
            self.result = result
            self._preview = result
            note = message.note or "reading the files…"
            self.show_summary(
                pair_summary(
                    result, with_findings=False, note=note, first_lines=self.session.heads_cut()
                )
            )
            self.show_rows(message.rows, message.cursor)
            painted = self._painted
            if painted is not None:
                self.call_after_refresh(painted.set)
            return
        if result.align != self.session.align:
            return  # the other alignment was asked for meanwhile
        previous = self.result
        self.result = result
        self.refresh_loop_bar()
        cursor = message.cursor
        if previous is not None and previous is self._preview:
            # the whole diff replaces the first lines' rows: the cursor stays where the
            # user put it (by seq, the same row), else goes to the first divergence
            self._preview = None
            moved = self.steps.cursor != (previous.first_divergence or 0)
            if moved and result.align == "seq" and self.steps.cursor < len(result.rows):
                cursor = self.steps.cursor
        elif previous is not None and not previous.exact and previous.align == result.align:
            # the exact statuses replace the ones from the bytes: the cursor stays where the
            # user put it, or goes to the exact first divergence if it never moved
            moved = self.steps.cursor != (previous.first_divergence or 0)
            cursor = self.steps.cursor if moved else cursor
        stopped, self._stopped = self._stopped, None
        if result.exact:
            self._token = None
            self.show_summary(pair_summary(result, with_findings=False))
            self.show_rows(message.rows, cursor)
            self.app.keep_loaded(len(self.model))
            self.diagnose(result)
        elif stopped is not None:
            # the rows after a stopped diff: the bytes' word, and no job the user just stopped
            note = f"statuses from the bytes ({stopped} stopped; a realigns)"
            self.show_summary(pair_summary(result, with_findings=False, note=note))
            self.show_rows(message.rows, cursor)
        else:
            note = "statuses from the bytes; reading every response · escape stops"
            self.show_summary(pair_summary(result, with_findings=False, note=note))
            self.show_rows(message.rows, cursor)
            # once the rows are painted: the exact diff would slow the first paint down
            self.call_after_refresh(self.refine, self._align_of(result))

    def show_diff_failure(self, failure: WorkerFailed) -> None:
        """Say in the header why the diff failed, and show the rows of before, if any."""
        self._token = None
        # the engine could not align the runs this way: say so, and keep the rows shown
        # before (the other alignment), or none, instead of "diffing…" forever
        if self.result is not None:
            self.session.set_align(self._align_of(self.result))
        text = loading_summary(self.session.a, self.session.b, "")
        text.append(
            printable(f"{failure.what} failed: {describe_error(failure.error)}"), style="bold"
        )
        self.show_summary(text)
        self.steps.loading = False

    @work(
        thread=True, exclusive=True, exit_on_error=False, group="diagnose", description="diagnosis"
    )
    def diagnose(self, result: DiffResult) -> None:
        # the diagnosis can take longer than the rows: the header says so until it lands
        _, error = diagnosis(result)
        self.post_message(
            DiagnosisReady(result, pair_summary(result, with_findings=True, findings_error=error))
        )

    @on(DiagnosisReady)
    def _diagnosis_ready(self, message: DiagnosisReady) -> None:
        if message.result is self.result:
            self.show_summary(message.summary)

    # -- detail ---------------------------------------------------------------------------
    def build_detail(self, index: int, limits: Limits, styles: Any) -> RenderableType:
        result = self.result
        assert result is not None
        drift = result.drift(index)
        detail = pair_detail(result, index, drift, limits, styles, diagnosis(result)[0])
        swap = self.swap_line(index)  # s on this row: its pass rate in words, first
        return detail if swap is None else Group(swap, detail)

    def detail_placeholder(self, index: int) -> RenderableType:
        result = self.result
        assert result is not None
        row = result.rows[index]
        return pair_title(row, result.b.tool(row.b) if row.b is not None else None)

    # -- actions --------------------------------------------------------------------------
    def action_toggle_align(self) -> None:
        if self.result is None:
            return
        session = self.session
        token = self._token
        if session.reading is not None and token is not None and not token.cancelled:
            # the files are being read: the alignment asked for is the one shown after
            align_next: Alignment = "key" if session.align == "seq" else "seq"
            session.set_align(align_next)
            self.app.notify(f"by {align_next} once the files are read", markup=False, timeout=3)
            return
        if session.reading is not None:
            # the reading was stopped: a reads the files again, in the alignment asked for
            self.steps.loading = True
            self.compute_diff(session.align, None)
            return
        token, self._token = self._token, None
        if token is not None:
            token.cancel()  # the job of the other alignment is not wanted any more
        align: Alignment = "key" if self.session.align == "seq" else "seq"
        self.session.set_align(align)  # the user chose
        row = self.result.rows[self.steps.cursor] if len(self.model) else None
        keep = (row.a, row.b) if row is not None else None
        self.steps.loading = True
        self.show_summary(loading_summary(self.session.a, self.session.b, f"diffing by {align}…"))
        self.compute_diff(align, keep)

    def action_first_divergence(self) -> None:
        if self.result is not None and self.result.first_divergence is not None:
            self.steps.cursor = self.result.first_divergence

    def pin_target(self) -> tuple[Cassette, int] | None:
        """The selected row's entry: A's, else B's."""
        result = self.result
        if result is None or not len(self.model):
            return None
        row = result.rows[self.steps.cursor]
        a, b = self.session.pair()
        cassette, index = (a, row.a) if row.a is not None else (b, row.b)
        return None if index is None else (cassette, index)

    def loop_result(self) -> DiffResult | None:
        return self.result


def diagnosis(result: DiffResult) -> tuple[list[Finding], str | None]:
    """The result's findings, or ``[]`` and why the engine could not give them (the rows
    and the drift are still worth showing when the diagnosis fails). Only an exact
    result is diagnosed."""
    if not result.exact:
        return [], None
    try:
        return list(result.findings), None
    except Exception as exc:  # noqa: BLE001 - shown to the user, never swallowed silently
        return [], f"diagnosis failed: {describe_error(exc)}"


def _row_of(rows: Sequence[Row], keep: tuple[int | None, int | None]) -> int:
    """The row that holds A's entry ``keep[0]`` (else B's ``keep[1]``) after realigning."""
    a, b = keep
    for side, wanted in (("a", a), ("b", b)):
        if wanted is None:
            continue
        for index, row in enumerate(rows):
            if getattr(row, side) == wanted:
                return index
    return 0
