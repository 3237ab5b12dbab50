"""The debug loop panel (``l`` on the main screen): every stage of Record · Replay ·
Gate · Diff · Pin · Re-record (and Bisect) with what it found and how to run it; without
an agent, how to configure one. ``b`` closes it with ``"bisect"``: the step screen that
opened it starts the bisect screen (``screens/bisect.py``)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from .. import bindings
from ..text.loop import Stage, loop_panel


class LoopScreen(ModalScreen[str | None]):
    """The stages of the loop; escape, q or l goes back, b bisects A against B."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.LOOP)
    KEYMAP_NAME = "loop panel"

    def __init__(self, stages: list[Stage], agent_problem: str | None) -> None:
        super().__init__()
        self.stages = stages
        self.agent_problem = agent_problem

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="loop-body"):
            yield Static(loop_panel(self.stages, self.agent_problem), id="loop-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#loop-body").focus()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_bisect(self) -> None:
        self.dismiss("bisect")
