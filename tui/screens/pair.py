"""The main screen: two cassettes side by side, step-aligned by seq or by call key."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual import work

from ..bindings import PAIR
from ..text.detail import Limits, pair_detail, pair_title
from ..text.rows import SEQ_WIDTH, PairRows
from ..text.safe import describe_error, printable
from ..text.summary import file_label, loading_summary, pair_summary
from .steps import StepsScreen


class PairScreen(StepsScreen):
    """A on the left, B on the right, the status mark between, the detail below."""

    BINDINGS = PAIR
    result: Any = None

    def initial_summary(self) -> Text:
        return loading_summary(self.app.a, self.app.b, f"diffing by {self.app.align}…")  # type: ignore[attr-defined]

    def column_titles(self) -> Text:
        # the step list: a pointer column, side A, a 3-cell mark, side B, a scrollbar
        width = (self.size.width or self.app.size.width) - 1
        side = max(10, (width - 1 - 3) // 2)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        cells = getattr(self.model, "seq_width", SEQ_WIDTH)
        a = f"{'seq':>{cells}}  A {file_label(self.app.a)}"  # type: ignore[attr-defined]
        b = f"{'seq':>{cells}}  B {file_label(self.app.b)}"  # type: ignore[attr-defined]
        text.append(f" {a[:side]:<{side}}", style="bold")
        text.append("   ")
        text.append(b[:side], style="bold")
        if self.search_term:
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            text.append(" search: ", style="bold")
            text.append(printable(self.search_term))
            text.append("  (n/N repeat, escape clears)", style="dim")
        return text

    def on_mount(self) -> None:
        super().on_mount()
        self.compute_diff(self.app.align, None)  # type: ignore[attr-defined]

    def on_resize(self) -> None:
        self.refresh_columns()

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff", description="diff")
    def compute_diff(
        self, align: str, keep: tuple[int | None, int | None] | None
    ) -> tuple[Any, PairRows, int]:
        result = self.app.diff(align)  # type: ignore[attr-defined]
        cursor = 0
        if keep is not None:
            cursor = _row_of(result.rows, keep)
        elif result.first_divergence is not None:
            cursor = result.first_divergence
        return result, PairRows(result), cursor

    @work(
        thread=True, exclusive=True, exit_on_error=False, group="diagnose", description="diagnosis"
    )
    def diagnose(self, result: Any) -> tuple[Any, Text]:
        # the diagnosis can take longer than the rows: the header says so until it lands
        _, error = diagnosis(result)
        return result, pair_summary(result, with_findings=True, findings_error=error)

    def worker_failed(self, group: str, error: BaseException | None) -> None:
        if group != "diff":
            super().worker_failed(group, error)
            return
        # the engine could not align the runs this way: say so, and keep the rows shown
        # before (the other alignment), or none, instead of "diffing…" forever
        failed = self.app.align  # type: ignore[attr-defined]
        if self.result is not None:
            self.app.align = self.result.align  # type: ignore[attr-defined]
        text = loading_summary(self.app.a, self.app.b, "")  # type: ignore[attr-defined]
        text.append(printable(f"diff by {failed} failed: {describe_error(error)}"), style="bold")
        self.query_one("#summary").update(text)  # type: ignore[attr-defined]
        self.steps.loading = False

    def worker_done(self, group: str, result: Any) -> None:
        if group == "diff":
            diff, rows, cursor = result
            self.result = diff
            self.query_one("#summary").update(pair_summary(diff, with_findings=False))  # type: ignore[attr-defined]
            self.show_rows(rows, cursor)
            self.diagnose(diff)
        elif group == "diagnose":
            diff, summary = result
            if diff is self.result:
                self.query_one("#summary").update(summary)  # type: ignore[attr-defined]
        else:
            super().worker_done(group, result)

    def build_detail(self, index: int, limits: Limits, styles: Any) -> RenderableType:
        result = self.result
        drift = result.drift(index)
        return pair_detail(result, index, drift, limits, styles, diagnosis(result)[0])

    def detail_placeholder(self, index: int) -> RenderableType:
        return pair_title(self.result.rows[index])

    def action_toggle_align(self) -> None:
        if self.result is None:
            return
        align = "key" if self.app.align == "seq" else "seq"  # type: ignore[attr-defined]
        self.app.align = align  # type: ignore[attr-defined]
        row = self.result.rows[self.steps.cursor] if len(self.model) else None
        keep = (row.a, row.b) if row is not None else None
        self.steps.loading = True
        self.query_one("#summary").update(  # type: ignore[attr-defined]
            loading_summary(self.app.a, self.app.b, f"diffing by {align}…")  # type: ignore[attr-defined]
        )
        self.compute_diff(align, keep)

    def action_first_divergence(self) -> None:
        if self.result is not None and self.result.first_divergence is not None:
            self.steps.cursor = self.result.first_divergence


def diagnosis(result: Any) -> tuple[list[Any], str | None]:
    """The result's findings, or ``[]`` and why the engine could not give them (the rows
    and the drift are still worth showing when the diagnosis fails)."""
    try:
        return list(result.findings), None
    except Exception as exc:  # noqa: BLE001 - shown to the user, never swallowed silently
        return [], f"diagnosis failed: {describe_error(exc)}"


def _row_of(rows: list[Any], keep: tuple[int | None, int | None]) -> int:
    """The row that holds A's entry ``keep[0]`` (else B's ``keep[1]``) after realigning."""
    a, b = keep
    for side, wanted in (("a", a), ("b", b)):
        if wanted is None:
            continue
        for index, row in enumerate(rows):
            if getattr(row, side) == wanted:
                return index
    return 0
