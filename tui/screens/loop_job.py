"""What the replay and gate screens share: one ``core`` loop job at a time in a thread
worker, its progress as ``JobProgress`` messages, escape to cancel it, and runs opened side
by side in a pushed main view.

Escape while the job runs cancels it through its ``CancelToken`` (the job kills every
agent's process group at once and returns what finished: the partial result stays on
screen); escape again leaves. q leaves at once when nothing runs; while a job runs it
cancels it and leaves as soon as the job has stopped (so its partial result is kept in the
session). Leaving any other way (the app quits) cancels too: no agent outlives the screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.jobs import CancelToken
from cassette_tui.core.loop.options import LoopOptions
from textual import on, work

from ..messages import CallLogsOpened, WorkerFailed
from ..session import Session
from ..text.safe import describe_error
from .base import AppScreen

if TYPE_CHECKING:
    from cassette_tui.core.loop.agent import AgentCommand


class LoopJobScreen(AppScreen):
    """A loop screen: ``start_job`` in a subclass starts its worker with ``self.token``."""

    #: the stage's name ("replay", "gate"), for messages
    STAGE = ""

    def __init__(self) -> None:
        super().__init__()
        #: the running job's token (``None`` before the first job)
        self.token: CancelToken | None = None
        #: a job is running (set by ``begin``, cleared by ``finish``)
        self.running = False
        #: q was pressed while the job ran: leave once it has stopped
        self.leave_when_done = False

    # -- the job ---------------------------------------------------------------------
    @property
    def agent(self) -> AgentCommand:
        agent = self.session.agent
        assert agent is not None, "a loop screen opens only with an agent"
        return agent

    def loop_options(self) -> LoopOptions:
        """How this screen's job runs the agent: the app's config, the run files in a new
        folder of the session's (kept to open the runs side by side; gone at exit)."""
        session = self.session
        return LoopOptions(config=session.config, runs_dir=session.run_folders.new(self.STAGE))

    def a_name(self) -> str:
        """How the screens name cassette A (what the loop replays): its file name, or
        ``"A"`` when it was not read from a file."""
        a = self.session.a
        return a.path.name if a is not None and a.path is not None else "A"

    def cassette_path(self) -> Path:
        """The file of cassette A (what the loop replays). Raises ``ValueError`` when A was
        not read from a file."""
        a = self.session.a
        if a is None or a.path is None:
            raise ValueError("cassette A was not read from a file: nothing to replay")
        return Path(a.path)

    def begin(self) -> CancelToken:
        """A new token for a job about to start."""
        self.token = CancelToken()
        self.running = True
        self.leave_when_done = False
        return self.token

    def finish(self) -> None:
        """The job ended (result or failure): leave now if q asked to."""
        self.running = False
        if self.leave_when_done and self.is_attached:
            self.leave()

    def cancel_job(self) -> bool:
        """Cancel the running job; ``True`` when one was running."""
        token = self.token
        if not self.running or token is None:
            return False
        if not token.cancelled:
            token.cancel()
            self.app.notify(f"{self.STAGE} cancelled: the agents were stopped", timeout=3)
        return True

    def leave(self) -> None:
        if self.app.screen is self:
            self.app.pop_screen()

    def action_cancel(self) -> None:
        """escape: cancel the running job, else leave."""
        if not self.cancel_job():
            self.leave()

    def action_back(self) -> None:
        """q: leave; a running job is cancelled first (a second q leaves at once)."""
        if self.running and not self.leave_when_done:
            self.leave_when_done = True
            self.cancel_job()
            return
        self.leave()

    def on_unmount(self) -> None:
        token = self.token
        if token is not None:
            token.cancel()  # the app quits or the screen went: no agent outlives it

    def could_not_run(self, error: BaseException) -> None:
        """Report that the job could not run at all (a bad cassette or config, an agent
        command that cannot start, a runs folder in use): posts ``WorkerFailed`` (thread-safe),
        shown on the screen and as a notification; the job is over."""
        self.post_message(WorkerFailed(self.STAGE, error, self._show_could_not_run))

    def _show_could_not_run(self, failure: WorkerFailed) -> None:
        self.show_failure(f"{failure.what} could not run: {describe_error(failure.error)}")
        self.finish()

    def show_failure(self, text: str) -> None:
        """Say on the screen why the job could not run."""

    # -- runs side by side -----------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="open", description="open runs")
    def open_side_by_side(self, a: Cassette | Path, b: Path, label: str) -> None:
        """Open ``a`` (a cassette, or a call log to load) and the call log ``b`` and show
        them side by side over this screen."""
        rules = self.session.a.rules if self.session.a is not None else None
        try:
            first = a if isinstance(a, Cassette) else load(a, rules=rules)
            second = load(b, rules=rules)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("cannot open the runs", exc))
            return
        self.post_message(CallLogsOpened(first, second, label))

    @on(CallLogsOpened)
    def _call_logs_opened(self, message: CallLogsOpened) -> None:
        from .loop_pair import LoopPairScreen

        if not self.is_current:
            return
        session = Session(message.a, message.b, align=self.session.align)
        self.app.push_screen(LoopPairScreen(session, message.label))
