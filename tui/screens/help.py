"""Every key of the app (as remapped by the user's keymap) and the legend of the marks."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from .. import bindings
from ..text.marks import legend
from .base import AppScreen

if TYPE_CHECKING:
    from ..app import CassetteApp

SECTIONS: list[tuple[str, list[Binding]]] = [
    ("Two cassettes (main screen)", bindings.PAIR),
    ("One cassette", bindings.SINGLE),
    ("Step full-screen (enter)", bindings.STEP),
    ("Pin preview (p)", bindings.PIN),
    ("Run selector (a file of many runs)", [*bindings.RUNS, bindings.BACK_TO_RUNS]),
    ("Everywhere", bindings.APP),
    ("This help", bindings.HELP),
]


def key_text(app: CassetteApp, binding: Binding) -> str:
    """The keys of ``binding`` as the user's keymap has them, for display."""
    keys = app.keymap.get(binding.id, binding.key) if binding.id else binding.key
    shown = [app.get_key_display(Binding(key.strip(), "")) for key in keys.split(",")]
    return " ".join(dict.fromkeys(shown))


KEY_WIDTH = 16


def help_text(app: CassetteApp) -> Text:
    """Every mark and every key, one per line: ``keys  what it does  binding id``."""
    text = Text()
    text.append("Marks (the middle column; ↻ ! ? sit next to a seq)\n", style="bold underline")
    for mark in legend():
        text.append(f"  {mark.glyph:<{KEY_WIDTH - 2}}", style="bold")
        text.append(f"{mark.label}\n")
    for title, section in SECTIONS:
        text.append(f"\n{title}\n", style="bold underline")
        for binding in section:
            keys = key_text(app, binding)
            text.append(f"  {keys:<{KEY_WIDTH - 2}}", style="bold")
            text.append(binding.tooltip or binding.description)
            text.append(f"  {binding.id}\n", style="dim")
    text.append(f"\n  {'ctrl+p':<{KEY_WIDTH - 2}}", style="bold")
    text.append("command palette: every action by name\n")
    return text


class HelpScreen(AppScreen):
    """The keys. q, escape or ? goes back."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.HELP)
    KEYMAP_NAME = "help screen"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("cassette-tui keys (remap by id in keys.toml)", style="bold"))
            yield Static(help_text(self.app))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_scroll_down(self) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_up(animate=False)

    def action_scroll_top(self) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_home(animate=False)

    def action_scroll_bottom(self) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_end(animate=False)
