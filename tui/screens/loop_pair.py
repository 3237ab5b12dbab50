"""Runs opened side by side from a loop screen: a replay's call log against the recorded
cassette, or two runs of a gate. The view has a ``Session`` of its own, so the user's pair
(the app's session, its diffs and loop results) stays as it was; q or escape comes back to
the loop screen that opened it, and from there to the main view."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Input, Static

from ..bindings import PAIR_FROM_LOOP
from ..session import Session
from ..text.safe import printable
from .pair import PairScreen


class LoopPairScreen(PairScreen):
    """The main view of two runs of the loop, with ``label`` (which runs) under the header."""

    BINDINGS: ClassVar[list[BindingType]] = list(PAIR_FROM_LOOP)
    KEYMAP_NAME = "loop runs view"

    def __init__(self, session: Session, label: str) -> None:
        super().__init__(session)
        self.label = label

    def compose_bars(self) -> ComposeResult:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(printable(self.label), style="bold")
        text.append("  q back", style="dim")
        yield Static(text, id="loopbar")

    def refresh_loop_bar(self) -> None:
        """The label stays: this view's session is not the user's loop."""

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_clear_search(self) -> None:
        """escape: close the search bar, stop a job, forget the search; else go back."""
        bar = self.query_one("#search", Input)
        running = self._token is not None and not self._token.cancelled
        if bar.has_class("-open") or self.search_term or running:
            super().action_clear_search()
        else:
            self.app.pop_screen()
