"""One cassette alone: its steps, repeated keys, errors and lint findings."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from cassette_tui.core.lint import lint
from rich.console import RenderableType
from rich.text import Text
from textual import work

from ..bindings import SINGLE
from ..text.detail import Limits, single_detail
from ..text.rows import SEQ_WIDTH, SingleRows
from ..text.safe import describe_error, plain
from ..text.summary import file_label, single_summary
from .steps import StepsScreen


class SingleScreen(StepsScreen):
    """The steps of one cassette, marked with what ``core.lint`` found."""

    BINDINGS = SINGLE

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[Any] | None = None
        self.by_seq: dict[int, list[Any]] = {}

    def initial_summary(self) -> Text:
        return single_summary(self.app.a, None)  # type: ignore[attr-defined]

    def column_titles(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.search_term:
            text.append(" search: ", style="bold")
            text.append(self.search_term)
            text.append("  (n/N repeat, escape clears)", style="dim")
            return text
        cells = getattr(self.model, "seq_width", SEQ_WIDTH)
        text.append(f" {'seq':>{cells}}  {file_label(self.app.a)}", style="bold")  # type: ignore[attr-defined]
        return text

    def on_mount(self) -> None:
        super().on_mount()
        self.show_rows(SingleRows(self.app.a, {}), 0)  # type: ignore[attr-defined]
        self.run_lint()

    @work(thread=True, exclusive=True, exit_on_error=False, group="lint", description="lint")
    def run_lint(self) -> list[Any]:
        return lint(self.app.a)  # type: ignore[attr-defined]

    def worker_done(self, group: str, result: Any) -> None:
        if group == "lint":
            self._show_findings(result)
        else:
            super().worker_done(group, result)

    def worker_failed(self, group: str, error: BaseException | None) -> None:
        if group == "lint":
            summary = single_summary(self.app.a, None, f"lint failed: {describe_error(error)}")  # type: ignore[attr-defined]
            self.query_one("#summary").update(summary)  # type: ignore[attr-defined]
            self.show_rows(SingleRows(self.app.a, {}), self.steps.cursor)  # type: ignore[attr-defined]
        else:
            super().worker_failed(group, error)

    def _show_findings(self, findings: list[Any]) -> None:
        by_seq: dict[int, list[Any]] = defaultdict(list)
        for finding in findings:
            # a repeated key is marked on every recording of it, not only the first
            for seq in dict.fromkeys((*getattr(finding, "seqs", ()), finding.seq)):
                if seq is not None:
                    by_seq[seq].append(finding)
        self.findings, self.by_seq = findings, dict(by_seq)
        self.query_one("#summary").update(single_summary(self.app.a, findings))  # type: ignore[attr-defined]
        self.show_rows(SingleRows(self.app.a, self.by_seq), self.steps.cursor)  # type: ignore[attr-defined]

    def build_detail(self, index: int, limits: Limits, styles: Any) -> RenderableType:
        cassette = self.app.a  # type: ignore[attr-defined]
        return single_detail(
            cassette, index, self.by_seq.get(cassette.seq(index), []), limits, styles
        )

    def detail_placeholder(self, index: int) -> RenderableType:
        return plain(f"seq {self.app.a.seq(index)}", "bold")  # type: ignore[attr-defined]

    def no_more(self, direction: int) -> str:
        return "no more findings below" if direction > 0 else "no findings above"
