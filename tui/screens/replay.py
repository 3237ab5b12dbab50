"""The replay screen (``r`` on the main screen): one offline replay of cassette A with the
configured agent (``core.loop.replay.replay_job`` in a thread worker), in the words of
``cassette-tui replay`` (``tui/text/replay.py``): the run's status, the isolation, hits,
repeats, misses and unused entries. Each miss is a row; enter opens its nearest recorded
call with the differing argument paths highlighted (``MissScreen``); ``d`` opens the
replay's call log against the recorded cassette in the main view. Escape cancels a running
replay (its agent's process group is killed), escape again leaves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from cassette_tui.core.format.jobs import CancelToken, run_job
from cassette_tui.core.loop.replay import ReplayResult, replay_job
from cassette_tui.core.replay.report import Miss
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from .. import bindings
from ..messages import JobProgress, ReplayDone
from ..text.miss import miss_detail
from ..text.progress import progress_count
from ..text.replay import miss_line, misses, replay_head, replay_lines
from ..text.report import ReportLine
from ..text.safe import plain, printable
from ..widgets.step_list import StepList
from .detail_screen import DetailScreen
from .loop_job import LoopJobScreen

if TYPE_CHECKING:
    from cassette_tui.core.format.cassette import Cassette

Styles = Mapping[str, Style]


class MissRows:
    """The replay's misses as step-list rows: the call, then its nearest recorded seq and
    how many paths differ."""

    def __init__(self, found: Sequence[Miss]) -> None:
        self.found = list(found)

    def __len__(self) -> int:
        return len(self.found)

    def render(self, index: int, width: int, styles: Styles) -> Text:
        miss = self.found[index]
        nearest = miss.nearest
        if nearest:
            first = nearest[0]
            n = len(first.get("differences") or [])
            near = f"nearest seq {first.get('seq')}: {n} path{'s differ' if n != 1 else ' differs'}"
        else:
            near = "no call of this tool recorded"
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"{index + 1:>3} ", styles.get("steplist--seq"))
        text.append(f"{near}  ", styles.get("steplist--drift"))
        text.append(miss_line(miss, max(10, width)), styles.get("steplist--args"))
        return text

    def notable(self, index: int) -> bool:
        return True

    def matches(self, index: int, needle: str) -> bool:
        return needle in miss_line(self.found[index], 10_000).lower()

    def next_notable(self, start: int, direction: int) -> int | None:
        index = start + direction
        return index if 0 <= index < len(self.found) else None


#: how the replay screen styles the report's lines, by kind (the rest plain)
REPORT_STYLES = {
    "no_replay": "bold", "call_log": "dim", "stdout": "dim", "stderr": "dim", "files": "dim",
    "new": "bold",
}  # fmt: skip
#: how many of the agent's last lines of stdout, and of stderr, the screen shows (the
#: command: 10)
STDERR_LINES = 5


def report_line(line: ReportLine) -> Text:
    """One line of the report (``text/replay.py``) styled for the screen: the title's
    label a heading, the result's value bold, the call log with its key (``d``)."""
    text = Text(end="")
    if line.kind == "title":
        head = line.label.rstrip()
        text.append(head, style="bold underline")
        text.append(line.label[len(head) :])
        text.append(line.value, style="bold")
    elif line.kind == "result":
        text.append(line.label)
        text.append(line.value, style="bold")
    elif line.kind == "call_log":
        text.append(f"{line.text}  (d: against A)", style=REPORT_STYLES[line.kind])
    else:
        text.append(line.text, style=REPORT_STYLES.get(line.kind, ""))
    return text


def replay_report(result: ReplayResult | None, name: str, agent: str, note: str = "") -> Text:
    """The replay screen's report: the lines of ``cassette-tui replay``
    (``text/replay.py``'s ``replay_lines``) but the misses (they are rows); while the
    replay runs, its first lines and ``note``."""
    if result is None:
        lines = replay_head(name, agent)
    else:
        lines = [
            line
            for line in replay_lines(result, name, stderr_count=STDERR_LINES)
            if line.kind != "miss"
        ]
    text = Text("\n", end="").join(report_line(line) for line in lines)
    if result is None:
        text.append(f"\n{note or 'replaying… escape cancels'}", style="italic")
    return text


