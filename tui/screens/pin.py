"""The pin preview: the fixture file (path and content) of the selected entry, before it
is written. Enter writes it; a file that exists already is replaced only after a second
enter; escape leaves without writing. Works without an agent: it only reads the loaded
cassette (``core.pin``)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from cassette_tui.core.loop.pin import PinError, PinPlan, write_pin
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from .. import bindings
from ..text.pin import pin_content, pin_heading, pin_prompt
from ..text.safe import describe_error


class PinScreen(ModalScreen[Path | None]):
    """Preview of ``plan``; dismissed with the written path, or ``None`` (cancelled)."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.PIN)
    KEYMAP_NAME = "pin preview"

    def __init__(self, plan: PinPlan) -> None:
        super().__init__()
        self.plan = plan
        #: the file exists and the user pressed enter once: the next enter replaces it
        self.armed = False

    def compose(self) -> ComposeResult:
        with Vertical(id="pin-box"):
            yield Static(pin_heading(self.plan), id="pin-heading")
            with VerticalScroll(id="pin-body"):
                yield Static(pin_content(self.plan), id="pin-content")
            yield Static(pin_prompt(self.plan, self.armed), id="pin-prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#pin-body").focus()

    def _prompt(self, error: str | None = None) -> None:
        self.query_one("#pin-prompt", Static).update(pin_prompt(self.plan, self.armed, error))

    def action_confirm(self) -> None:
        if self.plan.exists and not self.armed:
            self.armed = True
            self._prompt()
            return
        try:
            path = write_pin(self.plan, force=self.armed)
        except FileExistsError:  # written by someone else since the preview
            self.armed = True
            self._prompt()
            return
        except (PinError, OSError) as exc:  # PinError: plain words, as `pin` says them
            self._prompt(describe_error(exc))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:
        self.query_one("#pin-body", VerticalScroll).scroll_down(animate=False)

    def action_scroll_up(self) -> None:
        self.query_one("#pin-body", VerticalScroll).scroll_up(animate=False)
