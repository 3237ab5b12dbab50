"""Every key of the app (as remapped by the user's keymap) and the legend of the marks."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from .. import bindings
from ..widgets.marks import legend

SECTIONS: list[tuple[str, list[Binding]]] = [
    ("Two cassettes (main screen)", bindings.PAIR),
    ("One cassette", bindings.SINGLE),
    ("Step full-screen (enter)", bindings.STEP),
    ("Everywhere", bindings.APP),
    ("This help", bindings.HELP),
]


def key_text(app: object, binding: Binding) -> str:
    """The keys of ``binding`` as the user's keymap has them, for display."""
    keymap = getattr(app, "_keymap", {}) or {}
    keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
    shown = []
    for key in keys.split(","):
        key = key.strip()
        display = app.get_key_display(Binding(key, "")) if hasattr(app, "get_key_display") else key
        shown.append(display)
    return " ".join(dict.fromkeys(shown))


def help_table(app: object) -> Table:
    table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
    table.add_column("keys", no_wrap=True)
    table.add_column("what", ratio=1)
    table.add_column("id", style="dim", no_wrap=True)
    table.add_row(Text("Marks", style="bold underline"), "", "")
    for mark in legend():
        table.add_row(Text(f"  {mark.glyph}", style="bold"), Text(mark.label), "")
    for title, section in SECTIONS:
        table.add_row("", "", "")
        table.add_row(Text(title, style="bold underline"), "", "")
        for binding in section:
            table.add_row(
                Text(key_text(app, binding), style="bold"),
                Text(binding.description),
                Text(binding.id or ""),
            )
    table.add_row("", "", "")
    table.add_row(Text("ctrl+p", style="bold"), Text("command palette: every action by name"), "")
    return table


class HelpScreen(Screen[None]):
    """The keys. q, escape or ? goes back."""

    BINDINGS = bindings.HELP

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("cassette-tui keys (remap by id in keys.toml)", style="bold"))
            yield Static(help_table(self.app))
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