class ReplayScreen(LoopJobScreen):
    """One replay of A: the report above, the misses below (enter: the nearest call)."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.REPLAY)
    KEYMAP_NAME = "replay screen"
    STAGE = "replay"

    DEFAULT_CSS = """
    ReplayScreen #replay-report { height: 1fr; padding: 0 1; }
    ReplayScreen #misses-title { height: 1; padding: 0 1; text-style: bold; }
    ReplayScreen #misses { height: 3; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.result: ReplayResult | None = None
        self.rows = MissRows([])
        #: recorded calls left unused fail the replay (``s``; ``replay --strict``)
        self.strict = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="replay-report"):
            yield Static(self._report(), id="replay-text")
        yield Static("", id="misses-title")
        yield StepList(self.rows, id="misses")
        yield Footer()

    def on_mount(self) -> None:
        self.miss_list.display = False
        self.query_one("#misses-title").display = False
        self.query_one("#replay-report").focus()
        self.start()

    @property
    def miss_list(self) -> StepList:
        return self.query_one("#misses", StepList)

    def _report(self, note: str = "") -> Text:
        return replay_report(self.result, self.a_name(), self.agent.template, note)

    # -- the job ---------------------------------------------------------------------
    def start(self) -> None:
        try:
            path = self.cassette_path()
        except ValueError as exc:
            self.could_not_run(exc)
            return
        self.result = None
        self.rows = MissRows([])
        self.miss_list.set_model(self.rows)
        self.miss_list.display = False
        self.query_one("#misses-title").display = False
        self.query_one("#replay-text", Static).update(self._report())
        self.run_replay(path, self.begin())

    @work(thread=True, exclusive=True, exit_on_error=False, group="loop", description="replay")
    def run_replay(self, path: Any, token: CancelToken) -> None:
        session = self.session
        job = replay_job(path, self.agent, self.loop_options(), token=token, strict=self.strict)
        try:
            result = run_job(job, self.post_progress)
        except Exception as exc:  # noqa: BLE001 - shown on the screen
            self.could_not_run(exc)
            return
        session.loop.replay = result  # kept even when the screen was left meanwhile
        self.post_message(ReplayDone(result))

    @on(JobProgress)
    def _progress(self, message: JobProgress) -> None:
        p = message.progress
        if self.result is None:
            note = f"replaying ({progress_count(p)})… escape cancels"
            self.query_one("#replay-text", Static).update(self._report(note))

    @on(ReplayDone)
    def _done(self, message: ReplayDone) -> None:
        self.show_result(message.result)
        self.finish()

    def show_result(self, result: ReplayResult) -> None:
        """Show ``result`` (the report, the misses as rows)."""
        self.result = result
        self.query_one("#replay-text", Static).update(self._report())
        found = misses(result.run)
        self.rows = MissRows(found)
        title = self.query_one("#misses-title", Static)
        title.update(
            f"misses ({len(found)}, never served live) · enter: the nearest recorded call"
            if found
            else ""
        )
        title.display = bool(found)
        self.miss_list.display = bool(found)
        self.miss_list.styles.height = min(max(len(found), 1), 6)
        self.miss_list.set_model(self.rows)
        if found:
            self.miss_list.focus()

    def show_failure(self, text: str) -> None:
        self.query_one("#replay-text", Static).update(self._report(printable(text)))

    # -- keys ------------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        if self.miss_list.display:
            self.miss_list.move(1)
        else:
            self.query_one("#replay-report", VerticalScroll).scroll_down(animate=False)

    def action_cursor_up(self) -> None:
        if self.miss_list.display:
            self.miss_list.move(-1)
        else:
            self.query_one("#replay-report", VerticalScroll).scroll_up(animate=False)

    def action_open_miss(self) -> None:
        if self.result is None or not len(self.rows):
            self.app.notify("no miss to open: every call was served", timeout=3)
            return
        miss = self.rows.found[self.miss_list.cursor]
        self.app.push_screen(MissScreen(miss.to_json(), self.result.cassette))

    def action_diff(self) -> None:
        result = self.result
        if result is None or self.running:
            self.app.notify("the replay has not finished", timeout=3)
            return
        log = result.run.call_log
        if log is None or self.session.a is None:
            self.app.notify(
                printable(
                    f"no call log to diff: {result.run.error or 'the agent wrote no report'}"
                ),
                markup=False,
                timeout=5,
            )
            return
        label = f"A recorded {self.a_name()} · B the replay's call log ({result.run.status})"
        self.open_side_by_side(self.session.a, log, label)

    def action_strict(self) -> None:
        """Toggle ``--strict`` for this result and the next replay: the verdict changes,
        the run is not repeated (unused recordings are named either way)."""
        self.strict = not self.strict
        if self.result is not None:
            self.result.strict = self.strict
            self.query_one("#replay-text", Static).update(self._report())
        self.app.notify(
            "strict: recorded calls left unused fail the replay"
            if self.strict
            else "not strict: recorded calls left unused are named, not failed",
            timeout=3,
        )

    def action_again(self) -> None:
        if self.running:
            self.app.notify("a replay is running: escape cancels it", timeout=3)
            return
        self.start()


#: what the miss screen says while its detail is built
LOADING = "reading the nearest recorded call…"


class MissScreen(DetailScreen):
    """One miss: the call, its nearest recorded calls, the differing paths highlighted."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.MISS)
    KEYMAP_NAME = "miss screen"
    DETAIL_ID = "miss-detail"
    WHAT = "miss"

    DEFAULT_CSS = """
    MissScreen #miss-detail { height: 1fr; padding: 0 1; }
    """

    def __init__(self, miss: Mapping[str, Any], cassette: Cassette | None) -> None:
        super().__init__()
        self.miss = miss
        self.cassette = cassette

    def on_mount(self) -> None:
        self.detail.focus()
        # the nearest entry is read and pretty-printed in a worker: a short line until then
        self.detail.show(plain(LOADING, "dim"))
        miss, cassette, styles = self.miss, self.cassette, self.detail.styles_map()
        self.load(0, lambda: miss_detail(miss, cassette, styles), False)
