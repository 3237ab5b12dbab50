"""The header of a step screen (its text is built by ``tui.text.summary``)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

#: lines the header holds before it grows by one (``-tall``: a run's outcome line)
LINES = 3


class SummaryHeader(Static):
    """The top lines of a step screen: three, or four with the runs' outcome line."""

    DEFAULT_CSS = """
    SummaryHeader { height: auto; max-height: 4; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, content: Text, *, id: str | None = None) -> None:
        super().__init__(content, id=id)
        self._fit(content)

    def show(self, content: Text) -> None:
        self.update(content)

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        self._fit(content)
        super().update(content, layout=layout)

    def _fit(self, content: Any) -> None:
        lines = content.plain.count("\n") + 1 if isinstance(content, Text) else 1
        self.set_class(lines > LINES, "-tall")
