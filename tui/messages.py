"""The messages workers post to their screen: one typed message per result, one
message for every failure (``WorkerFailed``).

Slow work runs in thread workers (Textual's ``@work(thread=True)``); a worker hands its
result back by posting one of these (``post_message`` is thread-safe and never blocks, so
``q`` pressed while a worker runs still exits at once), and the screen handles each type
with ``@on(...)``. Each message carries what its handler needs to tell a stale result (a
row the cursor has left, a diff another alignment replaced) from the current one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.format.cassette import Cassette
    from cassette_tui.core.format.findings import Finding
    from cassette_tui.core.format.jobs import Progress
    from cassette_tui.core.loop.gate import GateResult
    from cassette_tui.core.loop.record import RecordResult
    from cassette_tui.core.loop.replay import ReplayResult
    from cassette_tui.core.why.bisect import BisectResult
    from rich.console import RenderableType
    from rich.text import Text

    from .text.rows import PairRows, RowModel, SingleRows


class WorkerFailed(Message):
    """A worker's job failed: ``what`` failed (a few words shown to the user: "lint",
    "diff by key", "cannot open the run") with ``error``. The one failure message: the
    screen's one handler (``screens/base.py``) notifies the user, then calls ``show``, when
    given, with this message on the UI thread, to say it where the result was awaited
    (the header, the detail pane that waited, the job's panel; ``show`` tells a stale
    failure, a row the cursor has left, from the current one). Not Textual's
    ``textual.worker.WorkerFailed`` exception, which would end the app: these workers run
    with ``exit_on_error=False`` and catch what they report."""

    def __init__(
        self,
        what: str,
        error: BaseException,
        show: Callable[[WorkerFailed], None] | None = None,
    ) -> None:
        super().__init__()
        self.what = what
        self.error = error
        self.show = show


class DiffReady(Message):
    """The diff of A and B under ``result.align`` with its rows, and the row to put the
    cursor on. ``result.exact`` False: statuses from the bytes, an exact diff follows."""

    def __init__(self, result: DiffResult, rows: PairRows, cursor: int) -> None:
        super().__init__()
        self.result = result
        self.rows = rows
        self.cursor = cursor


class DiagnosisReady(Message):
    """The header of ``result`` with its findings (or why the diagnosis failed)."""

    def __init__(self, result: DiffResult, summary: Text) -> None:
        super().__init__()
        self.result = result
        self.summary = summary


class JobProgress(Message):
    """A ``core`` job running in a worker reported ``progress``."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress


class JobCancelled(Message):
    """The job stopped because the user cancelled it (escape)."""

    def __init__(self, stage: str) -> None:
        super().__init__()
        self.stage = stage


class DetailReady(Message):
    """The detail renderable of row ``index``."""

    def __init__(self, index: int, body: RenderableType, keep_scroll: bool) -> None:
        super().__init__()
        self.index = index
        self.body = body
        self.keep_scroll = keep_scroll


class SearchDone(Message):
    """A search for ``term`` over ``model`` from the cursor in ``direction`` (1 or -1)
    found row ``index``, or nothing (``None``); ``wrapped``: found past the last row (or
    before the first), from the other end."""

    def __init__(
        self, model: RowModel, index: int | None, term: str, direction: int, wrapped: bool = False
    ) -> None:
        super().__init__()
        self.model = model
        self.index = index
        self.term = term
        self.direction = direction
        self.wrapped = wrapped


class SearchProgress(Message):
    """A search for ``term`` over ``model`` has done ``fraction`` (0..1) of its work."""

    def __init__(self, model: RowModel, term: str, fraction: float) -> None:
        super().__init__()
        self.model = model
        self.term = term
        self.fraction = fraction


class LintReady(Message):
    """``core.lint``'s findings on the one cassette, and the rows that are worth a jump
    (a finding or an error), in order."""

    def __init__(self, cassette: Cassette, findings: list[Finding], notable: list[int]) -> None:
        super().__init__()
        self.cassette = cassette
        self.findings = findings
        self.notable = notable


class RowsReady(Message):
    """The rows of ``cassette`` alone, before its lint findings mark them."""

    def __init__(self, cassette: Cassette, rows: SingleRows) -> None:
        super().__init__()
        self.cassette = cassette
        self.rows = rows


class RunsOpened(Message):
    """The runs picked in the selector, opened as cassettes (``b`` ``None``: one run)."""

    def __init__(self, a: Cassette, b: Cassette | None) -> None:
        super().__init__()
        self.a = a
        self.b = b


class RecordReady(Message):
    """The re-recording ended (ran to its end, or stopped by escape: ``result.cancelled``)."""

    def __init__(self, result: RecordResult) -> None:
        super().__init__()
        self.result = result


class ReplayDone(Message):
    """A replay ended (``result.runs_result.cancelled``: stopped by escape or by leaving)."""

    def __init__(self, result: ReplayResult) -> None:
        super().__init__()
        self.result = result


class GateDone(Message):
    """A gate ended; cancelled, ``result`` holds the runs completed before."""

    def __init__(self, result: GateResult) -> None:
        super().__init__()
        self.result = result


class CallLogsOpened(Message):
    """Two cassettes to open side by side from a loop screen (a call log against the
    recorded cassette, or two runs' call logs); ``label`` says which, for the header."""

    def __init__(self, a: Cassette, b: Cassette, label: str) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.label = label


class BisectDone(Message):
    """A bisect ended (``result.cancelled``: stopped by escape, what was learned kept)."""

    def __init__(self, result: BisectResult) -> None:
        super().__init__()
        self.result = result


class SwapProgress(Message):
    """The swap gate of the row holding A's entry ``a`` and B's entry ``b`` reported
    ``progress`` (its runs done)."""

    def __init__(self, a: int, b: int, progress: Progress) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.progress = progress


class SwapDone(Message):
    """The swap gate of the row holding A's entry ``a`` and B's entry ``b`` ended:
    ``result`` (``cancelled`` set when escape stopped it)."""

    def __init__(self, a: int, b: int, result: GateResult) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.result = result
