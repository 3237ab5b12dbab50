"""The detail pane: one step's detail (built by ``tui.text.detail``), scrollable."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, RenderableType
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..text.detail import DETAIL_STYLES
from ..text.safe import plain


class DetailPane(VerticalScroll, can_focus=True):
    """A scrollable pane holding one step's detail."""

    COMPONENT_CLASSES: ClassVar[set[str]] = set(DETAIL_STYLES)

    DEFAULT_CSS = """
    DetailPane > Static { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(plain("no step selected", "dim"), id="detail-body")

    def show(self, renderable: RenderableType, *, keep_scroll: bool = False) -> None:
        self.query_one("#detail-body", Static).update(renderable)
        if not keep_scroll:
            self.scroll_home(animate=False, immediate=True)

    def styles_map(self) -> dict[str, Style]:
        """Theme colours for the builders (resolved here, on the UI thread)."""
        return {name: self.get_component_rich_style(name) for name in DETAIL_STYLES}

    def body_text(self) -> str:
        """What the pane shows, as plain text (for tests and the step view title)."""
        content = self.query_one("#detail-body", Static).content
        if isinstance(content, str):
            return content
        console = Console(width=max(20, self.size.width or 80), color_system=None)
        with console.capture() as capture:
            console.print(content)
        return capture.get()
