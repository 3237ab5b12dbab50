"""The step screens: the shared behaviour of the pair screen and the single-file screen.

A header, the step list (one row per aligned step), the detail of the selected row, a
search bar and the footer. Slow work (diffing, drift of the selected row, search, lint)
runs in thread workers; the key that started it returns at once, and the worker posts its
result as a typed message (``tui/messages.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.jobs import Cancelled, CancelToken
from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from ..messages import DetailReady, SearchDone, SearchProgress, WorkerFailed
from ..session import Session
from ..text.detail import Limits
from ..text.rows import RowModel
from ..text.safe import describe_error, plain, printable
from ..text.search import RowSearch, search_order
from ..text.summary import loading_summary
from ..widgets.detail import DetailPane
from ..widgets.step_list import StepList
from ..widgets.summary import SummaryHeader
from ..widgets.text_input import TextInput
from .base import AppScreen


class NoRows:
    """The rows before the engine has answered."""

    def __len__(self) -> int:
        return 0

    def render(self, index: int, width: int, styles: Any) -> Text:
        return Text("")

    def notable(self, index: int) -> bool:
        return False

    def matches(self, index: int, needle: str) -> bool:
        return False

    def next_notable(self, start: int, direction: int) -> int | None:
        return None


__all__ = ["StepsScreen", "search_order"]

#: seconds between two progress reports of a search
PROGRESS_EVERY = 0.1
REVEAL_NOTE = "secrets shown whole: press v to mask them again"
MASK_NOTE = "secrets masked"


class StepsScreen(AppScreen):
    """Header, step list, detail pane, search bar, footer."""

    #: the search term (lower case) that n/N repeat, or "" when none is active
    search_term: str = ""
    expanded: bool = False
    #: secrets shown whole in the detail pane (v); masked by default
    revealed: bool = False

    def __init__(self, session: Session | None = None) -> None:
        super().__init__(session)
        self.model: RowModel = NoRows()
        #: the running search's progress for the columns line ("" when none runs)
        self.search_status = ""
        #: the last search, kept for n/N (its candidate rows)
        self._search: RowSearch | None = None

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield SummaryHeader(self.initial_summary(), id="summary")
        yield from self.compose_bars()
        yield Static(self.column_titles(), id="columns")
        yield StepList(self.model, id="steps")
        yield DetailPane(id="detail")
        yield TextInput(placeholder="search tool names, args, responses", id="search")
        yield Footer()

    def compose_bars(self) -> ComposeResult:
        """Bars between the header and the column titles (the pair screen's loop bar)."""
        yield from ()

    def initial_summary(self) -> Text:
        return loading_summary(self.session.a, self.session.b, "loading…")

    def column_titles(self) -> Text:
        return Text("")

    def on_mount(self) -> None:
        self.steps.focus()
        self.steps.loading = True

    @property
    def steps(self) -> StepList:
        return self.query_one("#steps", StepList)

    @property
    def detail(self) -> DetailPane:
        return self.query_one("#detail", DetailPane)

    def show_rows(self, model: RowModel, cursor: int = 0) -> None:
        """Show the rows the engine computed, with the cursor on row ``cursor``."""
        self.model = model
        if hasattr(model, "reveal"):
            model.reveal = self.revealed  # the step list masks secrets as the detail pane does
        self.steps.loading = False
        self.steps.set_model(model, cursor)
        self.refresh_columns()

    def show_summary(self, text: Text) -> None:
        """Put ``text`` in the header."""
        self.query_one("#summary", SummaryHeader).update(text)

    def refresh_columns(self) -> None:
        self.query_one("#columns", Static).update(self.column_titles())

    # -- detail ---------------------------------------------------------------------------
    def build_detail(self, index: int, limits: Limits, styles: Any) -> RenderableType:
        """The detail renderable of row ``index``; runs in a thread worker."""
        raise NotImplementedError

    def detail_placeholder(self, index: int) -> RenderableType:
        return plain("loading step…", "dim italic")

    @on(StepList.Highlighted)
    def _highlighted(self, event: StepList.Highlighted) -> None:
        if not len(self.model):
            return
        self.detail.show(self.detail_placeholder(event.index))
        self.start_detail(event.index)

    def start_detail(self, index: int, keep_scroll: bool = False) -> None:
        """Build row ``index``'s detail in a worker (styles are resolved here, on the UI
        thread)."""
        self.load_detail(index, self.limits(self.expanded), self.detail.styles_map(), keep_scroll)

    def limits(self, expanded: bool) -> Limits:
        limits = Limits.expanded() if expanded else Limits()
        return replace(limits, reveal_secrets=self.revealed)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="detail",
        description="detail and drift of the selected row",
    )
    def load_detail(self, index: int, limits: Limits, styles: Any, keep_scroll: bool) -> None:
        # Workers hand their results back as messages (never by blocking on
        # call_from_thread, which would hang the exit when q lands while one runs).
        try:
            body = self.build_detail(index, limits, styles)
        except Exception as exc:  # noqa: BLE001 - shown where the detail was awaited
            self.post_message(
                WorkerFailed("detail", exc, lambda f: self.show_detail_failure(index, f))
            )
            return
        if not get_current_worker().is_cancelled:
            self.post_message(DetailReady(index, body, keep_scroll))

    def report_failure(self, failure: WorkerFailed) -> None:
        """Show a worker's failure as a notification (where its result was awaited, the
        handler also says so, instead of "loading…" forever). A bad line in a file the
        user opened (found by a worker: the full parse is deferred) ends the app with
        exit status 2 and the error's one line, the outcome ``diff`` gives."""
        if isinstance(failure.error, CassetteFormatError) and self._own_session is None:
            self.app.fail_bad_input(failure.error)
            return
        super().report_failure(failure)

    @on(DetailReady)
    def _detail_ready(self, message: DetailReady) -> None:
        if message.index == self.steps.cursor:
            self.detail.show(message.body, keep_scroll=message.keep_scroll)

    def show_detail_failure(self, index: int, failure: WorkerFailed) -> None:
        """Say in the detail pane why row ``index``'s detail failed, if the cursor is
        still on it."""
        if index == self.steps.cursor:
            text = f"cannot show this step: {describe_error(failure.error)}"
            self.detail.show(plain(text, "bold"))

    @on(SearchProgress)
    def _search_progress(self, message: SearchProgress) -> None:
        if message.model is self.model and message.term == self.search_term:
            self.search_status = f"searching… {message.fraction:.0%}"
            self.refresh_columns()

    def search_title(self) -> Text:
        """The columns line while a search is active: the term, and how far a running
        search got (escape stops it)."""
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(" search: ", style="bold")
        text.append(printable(self.search_term))
        if self.search_status:
            text.append(f"  {self.search_status} · escape stops", style="bold")
        else:
            text.append("  (n/N repeat, escape clears)", style="dim")
        return text

    @on(SearchDone)
    def _search_done(self, message: SearchDone) -> None:
        if message.model is not self.model:
            return
        if self.search_status:
            self.search_status = ""
            self.refresh_columns()
        term = printable(message.term)
        if message.index is not None:
            self.steps.cursor = message.index
            if message.wrapped:  # as less and vim say it
                end = "top" if message.direction > 0 else "bottom"
                self.app.notify(f"search wrapped to the {end}: {term}", markup=False, timeout=3)
        else:
            self.app.notify(f"no match for: {term}", markup=False, timeout=3)

    # -- actions: moving ------------------------------------------------------------------
    def _detail_focused(self) -> bool:
        return self.detail.has_focus

    def _move(self, scroll: str, step: Callable[[], object]) -> None:
        """A moving key scrolls the detail pane when it has focus, else moves the cursor."""
        if self._detail_focused():
            getattr(self.detail, scroll)(animate=False)
        else:
            step()

    def action_cursor_down(self) -> None:
        self._move("scroll_down", lambda: self.steps.move(1))

    def action_cursor_up(self) -> None:
        self._move("scroll_up", lambda: self.steps.move(-1))

    def action_page_down(self) -> None:
        self._move("scroll_page_down", lambda: self.steps.page(1))

    def action_page_up(self) -> None:
        self._move("scroll_page_up", lambda: self.steps.page(-1))

    def action_first(self) -> None:
        self._move("scroll_home", self.steps.first)

    def action_last(self) -> None:
        self._move("scroll_end", self.steps.last)

    def action_switch_pane(self) -> None:
        (self.steps if self._detail_focused() else self.detail).focus()

    def walk_notable(self, direction: int) -> bool:
        """Move the cursor to the next (``1``) or previous (``-1``) row worth a jump; else
        say why not. True when the cursor moved."""
        if self.steps.next_notable(direction):
            return True
        self.app.notify(self.no_more(direction), markup=False, timeout=2)
        return False

    def action_next_difference(self) -> None:
        self.walk_notable(1)

    def action_previous_difference(self) -> None:
        self.walk_notable(-1)

    def no_more(self, direction: int) -> str:
        return "no more differences below" if direction > 0 else "no differences above"

    def action_next(self) -> None:
        """n: repeat the search when one is active, else the next difference."""
        if self.search_term:
            self.run_search(self.search_term, 1)
        else:
            self.action_next_difference()

    def action_previous(self) -> None:
        if self.search_term:
            self.run_search(self.search_term, -1)
        else:
            self.action_previous_difference()

    def action_open_step(self) -> None:
        if len(self.model):
            from .step import StepScreen

            self.app.push_screen(StepScreen(self, self.steps.cursor))

    def action_toggle_expand(self) -> None:
        self.expanded = not self.expanded
        if len(self.model):
            self.start_detail(self.steps.cursor, keep_scroll=True)

    def action_toggle_reveal(self) -> None:
        """v: show secrets whole in the step list and the detail pane, or mask them again."""
        self.revealed = not self.revealed
        self.notify(REVEAL_NOTE if self.revealed else MASK_NOTE, timeout=3)
        if hasattr(self.model, "reveal"):
            self.model.reveal = self.revealed
            self.steps.redraw()
        if len(self.model):
            self.start_detail(self.steps.cursor, keep_scroll=True)

    def action_back(self) -> None:
        """q: the main screen is the first view, so going back quits."""
        self.app.exit()

    # -- search ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "/" typed inside the open search bar is text (paths), not a new search
        # (self.focused, not has_focus: that one follows later, with the Focus event)
        return not (action == "search" and self.focused is self.query_one("#search", Input))

    def action_search(self) -> None:
        bar = self.query_one("#search", Input)
        bar.add_class("-open")
        bar.value = ""
        # focus now, not after the keys queued behind "/"
        self.set_focus(bar)

    def cancel_job(self) -> bool:
        """Stop the running ``core`` job, if any (escape); True when one was stopped."""
        return False

    def action_clear_search(self) -> None:
        """escape: close the search bar, else stop a running job, else forget the search."""
        bar = self.query_one("#search", Input)
        if bar.has_class("-open"):
            bar.remove_class("-open")
            self.steps.focus()
        elif self.cancel_job():
            return
        elif self.search_term:
            self.search_term = ""
            self.search_status = ""
            self.workers.cancel_group(self, "search")
            self.refresh_columns()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        bar = event.input
        bar.remove_class("-open")
        self.steps.focus()
        term = event.value.strip().lower()
        self.search_term = term
        self.refresh_columns()
        if term:
            self.run_search(term, 1, include_current=False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search", description="search")
    def run_search(self, term: str, direction: int, include_current: bool = False) -> None:
        """Find the next row holding ``term`` from the cursor (``text/search.py``); the
        columns line shows how far it got, escape stops it."""
        worker = get_current_worker()
        token = CancelToken()
        model = self.model
        search = self._search
        if search is None or search.model is not model or search.needle != term:
            search = self._search = RowSearch(model, term)
        last = [0.0]

        def progress(fraction: float) -> None:
            if worker.is_cancelled:
                token.cancel()
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY:
                last[0] = now
                self.post_message(SearchProgress(model, term, fraction))

        try:
            hit = search.find(self.steps.cursor, direction, token, progress, include_current)
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("search", exc))
            return
        if not worker.is_cancelled:
            found, wrapped = hit if hit is not None else (None, False)
            self.post_message(SearchDone(model, found, term, direction, wrapped))
