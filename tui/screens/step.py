"""One step full-screen: the detail pane with the whole height, n/N to walk the diffs."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import BindingType

from ..bindings import STEP
from .detail_screen import DetailScreen

if TYPE_CHECKING:
    from .steps import StepsScreen


class StepScreen(DetailScreen):
    """The step under the cursor of ``owner``, full-screen. q or escape goes back."""

    BINDINGS: ClassVar[list[BindingType]] = list(STEP)
    KEYMAP_NAME = "step screen"
    DETAIL_ID = "step-detail"
    WHAT = "step"

    def __init__(self, owner: StepsScreen, index: int) -> None:
        super().__init__()
        self.owner = owner
        self.index = index

    def on_mount(self) -> None:
        self.detail.focus()
        self.show_step(self.index)

    def show_step(self, index: int, keep_scroll: bool = False) -> None:
        self.index = index
        if not keep_scroll:
            self.detail.show(self.owner.detail_placeholder(index))
        owner = self.owner
        limits = owner.limits(owner.expanded)
        styles = self.detail.styles_map()
        self.load(index, lambda: owner.build_detail(index, limits, styles), keep_scroll)

    def _walk(self, direction: int) -> None:
        steps = self.owner.steps
        if steps.next_notable(direction):
            self.show_step(steps.cursor)
        else:
            self.app.notify(self.owner.no_more(direction), markup=False, timeout=2)

    def action_next_step(self) -> None:
        self._walk(1)

    def action_previous_step(self) -> None:
        self._walk(-1)

    def action_toggle_expand(self) -> None:
        self.owner.expanded = not self.owner.expanded
        self.show_step(self.index, keep_scroll=True)

    def action_toggle_reveal(self) -> None:
        """v: show secrets whole, or mask them again (shared with the list's detail pane)."""
        self.owner.revealed = not self.owner.revealed
        self.show_step(self.index, keep_scroll=True)
        if len(self.owner.model):  # the list's pane below must not keep the old choice
            self.owner.start_detail(self.owner.steps.cursor, keep_scroll=True)
