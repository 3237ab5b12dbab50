"""The run selector: a file that holds many runs (tau-bench results, an inspect_ai log),
opened without picking one, lists its runs by task, and opens a task's failing trial (A)
against a passing one (B), any two marked trials, or one run alone.

The rows are drawn with the step list's Line API (only the rows in view are rendered, an
LRU cache keeps them), so thousands of runs open and filter at once. ``q`` on a run opened
from here comes back to the selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from cassette_tui.core.format.multi_run import RunInfo, TaskGroup, group_runs
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.keys.normalize import NormalizationRules
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Footer, Input, Static

from ..bindings import PAIR_FROM_RUNS, RUNS, SINGLE_FROM_RUNS
from ..messages import GroupReady, RunsOpened, WorkerFailed
from ..text.safe import printable
from ..widgets.step_list import StepList
from ..widgets.summary import SummaryHeader
from ..widgets.text_input import TextInput
from .base import AppScreen
from .pair import PairScreen
from .single import SingleScreen

Styles = Mapping[str, Style]

#: Width of the task column; longer task ids push the rest of their row to the right.
TASK_WIDTH = 8

PASS, FAIL, UNSCORED = "✓", "✗", "?"


@dataclass(frozen=True)
class RunSource:
    """A file of many runs to choose from.

    Attributes:
        path: the file.
        runs: its runs (``RunSelectionError.runs`` or ``core.sources.list_runs``).
        fmt: the file's format, so that opening a run does not detect it again.
        task: start on this task (``--task``, ``FILE#task=31``) and open its pass/fail
            pair at once (or its only trial).
        rules: normalization rules for the runs' keys (``--config``); ``None``: none.
    """

    path: Path
    runs: list[RunInfo]
    fmt: str | None = None
    task: str | None = None
    #: the normalization rules the runs open with (``--config``), as in ``diff``
    rules: NormalizationRules | None = None

    def spec(self, run: RunInfo) -> str:
        """The path spec that opens ``run``: ``FILE#task=31,trial=2``."""
        return str(self.path) + run.spec_suffix()


def outcome(run: RunInfo) -> tuple[str, str, str]:
    """``(glyph, word, style name)`` of a run's result."""
    if run.passed is None:
        return UNSCORED, "?", "runlist--muted"
    return (PASS, "pass", "runlist--pass") if run.passed else (FAIL, "fail", "runlist--fail")


def trial_name(run: RunInfo) -> str:
    return f"trial {run.trial}" if run.trial is not None else f"run {run.index}"


def column_titles() -> str:
    return f" {'task':<{TASK_WIDTH}}{'trial':>5}  {'result':<7}{'reward':>7}{'calls':>7}  mark"


class RunRows:
    """The selector's rows: a heading per task, then its trials; only the tasks whose id
    contains the filter text (case-insensitive)."""

    def __init__(
        self, groups: list[TaskGroup], marks: Mapping[str, RunInfo], filter_text: str = ""
    ) -> None:
        self.marks = {run.index: side for side, run in marks.items()}
        needle = filter_text.strip().lower()
        self.lines: list[tuple[TaskGroup, RunInfo | None]] = []
        self.tasks = 0
        for group in groups:
            if needle and needle not in group.task.lower():
                continue
            self.tasks += 1
            self.lines.append((group, None))
            self.lines.extend((group, run) for run in group.runs)

    def __len__(self) -> int:
        return len(self.lines)

    def line(self, index: int) -> tuple[TaskGroup, RunInfo | None]:
        return self.lines[index]

    def index_of(self, group: TaskGroup, run: RunInfo | None = None) -> int | None:
        want = run.index if run is not None else None
        for index, (g, r) in enumerate(self.lines):
            if g.task == group.task and (r.index if r is not None else None) == want:
                return index
        return None

    def render(self, index: int, width: int, styles: Styles) -> Text:
        group, run = self.lines[index]
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if run is None:
            self._task_line(text, group, styles)
        else:
            self._run_line(text, run, styles)
        text.truncate(width, overflow="ellipsis", pad=True)
        return text

    def _task_line(self, text: Text, group: TaskGroup, styles: Styles) -> None:
        task = printable(group.task) or "(no task)"
        text.append(f"{task:<{TASK_WIDTH}}", styles.get("runlist--task"))
        n = len(group.runs)
        text.append(f"{n} trial{'' if n == 1 else 's'}:", styles.get("runlist--task"))
        unscored = n - group.passed - group.failed
        for count, glyph, style in (
            (group.passed, PASS, "runlist--pass"),
            (group.failed, FAIL, "runlist--fail"),
            (unscored, UNSCORED, "runlist--muted"),
        ):
            if count:
                text.append(f" {count}{glyph}", styles.get(style))
        if group.pair is not None:
            a, b = group.pair
            text.append("   enter: ", styles.get("runlist--muted"))
            text.append(f"A {trial_name(a)} {FAIL}", styles.get("runlist--fail"))
            text.append(" vs ", styles.get("runlist--muted"))
            text.append(f"B {trial_name(b)} {PASS}", styles.get("runlist--pass"))
        elif n > 1:
            text.append("   no pass/fail pair", styles.get("runlist--muted"))

    def _run_line(self, text: Text, run: RunInfo, styles: Styles) -> None:
        trial = str(run.trial) if run.trial is not None else "-"
        text.append(f"{'':<{TASK_WIDTH}}{trial:>5}  ")
        glyph, word, style = outcome(run)
        text.append(f"{glyph} {word:<5}", styles.get(style))
        reward = f"{run.reward:.2f}" if run.reward is not None else "-"
        text.append(f"{reward:>7}{run.calls:>7}  ")
        side = self.marks.get(run.index)
        if side is not None:
            text.append(f" {side} ", styles.get("runlist--mark"))

    def notable(self, index: int) -> bool:
        """A task heading with a pass/fail pair (n/N jump between them)."""
        group, run = self.lines[index]
        return run is None and group.pair is not None

    def matches(self, index: int, needle: str) -> bool:
        return needle in self.lines[index][0].task.lower()

    def next_notable(self, start: int, direction: int) -> int | None:
        stop = len(self.lines) if direction > 0 else -1
        return next((i for i in range(start + direction, stop, direction) if self.notable(i)), None)


class RunList(StepList):
    """The step list's Line API with the selector's colours (pass, fail, marks)."""

    EXTRA_STYLES: ClassVar[tuple[str, ...]] = (
        "runlist--task",
        "runlist--pass",
        "runlist--fail",
        "runlist--muted",
        "runlist--mark",
    )
    COMPONENT_CLASSES: ClassVar[set[str]] = StepList.COMPONENT_CLASSES | set(EXTRA_STYLES)

    DEFAULT_CSS = """
    RunList > .runlist--task { text-style: bold; }
    RunList > .runlist--pass { color: $success; }
    RunList > .runlist--fail { color: $error; }
    RunList > .runlist--muted { color: $text-muted; }
    RunList > .runlist--mark { text-style: bold reverse; }
    """

    @property
    def styles_map(self) -> dict[str, Style]:
        styles = super().styles_map
        if self.EXTRA_STYLES[0] not in styles:
            for name in self.EXTRA_STYLES:
                styles[name] = self.get_component_rich_style(name)
        return styles


class SelectScreen(AppScreen):
    """The runs of one file by task: enter opens a pass/fail pair or a run."""

    BINDINGS: ClassVar[list[BindingType]] = list(RUNS)
    KEYMAP_NAME = "run selector"

    DEFAULT_CSS = """
    SelectScreen #runs { height: 1fr; min-height: 4; }
    SelectScreen #runs-filter { display: none; dock: bottom; margin-bottom: 1; height: 3; }
    SelectScreen #runs-filter.-open { display: block; }
    """

    def __init__(self, source: RunSource) -> None:
        super().__init__()
        self.source = source
        self.groups = group_runs(source.runs)
        self.marks: dict[str, RunInfo] = {}
        self.filter_text = ""
        self.model = RunRows(self.groups, self.marks)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield SummaryHeader(self.summary(), id="summary")
        yield Static(self.columns_line(), id="columns")
        yield RunList(self.model, id="runs")
        yield TextInput(placeholder="filter tasks by id", id="runs-filter")
        yield Footer()

    @property
    def runs(self) -> RunList:
        return self.query_one("#runs", RunList)

    def on_mount(self) -> None:
        self.runs.focus()
        task = self.source.task
        if task is None:
            return
        group = next((g for g in self.groups if g.task == task), None)
        if group is None:
            self.app.notify(f"no task {printable(task)} in this file", markup=False)
            return
        self.runs.cursor = self.model.index_of(group) or 0
        if group.pair is not None:
            self.open_runs(*group.pair)
        elif len(group.runs) == 1:
            self.open_runs(group.runs[0], None)
        else:
            self.app.notify(
                f"task {printable(task)} has no passing and failing trial to pair: "
                "open one with enter, or mark two with space",
                markup=False,
            )

    def summary(self) -> Text:
        runs = self.source.runs
        passed = sum(1 for run in runs if run.passed is True)
        failed = sum(1 for run in runs if run.passed is False)
        paired = sum(1 for group in self.groups if group.pair is not None)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append("runs in ", style="bold")
        text.append(printable(self.source.path.name))
        if self.source.fmt:
            text.append(f" ({printable(self.source.fmt)})")
        text.append(f"\n{len(runs)} runs · {len(self.groups)} tasks · ")
        text.append(f"{passed} {PASS} pass · {failed} {FAIL} fail · ")
        text.append(f"{paired} tasks with both\n")
        if self.marks:
            text.append("marked: ", style="bold")
            for side in ("A", "B"):
                run = self.marks.get(side)
                label = f"task {printable(run.task or '-')} {trial_name(run)}" if run else "—"
                text.append(f"{side} {label}  ")
            text.append(
                "enter opens them" if len(self.marks) == 2 else "space marks the other",
                style="dim",
            )
        else:
            text.append(
                "enter: a task's failing (A) vs passing (B) trial, or one trial alone",
                style="dim",
            )
        return text

    def columns_line(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.filter_text:
            text.append(" filter: ", style="bold")
            text.append(printable(self.filter_text))
            shown = self.model.tasks
            text.append(
                f"  {shown} of {len(self.groups)} tasks (escape clears)"
                if shown
                else "  no task matches (escape clears)",
                style="dim",
            )
            return text
        text.append(column_titles(), style="bold")
        return text

    def refresh_header(self) -> None:
        self.query_one("#summary", SummaryHeader).update(self.summary())
        self.query_one("#columns", Static).update(self.columns_line())

    def show_model(self, cursor: int) -> None:
        self.model = RunRows(self.groups, self.marks, self.filter_text)
        self.runs.set_model(self.model, cursor)
        self.refresh_header()

    def current(self) -> tuple[TaskGroup, RunInfo | None] | None:
        if not len(self.model):
            return None
        return self.model.line(self.runs.cursor)

    # -- actions: moving ------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.runs.move(1)

    def action_cursor_up(self) -> None:
        self.runs.move(-1)

    def action_page_down(self) -> None:
        self.runs.page(1)

    def action_page_up(self) -> None:
        self.runs.page(-1)

    def action_first(self) -> None:
        self.runs.first()

    def action_last(self) -> None:
        self.runs.last()

    def action_next_pair(self) -> None:
        if not self.runs.next_notable(1):
            self.app.notify("no more tasks with a pass and a fail below", timeout=2)

    def action_previous_pair(self) -> None:
        if not self.runs.next_notable(-1):
            self.app.notify("no tasks with a pass and a fail above", timeout=2)

    # -- actions: filter ------------------------------------------------------------------
    def action_filter(self) -> None:
        bar = self.query_one("#runs-filter", Input)
        bar.add_class("-open")
        bar.value = self.filter_text
        # focus now, not after the queued keys: "/31⏎" typed (or pasted) at once over SSH
        # must all land in the filter
        self.set_focus(bar)

    @on(Input.Changed, "#runs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.apply_filter(event.value)

    @on(Input.Submitted, "#runs-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.input.remove_class("-open")
        self.set_focus(self.runs)

    def apply_filter(self, text: str) -> None:
        """Show the tasks whose id contains ``text``; the cursor stays on its row when that
        is still shown, else goes to the task named exactly ``text``, else to the top."""
        text = text.strip()
        if text == self.filter_text:
            return
        here = self.current()
        self.filter_text = text
        model = RunRows(self.groups, self.marks, text)
        cursor = model.index_of(*here) if here is not None else None
        if cursor is None:
            exact = next((g for g, r in model.lines if r is None and g.task == text), None)
            cursor = model.index_of(exact) if exact is not None else 0
        self.model = model
        self.runs.set_model(model, cursor or 0)
        self.refresh_header()

    def action_clear(self) -> None:
        bar = self.query_one("#runs-filter", Input)
        if bar.has_class("-open"):
            bar.remove_class("-open")
            self.set_focus(self.runs)
        elif self.filter_text:
            self.apply_filter("")
        elif self.marks:
            self.marks.clear()
            self.show_model(self.runs.cursor)

    # -- actions: marking and opening -----------------------------------------------------
    def action_mark(self) -> None:
        here = self.current()
        if here is None:
            return
        _, run = here
        if run is None:
            self.app.notify("space marks a trial: move down to one of this task's trials")
            return
        side = next((s for s, r in self.marks.items() if r.index == run.index), None)
        if side is not None:
            del self.marks[side]
        elif "A" not in self.marks:
            self.marks["A"] = run
        elif "B" not in self.marks:
            self.marks["B"] = run
        else:
            self.app.notify("A and B are marked: enter opens them; space on one unmarks it")
            return
        self.show_model(self.runs.cursor)

    def action_choose(self) -> None:
        if "A" in self.marks and "B" in self.marks:
            a, b = self.marks["A"], self.marks["B"]
            self.marks.clear()
            self.show_model(self.runs.cursor)
            self.open_runs(a, b)
            return
        here = self.current()
        if here is None:
            return
        group, run = here
        if run is not None:
            self.open_runs(run, None)
        elif group.pair is not None:
            self.open_runs(*group.pair)
        elif len(group.runs) == 1:
            self.open_runs(group.runs[0], None)
        else:
            self.app.notify(
                f"task {printable(group.task)} has no passing and failing trial to pair: "
                "open one trial with enter, or mark two with space",
                markup=False,
            )

    @work(thread=True, exclusive=True, exit_on_error=False, group="open", description="open")
    def open_runs(self, a: RunInfo, b: RunInfo | None) -> None:
        """Open run ``a`` (and ``b``) as cassettes, off the UI thread."""
        fmt = self.source.fmt
        rules = self.source.rules
        try:
            first = open_cassette(self.source.spec(a), fmt=fmt, rules=rules)
            second = (
                open_cassette(self.source.spec(b), fmt=fmt, rules=rules) if b is not None else None
            )
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("cannot open the run", exc))
            return
        self.post_message(RunsOpened(first, second))

    @on(RunsOpened)
    def _runs_opened(self, message: RunsOpened) -> None:
        if not self.is_current:
            return  # a second enter while the first run opened: it is on screen already
        self.app.show_runs(message.a, message.b)

    def action_tree(self) -> None:
        """w: the task under the cursor, its runs grouped by where they part, as a tree."""
        here = self.current()
        if here is not None:
            self.group_task(here[0].task)

    @work(thread=True, exclusive=True, exit_on_error=False, group="open", description="group")
    def group_task(self, task: str) -> None:
        """Group ``task``'s runs (``core.why.grouping``) off the UI thread."""
        from cassette_tui.core.why.grouping import group_by_task, runs_of

        source = self.source
        spec = str(source.path) + (f"#from={source.fmt}" if source.fmt else "")
        try:
            groups = group_by_task(runs_of([spec], source.rules, task))
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("cannot group the runs", exc))
            return
        self.post_message(GroupReady(source.path.name, groups))

    @on(GroupReady)
    def _group_ready(self, message: GroupReady) -> None:
        from .group import GroupScreen, GroupSource

        if self.is_current:
            self.app.push_screen(
                GroupScreen(GroupSource(message.title, message.groups, self.source.rules))
            )

    def report_failure(self, failure: WorkerFailed) -> None:
        """The error's own words, as the notification."""
        self.app.notify(
            printable(f"{failure.what}: {failure.error}"),
            title="error",
            severity="error",
            markup=False,
        )

    def action_back(self) -> None:
        """q: the selector is the first view, so going back quits."""
        self.app.exit()


class RunPairScreen(PairScreen):
    """A failing/passing pair opened from the selector; q goes back to it."""

    BINDINGS: ClassVar[list[BindingType]] = list(PAIR_FROM_RUNS)

    def action_back(self) -> None:
        self.app.pop_screen()


class RunSingleScreen(SingleScreen):
    """One run opened from the selector; q goes back to it."""

    BINDINGS: ClassVar[list[BindingType]] = list(SINGLE_FROM_RUNS)

    def action_back(self) -> None:
        self.app.pop_screen()


__all__ = [
    "RunList",
    "RunPairScreen",
    "RunRows",
    "RunSingleScreen",
    "RunSource",
    "SelectScreen",
    "TaskGroup",
    "group_runs",
]
