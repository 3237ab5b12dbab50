"""The step list: one line per aligned row, drawn with Textual's Line API.

Only the rows in view are rendered (``render_line``), each once: an LRU cache keeps the
rendered strips, keyed by row, width and whether the cursor is on it. Two 100k-step
cassettes open as fast as ten steps, because nothing here walks all rows to draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..text.rows import RowModel, unreadable_reason

_STYLE_NAMES = (
    "steplist--same",
    "steplist--row",
    "steplist--drift",
    "steplist--only",
    "steplist--repeat",
    "steplist--error",
    "steplist--seq",
    "steplist--args",
    "steplist--filler",
    "steplist--cursor",
    "steplist--cursor-blurred",
)


class StepList(ScrollView, can_focus=True, inherit_bindings=False):
    """A cursor over the rows of a ``RowModel``; posts ``Highlighted`` when it moves.

    It has no bindings of its own (a scroll view's up/down/page keys would scroll the view
    and leave the cursor behind): the screen's keys move the cursor, the view follows.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = set(_STYLE_NAMES)

    DEFAULT_CSS = """
    StepList {
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    """

    cursor: reactive[int] = reactive(0, always_update=False, repaint=False)

    class Highlighted(Message):
        """The cursor moved to ``index``."""

        def __init__(self, step_list: StepList, index: int) -> None:
            super().__init__()
            self.step_list = step_list
            self.index = index

    def __init__(self, model: RowModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self._strips: LRUCache[tuple[int, int, str], Strip] = LRUCache(maxsize=1024)
        self._styles: dict[str, Style] | None = None
        #: a mark drawn at the right end of a row, over what the row shows there:
        #: ``row_note(index, width)`` gives it (``None``: none); ``redraw`` after a change
        self.row_note: Callable[[int, int], Text | None] | None = None

    # -- data ------------------------------------------------------------------------
    def set_model(self, model: RowModel, cursor: int = 0) -> None:
        """Show other rows (another alignment) and put the cursor on ``cursor``."""
        self.model = model
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(model))
        self.set_reactive(StepList.cursor, -1)
        self.cursor = self._clamp(cursor)
        self.refresh()

    def _clamp(self, index: int) -> int:
        return max(0, min(index, len(self.model) - 1))

    def redraw(self) -> None:
        """Render every row again (the model shows its rows otherwise now: ``v``)."""
        self._strips.clear()
        self.refresh()

    def on_mount(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.model))
        self.post_message(self.Highlighted(self, self.cursor))

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.model))
        self._strips.clear()
        self._scroll_cursor_into_view()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._strips.clear()

    def on_focus(self) -> None:
        self.refresh_line_of(self.cursor)

    def on_blur(self) -> None:
        self.refresh_line_of(self.cursor)

    # -- cursor ------------------------------------------------------------------------
    def validate_cursor(self, cursor: int) -> int:
        return self._clamp(cursor)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line_of(old)
        self.refresh_line_of(new)
        self._scroll_cursor_into_view()
        self.post_message(self.Highlighted(self, new))

    def refresh_line_of(self, index: int) -> None:
        """Redraw row ``index`` if it is on screen."""
        y = index - self.scroll_offset.y
        if 0 <= y < self.size.height:
            self.refresh_line(index)

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def move(self, delta: int) -> None:
        self.cursor = self._clamp(self.cursor + delta)

    def page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self.move(direction * height)

    def first(self) -> None:
        self.cursor = 0

    def last(self) -> None:
        self.cursor = max(0, len(self.model) - 1)

    def next_notable(self, direction: int) -> bool:
        """Move to the next (``1``) or previous (``-1``) notable row (not ``same``, a
        finding, a task with a pair): the model answers from its index, at any size."""
        index = self.model.next_notable(self.cursor, direction)
        if index is None:
            return False
        self.cursor = index
        return True

    # -- drawing -----------------------------------------------------------------------
    @property
    def styles_map(self) -> dict[str, Style]:
        if self._styles is None:
            self._styles = {name: self.get_component_rich_style(name) for name in _STYLE_NAMES}
        return self._styles

    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        width = self.scrollable_content_region.width or self.size.width
        if index >= len(self.model) or width <= 0:
            return Strip.blank(width, self.rich_style)
        state = "cursor" if index == self.cursor else ""
        if state and not self.has_focus:
            state = "cursor-blurred"
        key = (index, width, state)
        strip = self._strips.get(key)
        if strip is None:
            styles = self.styles_map
            try:
                text = self.model.render(index, width - 1, styles)
            except Exception as exc:  # noqa: BLE001 - one bad row must not end the app
                text = Text(unreadable_reason(exc), styles["steplist--error"], end="")
            text.truncate(width - 1, pad=True)
            note = self.row_note(index, width - 1) if self.row_note is not None else None
            if note is not None:  # beside the row, so it scrolls with it
                text.truncate(max(0, width - 2 - note.cell_len), pad=True)
                text.append(" ")
                text.append_text(note)
                text.truncate(width - 1, pad=True)
            pointer = Segment("▶" if state else " ", styles["steplist--cursor"] if state else None)
            segments = [pointer, *text.render(self.app.console)]
            strip = Strip(segments).adjust_cell_length(width)
            if state:
                strip = strip.apply_style(styles[f"steplist--{state}"])
            strip = strip.apply_style(self.rich_style)
            self._strips[key] = strip
        return strip
