"""Replay and Gate without an agent: what the screen would run, and how to configure an
agent (``--agent CMD`` or ``agent = "..."`` under ``[tool.cassette]``). Nothing runs; Diff
and Pin keep working on the main screen."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from .. import bindings
from ..text.loop import HOW_TO_CONFIGURE
from ..text.safe import printable
from .base import AppScreen


def no_agent_text(stage: str, problem: str | None) -> Text:
    """``Replay needs an agent`` and how to configure one."""
    text = Text(end="")
    text.append(f"{stage} needs an agent", style="bold underline")
    text.append(
        f"\n\n{stage} runs your agent with the cassette served offline; no agent command "
        "is configured, so nothing ran.\n\nTo configure one, "
    )
    text.append(printable(HOW_TO_CONFIGURE))
    text.append(".\n\n")
    if problem:
        text.append("why there is none: ", style="bold")
        text.append(printable(problem))
        text.append("\n\n")
    text.append("Diff and Pin work without an agent (q goes back to the main view).", style="dim")
    return text


class NoAgentScreen(AppScreen):
    """How to configure an agent, for ``stage`` ("Replay", "Gate"); q or escape goes back."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.NO_AGENT)
    KEYMAP_NAME = "no-agent screen"

    def __init__(self, stage: str) -> None:
        super().__init__()
        self.stage = stage

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="noagent-body"):
            yield Static(no_agent_text(self.stage, self.session.agent_problem), id="noagent-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#noagent-body").focus()

    def action_back(self) -> None:
        self.app.pop_screen()
