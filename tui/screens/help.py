"""Every key of the app (as remapped by the user's keymap) and the legend of the marks."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
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
    # the keys it shares with the main screen are listed there once (see help_text)
    ("One cassette", [b for b in bindings.SINGLE if b not in bindings.PAIR]),
    ("Step full-screen (enter)", bindings.STEP),
    ("Pin preview (p)", bindings.PIN),
    ("Debug loop panel (l)", bindings.LOOP),
    ("Re-record (R)", [*bindings.RERECORD, bindings.BACK_FROM_RERECORD]),
    ("Replay (r)", bindings.REPLAY),
    ("A miss's nearest call (enter on a miss)", bindings.MISS),
    ("Gate (t)", bindings.GATE),
    ("Bisect (b on the loop panel)", bindings.BISECT),
    ("Runs opened from Replay, Gate or Bisect", [bindings.BACK_TO_LOOP]),
    ("Replay or Gate without an agent", bindings.NO_AGENT),
    ("Run selector (a file of many runs)", [*bindings.RUNS, bindings.BACK_TO_RUNS]),
    ("Everywhere", bindings.APP),
    ("This help", bindings.HELP),
]

#: a last line under a section
NOTES = {"One cassette": "and the main screen's keys above but f and a (the loop acts on A)"}


def key_text(app: CassetteApp, binding: Binding) -> str:
    """The keys of ``binding`` as the user's keymap has them, for display."""
    keys = app.keymap.get(binding.id, binding.key) if binding.id else binding.key
    shown = [app.get_key_display(Binding(key.strip(), "")) for key in keys.split(",")]
    return " ".join(dict.fromkeys(shown))


KEY_WIDTH = 14
#: the text width the help keeps within at 80 columns (padding and scroll bar taken off)
LINE_WIDTH = 76


def _section(title: str, rows: list[tuple[str, str, str]]) -> Table:
    """One section: keys, what they do (wrapped within its column), binding id (never
    wrapped), in three columns that fit ``LINE_WIDTH``."""
    table = Table(
        title=title,
        title_style="bold underline",
        title_justify="left",
        box=None,
        show_header=False,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        expand=False,
    )
    table.add_column(style="bold", width=KEY_WIDTH, no_wrap=True)
    table.add_column(overflow="fold", ratio=1)
    table.add_column(style="dim", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def help_plain_text(app: CassetteApp, width: int = LINE_WIDTH) -> str:
    """:func:`help_text` as plain text laid out at ``width`` columns (for tests, logs)."""
    from rich.console import Console

    console = Console(width=width, color_system=None, record=True, file=io.StringIO())
    console.print(help_text(app))
    return console.export_text()


def help_text(app: CassetteApp) -> Group:
    """Every mark and every key: ``keys  what it does  binding id``, as columns that fit 80
    columns; a long description wraps within its column, a binding id never wraps."""
    parts: list[RenderableType] = [
        _section(
            "Marks (the middle column; ↻ ! ? sit next to a seq)",
            [(f"  {mark.glyph}", mark.label, "") for mark in legend()],
        )
    ]
    for title, section in SECTIONS:
        rows = [(f"  {key_text(app, b)}", b.tooltip or b.description, b.id or "") for b in section]
        if title in NOTES:
            rows.append(("", NOTES[title], ""))
        parts.extend([Text(""), _section(title, rows)])
    parts.extend(
        [Text(""), _section("", [("  ctrl+p", "command palette: every action by name", "")])]
    )
    return Group(*parts)


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
