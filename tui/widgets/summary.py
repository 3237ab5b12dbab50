"""The header of a step screen (its text is built by ``tui.text.summary``)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class SummaryHeader(Static):
    """The top lines of a step screen."""

    DEFAULT_CSS = """
    SummaryHeader { height: auto; max-height: 3; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, content: Text, *, id: str | None = None) -> None:
        super().__init__(content, id=id)

    def show(self, content: Text) -> None:
        self.update(content)
