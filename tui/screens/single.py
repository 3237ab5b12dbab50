"""One cassette alone: its steps, repeated keys, errors, lint and secret findings, and the
debug loop on it (replay, gate, re-record, pin: ``loop_keys.py``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any, ClassVar

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.findings import Finding
from cassette_tui.core.format.jobs import Cancelled, CancelToken, Progress, run_job
from cassette_tui.core.format.outcome import outcome_index_job
from cassette_tui.core.scan.lint import lint
from cassette_tui.core.scan.redact_config import app_secret_config
from cassette_tui.core.scan.secrets import secret_scan_job
from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.binding import BindingType

from ..bindings import SINGLE
from ..messages import JobCancelled, JobProgress, LintReady, RowsReady, WorkerFailed
from ..text.detail import Limits, single_detail
from ..text.rows import SEQ_WIDTH, SingleRows, entry_is_error
from ..text.safe import describe_error, plain
from ..text.summary import file_label, single_summary
from .loop_keys import LoopKeysScreen

#: progress messages per lint pass at most (one per 500 entries of a 100k-entry file)
PROGRESS_STEPS = 200
#: the lint's passes as the header names them
_LINT_STAGES = {"secrets": "scanning for secrets", "outcomes": "reading the outcomes"}


class SingleScreen(LoopKeysScreen):
    """The steps of one cassette, marked with what ``core.lint`` found."""

    BINDINGS: ClassVar[list[BindingType]] = list(SINGLE)
    KEYMAP_NAME = "single-file screen"

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[Finding] | None = None
        self.by_seq: dict[int, list[Finding]] = {}
        #: the lint's token: escape stops it (a large file's passes take seconds)
        self._lint_token: CancelToken | None = None
        self._lint_stopped = False

    @property
    def cassette(self) -> Cassette:
        """The one cassette shown."""
        cassette = self.session.a
        assert cassette is not None
        return cassette

    def initial_summary(self) -> Text:
        return single_summary(self.cassette, None)

    def column_titles(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.search_term:
            return self.search_title()
        cells = self.model.seq_width if isinstance(self.model, SingleRows) else SEQ_WIDTH
        text.append(f" {'seq':>{cells}}  {file_label(self.cassette)}", style="bold")
        return text

    def on_mount(self) -> None:
        super().on_mount()
        self.run_lint(self.cassette)

    @work(thread=True, exclusive=True, exit_on_error=False, group="lint", description="lint")
    def run_lint(self, cassette: Cassette) -> None:
        """The rows at once (unmarked), then the lint findings and the rows worth a jump
        (a finding, or an error outcome from ``core.outcome``). A large file takes
        seconds per pass: each pass says how far it is in the header (``JobProgress``),
        and escape stops them (``cancel_job``; the rows stay, unmarked)."""
        token = self._lint_token = CancelToken()
        n = len(cassette)
        every = max(1, n // PROGRESS_STEPS)

        def each(i: int, _entry: object, _raw: bytes | None) -> None:
            if i % every == 0:
                token.raise_if_cancelled()
                self.post_message(JobProgress(Progress("linting", i, n, "entries")))

        def sink(progress: Progress) -> None:
            token.raise_if_cancelled()
            self.post_message(JobProgress(progress))

        try:
            self.post_message(RowsReady(cassette, SingleRows(cassette, {})))
            findings = lint(cassette, each)
            findings += run_job(secret_scan_job(cassette, app_secret_config()), sink)
            errors = _errors(cassette, token, sink)
        except Cancelled:
            self.post_message(JobCancelled("lint"))
            return
        except Exception as exc:  # noqa: BLE001 - shown in the header and as a notification
            self.post_message(WorkerFailed("lint", exc, self.show_lint_failure))
            return
        by_seq = _by_seq(findings)
        notable = [i for i in range(len(cassette)) if errors[i] or cassette.seq(i) in by_seq]
        self.post_message(LintReady(cassette, findings, notable))

    @on(JobProgress)
    def _lint_progress(self, message: JobProgress) -> None:
        if self.findings is not None:
            return  # ended (or stopped) meanwhile
        p = message.progress
        stage = _LINT_STAGES.get(p.stage, p.stage)
        done = f"{p.done:,}" if p.total is None else f"{p.done:,} / {p.total:,}"
        note = f"{stage}: {done} {p.unit or ''}".rstrip() + " · escape stops"
        self.show_summary(single_summary(self.cassette, None, progress=note))

    def cancel_job(self) -> bool:
        token = self._lint_token
        if token is None or token.cancelled or self.findings is not None:
            return False
        token.cancel()
        return True

    @on(JobCancelled)
    def _lint_cancelled(self, message: JobCancelled) -> None:
        self.findings = []  # none to go to: n says the lint was stopped
        self._lint_stopped = True
        self.app.notify("lint stopped", markup=False, timeout=3)
        words = "lint stopped (escape): no findings marked; the rows stay as read"
        self.show_summary(single_summary(self.cassette, None, words))

    @on(RowsReady)
    def _rows_ready(self, message: RowsReady) -> None:
        if message.cassette is self.cassette and self.findings is None:
            self.show_rows(message.rows, self.steps.cursor)

    @on(LintReady)
    def _lint_ready(self, message: LintReady) -> None:
        if message.cassette is not self.cassette:
            return
        findings = message.findings
        self.findings, self.by_seq = findings, _by_seq(findings)
        self.show_summary(single_summary(self.cassette, findings))
        model = SingleRows(self.cassette, self.by_seq, notable=message.notable)
        self.show_rows(model, self.steps.cursor)
        self.app.keep_loaded(len(self.model))

    def show_lint_failure(self, failure: WorkerFailed) -> None:
        """Say in the header why the lint failed; the rows stay, unmarked."""
        self.findings = []  # none to go to: n says so, not "still reading"
        error = f"lint failed: {describe_error(failure.error)}"
        self.show_summary(single_summary(self.cassette, None, error))
        self.show_rows(SingleRows(self.cassette, {}), self.steps.cursor)

    def build_detail(self, index: int, limits: Limits, styles: Any) -> RenderableType:
        cassette = self.cassette
        return single_detail(
            cassette, index, self.by_seq.get(cassette.seq(index), []), limits, styles
        )

    def detail_placeholder(self, index: int) -> RenderableType:
        return plain(f"seq {self.cassette.seq(index)}", "bold")

    def pin_target(self) -> tuple[Cassette, int] | None:
        """The selected entry."""
        return (self.cassette, self.steps.cursor) if len(self.model) else None

    def no_more(self, direction: int) -> str:
        if self._lint_stopped:
            return "lint stopped: no findings to step through"
        if self.findings is None:
            return "still reading the entries: n/N stop on findings and errors once it is done"
        return "no more findings below" if direction > 0 else "no findings above"


def _errors(cassette: Cassette, token: CancelToken, sink: Callable[[Progress], None]) -> list[bool]:
    """Each entry's outcome is an error (``core.outcome``); an entry the engine cannot
    read counts as one, so that n/N stop on it (its row says why).

    Raises:
        Cancelled: ``token`` was cancelled.
    """
    try:
        return run_job(outcome_index_job(cassette, token), sink).errors
    except Cancelled:
        raise
    except Exception:  # noqa: BLE001 - a bad entry: ask entry by entry
        return [entry_is_error(cassette, i) for i in range(len(cassette))]


def _by_seq(findings: list[Finding]) -> dict[int, list[Finding]]:
    by_seq: dict[int, list[Finding]] = defaultdict(list)
    for finding in findings:
        # a repeated key is marked on every recording of it, not only the first
        seqs = finding.seqs if isinstance(finding.seqs, tuple) else ()
        for seq in dict.fromkeys((*seqs, finding.seq)):
            if seq is not None:
                by_seq[seq].append(finding)
    return dict(by_seq)
