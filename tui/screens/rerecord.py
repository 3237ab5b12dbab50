"""Re-record (``R`` on the main screen): run the agent once, live, into a new file next to
A, then open A against the new recording.

The screen first asks (the exact command, that it runs LIVE with the network on, the new
file it will write: ``core.rerecord.rerecord_path``); enter or ``y`` runs ``record_job``
in a thread worker, escape or ``n`` leaves with nothing run. While the agent runs the
screen shows how long it has run and its stderr so far; escape kills its process group
(``CancelToken``) and says what the recording kept. When it ends, the result goes to
``Session.loop.rerecord`` (the loop bar shows it) and enter opens A against the new
recording on a pair screen whose ``q`` comes back here. Without an agent it says how to
configure one and runs nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar, Literal

from cassette_tui.core.format.atomic import FolderNotWritable, check_new_file
from cassette_tui.core.format.jobs import CancelToken, run_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.loop.record import RecordResult, record_job
from cassette_tui.core.loop.rerecord import rerecord_path
from cassette_tui.core.scan.masking import mask_text
from rich.console import RenderableType
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, ProgressBar, Static

from .. import bindings
from ..messages import JobProgress, RecordReady, WorkerFailed
from ..session import Session
from ..text.rerecord import (
    UNWRITABLE_NOTE,
    UNWRITABLE_NOTE_IMPORTED,
    back_prompt,
    confirm_prompt,
    confirm_text,
    failed_text,
    no_agent_text,
    result_prompt,
    result_text,
    running_prompt,
    running_text,
    stopping_prompt,
)
from ..text.safe import describe_error
from ..text.summary import file_label
from .base import WorkerScreen
from .pair import PairScreen

State = Literal["no_agent", "confirm", "running", "done", "failed"]

#: the actions each state allows (the others are hidden from the footer and do nothing)
ACTIONS: dict[State, set[str]] = {
    "no_agent": {"back"},
    "confirm": {"run", "cancel"},
    "running": {"stop"},
    "done": {"open", "back"},
    "failed": {"back"},
}
#: how often the running screen reads the agent's stderr again (seconds)
TICK_S = 0.5
#: bytes read from the end of the agent's stderr
TAIL_BYTES = 4096


def now() -> datetime:
    """The time in the new file's name (a test fixes it)."""
    return datetime.now(UTC)


