"""The bases of the app's screens.

``WorkerScreen``: a screen whose thread workers hand their failures back as one message,
``WorkerFailed``, handled in one place (``_worker_failed``): a notification
(``report_failure``, which a screen may change), then what the failed worker asked to show
where its result was awaited (the header, the detail pane, the job's panel).

``AppScreen``: a screen of ``CassetteApp``, typed against the app, so ``self.app.session``
is a ``Session`` to the type checker, not an attribute it cannot see. A screen may be given
a session of its own (runs opened from a loop screen), which leaves the app's untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual import getters, on
from textual.screen import Screen

from ..app import CassetteApp
from ..messages import JobProgress, WorkerFailed
from ..session import Session
from ..text.safe import describe_error, printable

if TYPE_CHECKING:
    from cassette_tui.core.format.jobs import Progress

ResultT = TypeVar("ResultT")


class WorkerScreen(Screen[ResultT]):
    """A screen whose workers post ``WorkerFailed`` (and ``JobProgress``) to it."""

    def post_progress(self, progress: Progress) -> None:
        """A ``core`` job's progress sink: post ``progress`` to this screen as
        ``JobProgress`` (thread-safe, never blocks)."""
        self.post_message(JobProgress(progress))

    @on(WorkerFailed)
    def _worker_failed(self, failure: WorkerFailed) -> None:
        # the one handler of every worker's failure
        self.report_failure(failure)
        if failure.show is not None:
            failure.show(failure)

    def report_failure(self, failure: WorkerFailed) -> None:
        """Tell the user ``failure.what`` failed and why, as an error notification."""
        self.app.notify(
            printable(f"{failure.what}: {describe_error(failure.error)}"),
            title="error",
            severity="error",
            markup=False,
        )


class AppScreen(WorkerScreen[None]):
    """A screen of ``CassetteApp``.

    Attributes:
        KEYMAP_NAME: how the keymap check names this screen in its errors ("main screen").
    """

    KEYMAP_NAME: ClassVar[str] = ""

    app = getters.app(CassetteApp)

    def __init__(self, session: Session | None = None) -> None:
        super().__init__()
        self._own_session = session

    @property
    def session(self) -> Session:
        """The ``Session`` this screen shows: its own when it was given one (two runs of a
        gate opened side by side over the user's pair), else the app's."""
        return self._own_session if self._own_session is not None else self.app.session
