"""The detail pane: one step's detail (built by ``tui.text.detail``), scrollable.

The pane draws with Textual's line API: it asks ``LineLayout`` for the height of the
detail at its width and builds only the lines on screen, so an answer expanded to 2,000
lines that fold to 4,000 costs what a screen of it costs (it took most of a second when
the pane rendered the whole detail with Rich, issue 31). The lines are those Rich renders
for the whole detail (``tests/tui/test_line_layout.py``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..text.detail import DETAIL_STYLES
from ..text.line_layout import LineLayout
from ..text.safe import plain

#: lines kept drawn (a few screens of a long answer)
KEPT_STRIPS = 1_024


class DetailPane(ScrollView, can_focus=True):
    """A scrollable pane holding one step's detail."""

    COMPONENT_CLASSES: ClassVar[set[str]] = set(DETAIL_STYLES)

    DEFAULT_CSS = """
    DetailPane { overflow-x: hidden; overflow-y: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        #: what the pane shows: a Rich renderable (for tests and the benchmark)
        self.renderable: RenderableType = plain("no step selected", "dim")
        self._layout: LineLayout | None = None
        self._layout_style: Style | None = None
        #: the lines drawn, by (line, width): a scroll draws most of them again
        self._strips: dict[tuple[int, int], Strip] = {}

    def show(self, renderable: RenderableType, *, keep_scroll: bool = False) -> None:
        self.renderable = renderable
        self._layout = None  # laid out on the next frame, at the width it has then
        self._strips.clear()
        self._fit()
        self.refresh()
        if not keep_scroll:
            self.scroll_home(animate=False, immediate=True)

    def _lines(self) -> LineLayout:
        # the style under every line, as Static applies it (its colours follow the theme)
        style = self.visual_style.rich_style
        if self._layout is None or style != self._layout_style:
            app = self.app
            self._layout = LineLayout(self.renderable, app.console, app.console_options, style)
            self._layout_style = style
            self._strips.clear()
        return self._layout

    def _fit(self) -> None:
        """The virtual size: the detail's height at the width left by the scrollbar, which
        shows only when the detail is taller than the pane."""
        width, height = self.container_size
        if width <= 0:
            return  # not laid out yet: on_resize fits it
        layout = self._lines()
        scrolls = self.styles.overflow_y != "hidden"
        # a long detail is laid out at the narrower width only (its height is known
        # to pass the pane's from its text lines alone)
        lines = -1 if scrolls and layout.least() > height else layout.height(width)
        if lines > height or lines < 0:
            width = max(1, width - self.styles.scrollbar_size_vertical)
            lines = layout.height(width)
        self.virtual_size = Size(width, lines)

    def on_resize(self) -> None:
        self._fit()

    def render_line(self, y: int) -> Strip:
        row, width = self.scroll_offset.y + y, self.virtual_size.width
        strip = self._strips.get((row, width))
        if strip is None:
            if len(self._strips) > KEPT_STRIPS:
                self._strips.clear()
            found = self._lines().lines(width, row, row + 1)
            # not padded: Textual pads a line with the pane's background, as it did the
            # Static's
            strip = Strip(found[0]).crop(0, width) if found else Strip([])
            self._strips[(row, width)] = strip
        return strip

    def styles_map(self) -> dict[str, Style]:
        """Theme colours for the builders (resolved here, on the UI thread)."""
        return {name: self.get_component_rich_style(name) for name in DETAIL_STYLES}

    def body_text(self, width: int | None = None) -> str:
        """What the pane shows, as plain text, every line (for tests and the step view
        title), laid out at ``width`` cells (default: the pane's whole width)."""
        return self._lines().text(width or max(20, self.size.width or 80)) + "\n"