def stderr_tail(path: Path) -> str:
    """The end of the agent's stderr so far ("" before it wrote any), each secret in it
    masked (``masking.mask_text``), as the commands show a run's stderr."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - TAIL_BYTES))
            return mask_text(fh.read().decode("utf-8", "replace"))
    except OSError:
        return ""


class RerecordScreen(ModalScreen[RecordResult | None], WorkerScreen[RecordResult | None]):
    """Confirm, run, result. Dismissed with the result when the user opens A against it
    (enter), else ``None``."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.RERECORD)
    KEYMAP_NAME = "re-record"

    def __init__(self, session: Session, on_result: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.owner_session = session
        self.on_result = on_result
        self.agent = session.agent
        self.state: State = "no_agent" if self.agent is None else "confirm"
        a = session.a
        self.old_label = file_label(a) if a is not None else "A"
        fmt = a.metadata.get("format") if a is not None else None
        self.imported_from: str | None = fmt if fmt not in (None, "cassette") else None
        self.target = rerecord_path(
            a.path if a is not None else None, now(), imported=self.imported_from is not None
        )
        self.result: RecordResult | None = None
        self.token: CancelToken | None = None
        self.runs_dir: Path | None = None
        self._started = 0.0
        self._error = ""
        self._note: str | None = None
        if self.agent is not None:
            try:  # said before asking to run: the agent would run live for nothing
                check_new_file(self.target)
            except FolderNotWritable as exc:
                self.state, self._error = "failed", str(exc)
                self._note = UNWRITABLE_NOTE_IMPORTED if self.imported_from else UNWRITABLE_NOTE
        self._ticker: Timer | None = None

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="rerecord-box"):
            with VerticalScroll(id="rerecord-body"):
                yield Static(self._body(), id="rerecord-text")
            yield ProgressBar(total=None, show_eta=False, id="rerecord-progress")
            yield Static(self._prompt(), id="rerecord-prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#rerecord-body").focus()
        self.query_one("#rerecord-progress").display = False

    def _body(self) -> RenderableType:
        agent = self.agent
        if agent is None:
            return no_agent_text(self.owner_session.agent_problem)
        if self.state == "confirm":
            return confirm_text(agent, self.target, self.old_label, self.imported_from)
        if self.state == "running":
            tail = stderr_tail(self.runs_dir / "run-01.stderr") if self.runs_dir else ""
            return running_text(agent, self.target, time.monotonic() - self._started, tail)
        if self.state == "done" and self.result is not None:
            return result_text(agent, self.result, self.target)
        if self._note is not None:
            return failed_text(agent, self.target, self._error, self._note)
        return failed_text(agent, self.target, self._error)

    def _prompt(self) -> RenderableType:
        if self.state == "confirm":
            return confirm_prompt()
        if self.state == "running":
            return running_prompt()
        if self.state == "done" and self.result is not None:
            return result_prompt(self.result)
        return back_prompt()

    def _show(self, state: State) -> None:
        self.state = state
        if state != "running" and self._ticker is not None:
            self._ticker.stop()  # the run ended: nothing more to read
            self._ticker = None
        self.query_one("#rerecord-text", Static).update(self._body())
        self.query_one("#rerecord-prompt", Static).update(self._prompt())
        self.query_one("#rerecord-progress").display = state == "running"
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("scroll_down", "scroll_up"):
            return True
        if action == "open":
            return (
                self.state == "done"
                and self.result is not None
                and (self.result.cassette is not None)
            )
        return action in ACTIONS[self.state]

    # -- actions --------------------------------------------------------------------------
    def action_run(self) -> None:
        assert self.agent is not None
        self.token = CancelToken()
        self.runs_dir = self.owner_session.run_folders.new("record")
        self._started = time.monotonic()
        self._show("running")
        self._ticker = self.set_interval(TICK_S, self._tick, name="rerecord-tick")
        self.record(self.token, self.runs_dir)

    def _tick(self) -> None:
        if self.state == "running":
            self.query_one("#rerecord-text", Static).update(self._body())

    @work(thread=True, exclusive=True, exit_on_error=False, group="rerecord", description="record")
    def record(self, token: CancelToken, runs_dir: Path) -> None:
        """``record_job`` to its end (or its cancel), its progress posted as it comes."""
        assert self.agent is not None
        try:
            result = run_job(
                record_job(
                    self.agent,
                    self.target,
                    # its output is read while it runs, then removed
                    LoopOptions(runs_dir=runs_dir, keep=False, config=self.owner_session.config),
                    token=token,
                ),
                self.post_progress,
            )
        except Exception as exc:  # noqa: BLE001 - shown on the screen, nothing ran
            with contextlib.suppress(OSError):
                runs_dir.rmdir()  # empty: the agent never started (else the job removed it)
            self.post_message(WorkerFailed("re-record", exc, self._failed))
            return
        self.post_message(RecordReady(result))

    @on(JobProgress)
    def _progress(self, message: JobProgress) -> None:
        bar = self.query_one("#rerecord-progress", ProgressBar)
        bar.update(total=message.progress.total, progress=message.progress.done)

    @on(RecordReady)
    def _ready(self, message: RecordReady) -> None:
        self.result = message.result
        self.owner_session.loop.rerecord = message.result
        self._show("done")
        if self.on_result is not None:
            self.on_result()

    def report_failure(self, failure: WorkerFailed) -> None:
        """No notification: the screen says it (``_failed``)."""

    def _failed(self, failure: WorkerFailed) -> None:
        self._error = describe_error(failure.error)
        self._show("failed")

    def action_stop(self) -> None:
        if self.token is not None:
            self.token.cancel()  # kills the agent's process group now
            self.query_one("#rerecord-prompt", Static).update(stopping_prompt())

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_open(self) -> None:
        self.dismiss(self.result)

    def action_scroll_down(self) -> None:
        self.query_one("#rerecord-body", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#rerecord-body", VerticalScroll).scroll_up(animate=False)

    def on_unmount(self) -> None:
        # the app quits (ctrl+q) while the agent runs: it must not outlive the app
        if self.token is not None and self.state == "running":
            self.token.cancel()


class RerecordedPairScreen(PairScreen):
    """A against its re-recording (a ``Session.against`` sharing the loop's results); q
    goes back to the pair opened before."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.PAIR_RERECORDED)

    def __init__(self, session: Session) -> None:
        super().__init__(session)  # AppScreen: a session of its own

    def action_back(self) -> None:
        self.app.pop_screen()
