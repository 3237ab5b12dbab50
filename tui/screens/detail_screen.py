"""A screen that is one detail pane, full-screen, with its footer: the step view and a
replay miss. The subclass names the pane (``DETAIL_ID``) and fills it; the keys to scroll
it and to go back are here."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.widgets import Footer

from ..widgets.detail import DetailPane
from .base import AppScreen


class DetailScreen(AppScreen):
    """One ``DetailPane`` (id ``DETAIL_ID``) and a footer; q or escape goes back."""

    DETAIL_ID: ClassVar[str] = "detail"

    def compose(self) -> ComposeResult:
        yield DetailPane(id=self.DETAIL_ID)
        yield Footer()

    @property
    def detail(self) -> DetailPane:
        return self.query_one(f"#{self.DETAIL_ID}", DetailPane)

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
