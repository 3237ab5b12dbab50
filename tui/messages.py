"""The messages workers post to their screen: one typed message per result or failure.

Slow work runs in thread workers (Textual's ``@work(thread=True)``); a worker hands its
result back by posting one of these (``post_message`` is thread-safe and never blocks, so
``q`` pressed while a worker runs still exits at once), and the screen handles each type
with ``@on(...)``. Each message carries what its handler needs to tell a stale result (a
row the cursor has left, a diff another alignment replaced) from the current one.
"""

from __future__ import annotations

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
    from rich.console import RenderableType
    from rich.text import Text

    from .text.rows import PairRows, RowModel, SingleRows


class Failed(Message):
    """Base of the failures: ``what`` failed (a few words shown to the user) with
    ``error``. Never posted nor handled as such: Textual's ``@on(Failed)`` would also
    catch every subclass, so each failure has its own class and exactly one handler
    (``tests/tui/test_failures_once.py``)."""

    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__()
        self.what = what
        self.error = error


class DiffReady(Message):
    """The diff of A and B under ``result.align`` with its rows, and the row to put the
    cursor on. ``result.exact`` False: statuses from the bytes, an exact diff follows."""

    def __init__(self, result: DiffResult, rows: PairRows, cursor: int) -> None:
        super().__init__()
        self.result = result
        self.rows = rows
        self.cursor = cursor


class DiffFailed(Failed):
    """The engine could not align the runs by ``align``."""

    def __init__(self, align: str, error: BaseException) -> None:
        super().__init__(f"diff by {align}", error)
        self.align = align


class SearchFailed(Failed):
    """A search over the rows failed."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("search", error)


class OpenRunsFailed(Failed):
    """Runs to open side by side from a loop screen could not be loaded."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("cannot open the runs", error)


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


class DetailFailed(Failed):
    """Row ``index``'s detail could not be built."""

    def __init__(self, index: int, error: BaseException) -> None:
        super().__init__("detail", error)
        self.index = index


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


class LintFailed(Failed):
    """The lint of the one cassette failed."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("lint", error)


class RunsOpened(Message):
    """The runs picked in the selector, opened as cassettes (``b`` ``None``: one run)."""

    def __init__(self, a: Cassette, b: Cassette | None) -> None:
        super().__init__()
        self.a = a
        self.b = b


class RunsFailed(Failed):
    """A run picked in the selector could not be opened."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("cannot open the run", error)


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


class RecordFailed(Failed):
    """The re-recording could not start (the file exists, the agent is no program...)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("re-record", error)


class GateDone(Message):
    """A gate ended; cancelled, ``result`` holds the runs completed before."""

    def __init__(self, result: GateResult) -> None:
        super().__init__()
        self.result = result


class LoopFailed(Failed):
    """A loop job could not run at all (``what``: "replay", "gate"): a bad cassette or
    config, an agent command that cannot start, a runs folder in use."""


class CallLogsOpened(Message):
    """Two cassettes to open side by side from a loop screen (a call log against the
    recorded cassette, or two runs' call logs); ``label`` says which, for the header."""

    def __init__(self, a: Cassette, b: Cassette, label: str) -> None:
        super().__init__()
        self.a = a
        self.b = b
        self.label = label
