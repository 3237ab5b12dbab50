"""A screen that is one detail pane, full-screen, with its footer: the step view and a
replay miss. The subclass names the pane (``DETAIL_ID``) and fills it through ``load``,
which builds the detail in a thread worker (a large entry never freezes the screen) and
shows it when its ``DetailReady`` arrives; the keys to scroll it and to go back are here."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.console import RenderableType
from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.worker import get_current_worker

from ..messages import DetailReady, WorkerFailed
from ..text.safe import describe_error, plain
from ..widgets.detail import DetailPane
from .base import AppScreen


class DetailScreen(AppScreen):
    """One ``DetailPane`` (id ``DETAIL_ID``) and a footer; q or escape goes back."""

    DETAIL_ID: ClassVar[str] = "detail"
    #: what the pane shows, for a failure (``cannot show this step: ...``)
    WHAT: ClassVar[str] = "detail"

    #: the detail the pane shows or waits for (a stale worker's result is dropped)
    index = 0

    def compose(self) -> ComposeResult:
        yield DetailPane(id=self.DETAIL_ID)
        yield Footer()

    @property
    def detail(self) -> DetailPane:
        return self.query_one(f"#{self.DETAIL_ID}", DetailPane)

    # -- the detail, built in a worker -----------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="detail", description="detail")
    def load(self, index: int, build: Callable[[], RenderableType], keep_scroll: bool) -> None:
        """Build detail ``index`` with ``build()`` off the UI thread (resolve the styles it
        needs before, on the UI thread: ``detail.styles_map()``) and post it as
        ``DetailReady``; when ``build`` raises, the failure, shown in the pane."""
        try:
            body = build()
        except Exception as exc:  # noqa: BLE001 - shown in the pane
            self.post_message(WorkerFailed("detail", exc, lambda f: self._failed(index, f)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(DetailReady(index, body, keep_scroll))

    @on(DetailReady)
    def _loaded(self, message: DetailReady) -> None:
        if message.index == self.index:
            self.detail.show(message.body, keep_scroll=message.keep_scroll)

    def report_failure(self, failure: WorkerFailed) -> None:
        """No notification: the pane says it (``_failed``)."""

    def _failed(self, index: int, failure: WorkerFailed) -> None:
        # as the main screen's pane says it: the error names the file, line and field
        if index == self.index:
            text = f"cannot show this {self.WHAT}: {describe_error(failure.error)}"
            self.detail.show(plain(text, "bold"))

    # -- keys ------------------------------------------------------------------------
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_scroll_down(self) -> None:
        self.detail.scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.detail.scroll_up(animate=False)

    def action_page_down(self) -> None:
        self.detail.scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.detail.scroll_page_up(animate=False)

    def action_scroll_top(self) -> None:
        self.detail.scroll_home(animate=False)

    def action_scroll_bottom(self) -> None:
        self.detail.scroll_end(animate=False)
