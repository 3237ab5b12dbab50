"""The gate screen (``t`` on the main screen): N offline replays of cassette A
(``core.loop.gate.gate_job`` in a thread worker; N is asked first, 20 by default, enter starts),
a progress bar with live tallies (``3 ✓ 1 ✗``) from the job's ``Progress`` events, the
verdict in words and in the words of ``cassette-tui gate`` (``tui/text/gate.py``), where the
runs part, and a table of the runs (each listed as soon as it ends: the job hands its
``RunResult`` out with the progress event).

Any two runs open side by side in a main view pushed over this screen (space marks A and
B, enter opens them; ``d`` opens the first failing run against the first passing one, or
the two biggest paths where the runs part); q or escape there comes back here, and from
here to the user's own pair. Escape cancels a running gate (every agent's process group is
killed); the runs completed so far stay, the verdict says it is partial.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from cassette_tui.core.format.jobs import CancelToken, Progress, run_job
from cassette_tui.core.loop.gate import GateResult, gate_job
from cassette_tui.core.loop.results import RunResult
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Footer, Input, ProgressBar, Static

from .. import bindings
from ..messages import GateDone, GroupReady, JobProgress, WorkerFailed
from ..text.gate import gate_lines, pick_pair, tally, verdict_words
from ..text.progress import progress_count
from ..text.replay import FAIL, PASS
from ..text.runs import short_command
from ..text.safe import printable, safe
from ..widgets.text_input import TextInput
from .loop_job import LoopJobScreen
from .select import RunList

Styles = Mapping[str, Style]

#: runs a gate makes unless the user says otherwise (as ``cassette-tui gate``)
DEFAULT_RUNS = 20
#: what the screen says before the first gate
INTRO = (
    "The gate replays A N times with the network off: the pass rate must be 0% or 100%. "
    "Anything in between is flaky, and the gate says where the runs part."
)
#: the most runs the screen starts at once (a typo such as 2000 would be a long wait)
MAX_RUNS = 1000


#: what the line beside N says while N is being typed
ASK_HINT = "enter starts · escape leaves"


def runs_problem(value: str) -> str | None:
    """Why ``value`` (the N typed) cannot start a gate, in words for the line beside it,
    or ``None`` when it can (a whole number from 1 to ``MAX_RUNS``)."""
    if not value.strip():
        return f"type N, from 1 to {MAX_RUNS}"
    try:
        runs = int(value)
    except ValueError:
        runs = 0
    if not 1 <= runs <= MAX_RUNS:
        return f"N must be between 1 and {MAX_RUNS}"
    return None


def gate_columns() -> str:
    return f" {'run':>4}  {'result':<11}{'time':>8}{'calls':>7}{'misses':>8}  mark"


def duration(run: RunResult) -> str:
    return f"{run.duration_s:.2f} s" if run.completed else "-"


class RunsInput(TextInput):
    """The gate's N: it takes digits only; any other printable key is the screen's or the
    app's (q leaves, ? shows the keys), as the user's keymap has them (``TextInput`` runs
    the binding of a key the input does not consume, and never types that key)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character is not None and character.isdigit()


class GateRows:
    """The runs of a gate as step-list rows: number, pass/fail, duration, calls, misses,
    the A/B mark."""

    def __init__(self, results: list[RunResult], marks: Mapping[str, int]) -> None:
        self.results = results
        self.marks = {run: side for side, run in marks.items()}

    def __len__(self) -> int:
        return len(self.results)

    def render(self, index: int, width: int, styles: Styles) -> Text:
        run = self.results[index]
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"{run.run:>4}  ")
        if run.passed and run.replay()[0] == "clean":  # a pass with a miss is no pass
            text.append(f"{PASS} {run.status:<9}", styles.get("runlist--pass"))
        elif run.completed:
            text.append(f"{FAIL} {run.status:<9}", styles.get("runlist--fail"))
        else:
            text.append(f"- {run.status:<9}", styles.get("runlist--muted"))
        calls = run.calls
        text.append(f"{duration(run):>8}{calls if calls is not None else '-':>7}")
        text.append(f"{run.misses if run.report is not None else '-':>8}  ")
        side = self.marks.get(run.run)
        if side is not None:
            text.append(f" {side} ", styles.get("runlist--mark"))
        return text

    def notable(self, index: int) -> bool:
        run = self.results[index]
        return not (run.passed and run.replay()[0] == "clean")

    def matches(self, index: int, needle: str) -> bool:
        return needle in self.results[index].status

    def next_notable(self, start: int, direction: int) -> int | None:
        stop = len(self.results) if direction > 0 else -1
        return next((i for i in range(start + direction, stop, direction) if self.notable(i)), None)


#: how the gate screen styles the report's lines, by kind (the rest plain)
VERDICT_STYLES = {
    "no_replay": "bold",
    "cancelled": "bold",
    "divergence_head": "bold",
    "files": "dim",
}
#: what the screen shows in its title instead (A's name, the agent)
IN_TITLE = ("title", "agent")
#: how many odd runs (timed out, crashed, never started) the screen lists (the command: 5)
ODD_RUNS = 3


def verdict_text(result: GateResult, name: str) -> Text:
    """The verdict block: the lines of ``cassette-tui gate`` (``text/gate.py``'s
    ``gate_lines``) but A's name and the agent (in the screen's title), the verdict line
    led by its glyph and the verdict in words; then the keys that open two runs."""
    text = Text(end="")
    for line in gate_lines(result, name, odd_runs=ODD_RUNS):
        if line.kind in IN_TITLE:
            continue
        if text:
            text.append("\n")
        if line.kind == "verdict":
            glyph = PASS if result.verdict == "deterministic" else FAIL
            text.append(f"{glyph} {verdict_words(result)}", style="bold")
            text.append(" · ")
        text.append(line.text, style=VERDICT_STYLES.get(line.kind, ""))
    pair = pick_pair(result)
    hint = "space marks two runs, enter opens them"
    if pair is not None:
        a, b = pair
        hint = f"d: run {a.run} ({a.status}) vs run {b.run} ({b.status}) · {hint}"
    text.append(f"\n{hint}", style="dim")
    return text


class GateScreen(LoopJobScreen):
    """N replays of A: progress and tallies, the verdict, the runs."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.GATE)
    KEYMAP_NAME = "gate screen"
    STAGE = "gate"

    DEFAULT_CSS = """
    GateScreen #gate-title { height: 1; padding: 0 1; }
    GateScreen #gate-n { height: 1; padding: 0 1; }
    GateScreen #gate-n Static { width: auto; }
    GateScreen #gate-n-input { width: 8; height: 1; border: none; padding: 0 1; }
    GateScreen #gate-progress { height: 1; padding: 0 1; }
    GateScreen #gate-bar { width: 32; }
    GateScreen #gate-tally { width: 1fr; }
    GateScreen #gate-verdict { height: auto; padding: 0 1; }
    GateScreen #gate-columns { height: 1; color: $text-muted; }
    GateScreen #gate-runs { height: 1fr; min-height: 3; }
    """

    def __init__(self, runs: int = DEFAULT_RUNS) -> None:
        super().__init__()
        self.requested = runs
        self.result: GateResult | None = None
        #: the last progress event of the running gate (runs done, the tally)
        self.last_progress: Progress | None = None
        self.marks: dict[str, int] = {}
        #: the runs of the running gate that have ended, as the job hands them out
        self.live: list[RunResult] = []
        self.rows = GateRows([], self.marks)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="gate-title")
        with Horizontal(id="gate-n"):
            yield Static("runs ")
            # no length cap: a digit too many is said (runs_problem), never dropped silently
            yield RunsInput(str(self.requested), type="integer", id="gate-n-input")
            yield Static(f" {ASK_HINT}", id="gate-n-hint")
        with Horizontal(id="gate-progress"):
            yield ProgressBar(
                total=self.requested, show_eta=False, show_percentage=False, id="gate-bar"
            )
            yield Static("", id="gate-tally")
        yield Static("", id="gate-verdict")
        yield Static(Text(gate_columns(), style="bold"), id="gate-columns")
        yield RunList(self.rows, id="gate-runs")
        yield Footer()

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append("Gate ", style="bold underline")
        text.append(safe(self.a_name()), style="bold")
        text.append(f" · agent {printable(short_command(self.agent.template))}", style="dim")
        return text

    def on_mount(self) -> None:
        last = self.session.loop.gate
        if last is not None:  # the last gate stays in view until a new one starts
            self.requested = last.runs_result.requested
            self.show_result(last, focus=False)
        else:
            self.query_one("#gate-verdict", Static).update(Text(INTRO, style="dim"))
        self.ask_runs()

    @property
    def runs_list(self) -> RunList:
        return self.query_one("#gate-runs", RunList)

    @property
    def runs_input(self) -> Input:
        return self.query_one("#gate-n-input", Input)

    def ask_runs(self) -> None:
        """Show N, ready to be changed; enter starts."""
        field = self.runs_input
        field.disabled = False
        field.value = str(self.requested)
        field.cursor_position = len(field.value)
        self._hint(ASK_HINT)
        self.set_focus(field)

    def _hint(self, text: str, problem: bool = False) -> None:
        """The line beside N: what enter does, or (``problem``) why N cannot start a gate."""
        words = Text(f" {text}", style="bold" if problem else "", end="")
        if problem:
            words.append(" · fix N, then enter · escape leaves", style="not bold")
        self.query_one("#gate-n-hint", Static).update(words)

    @on(Input.Changed, "#gate-n-input")
    def _changed(self, event: Input.Changed) -> None:
        if not event.input.disabled:  # not while a gate runs (the field shows its N)
            problem = runs_problem(event.value)
            self._hint(problem or ASK_HINT, problem is not None and bool(event.value))

    @on(Input.Submitted, "#gate-n-input")
    def _submitted(self, event: Input.Submitted) -> None:
        problem = runs_problem(event.value)
        if problem is not None:
            # said beside the field, which keeps the focus and what was typed to fix it
            self._hint(problem, problem=True)
            self.set_focus(event.input)
            return
        self.requested = int(event.value)
        self.start()

    # -- the job ---------------------------------------------------------------------
    def start(self) -> None:
        try:
            path = self.cassette_path()
        except ValueError as exc:
            self.could_not_run(exc)
            return
        self.result = None
        self.last_progress = None
        self.live = []
        self.marks.clear()
        self.show_rows()
        self.query_one("#gate-verdict").display = False
        self.runs_input.disabled = True
        self._hint("running · escape cancels")
        bar = self.query_one("#gate-bar", ProgressBar)
        bar.update(total=self.requested, progress=0)
        self._tally(f"0/{self.requested} runs · escape cancels")
        self.runs_list.focus()
        self.run_gate(path, self.requested, self.begin())

    @work(thread=True, exclusive=True, exit_on_error=False, group="loop", description="gate")
    def run_gate(self, path: Path, runs: int, token: CancelToken) -> None:
        session = self.session
        job = gate_job(path, self.agent, self.loop_options(), runs=runs, token=token)
        try:
            result = run_job(job, self.post_progress)
        except Exception as exc:  # noqa: BLE001 - shown on the screen
            self.could_not_run(exc)
            return
        session.loop.gate = result  # kept even when the screen was left meanwhile
        self.post_message(GateDone(result))

    def _tally(self, text: str) -> None:
        self.query_one("#gate-tally", Static).update(Text(f" {text}", no_wrap=True, end=""))

    @on(JobProgress)
    def _progress(self, message: JobProgress) -> None:
        p = message.progress
        if not self.running:
            return
        self.last_progress = p
        if isinstance(p.item, RunResult):  # a run ended: its row at once
            self.live.append(p.item)
            self.show_rows(self.runs_list.cursor)
        self.query_one("#gate-bar", ProgressBar).update(total=p.total, progress=p.done)
        tallies = f" · {printable(p.message)}" if p.message else ""
        self._tally(f"{progress_count(p)}{tallies} · escape cancels")

    @on(GateDone)
    def _done(self, message: GateDone) -> None:
        self.show_result(message.result)
        self.finish()

    def show_result(self, result: GateResult, focus: bool = True) -> None:
        """Show ``result``: the verdict, the tallies, the runs (focused, unless not
        ``focus``)."""
        self.result = result
        rr = result.runs_result
        self.query_one("#gate-bar", ProgressBar).update(total=rr.requested, progress=result.runs)
        how = "cancelled" if result.cancelled else "done"  # the counts say how far
        self._tally(f"{result.runs}/{rr.requested} runs · {tally(result)} · {how}")
        verdict = self.query_one("#gate-verdict", Static)
        verdict.update(verdict_text(result, self.a_name()))
        verdict.display = True
        self.runs_input.disabled = False
        self._hint("t: gate again")
        self.show_rows(self.runs_list.cursor)
        if focus:
            self.runs_list.focus()

    def show_rows(self, cursor: int = 0) -> None:
        """The runs: the gate's, or while it runs those that have ended (by run number)."""
        if self.result is not None:
            results = self.result.results
        else:
            results = sorted(self.live, key=lambda r: r.run)
        self.rows = GateRows(results, self.marks)
        self.runs_list.set_model(self.rows, cursor)

    def show_failure(self, text: str) -> None:
        verdict = self.query_one("#gate-verdict", Static)
        verdict.update(Text(printable(text), style="bold"))
        verdict.display = True
        self._tally("nothing ran")
        self.runs_input.disabled = False
        self._hint(ASK_HINT)

    # -- keys ------------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.runs_list.move(1)

    def action_cursor_up(self) -> None:
        self.runs_list.move(-1)

    def action_first(self) -> None:
        self.runs_list.first()

    def action_last(self) -> None:
        self.runs_list.last()

    def _current(self) -> RunResult | None:
        if not len(self.rows):
            return None
        return self.rows.results[self.runs_list.cursor]

    def action_mark(self) -> None:
        run = self._current()
        if run is None:
            return
        if run.call_log is None:
            self.app.notify(f"run {run.run} left no call log to open", timeout=3)
            return
        side = next((s for s, n in self.marks.items() if n == run.run), None)
        if side is not None:
            del self.marks[side]
        elif "A" not in self.marks:
            self.marks["A"] = run.run
        elif "B" not in self.marks:
            self.marks["B"] = run.run
        else:
            self.app.notify("A and B are marked: enter opens them; space on one unmarks it")
            return
        self.show_rows(self.runs_list.cursor)

    def _by_run(self, number: int) -> RunResult:
        return next(r for r in self.rows.results if r.run == number)

    def open_runs(self, a: RunResult, b: RunResult) -> None:
        assert a.call_log is not None and b.call_log is not None
        label = f"A run {a.run} ({a.status}) · B run {b.run} ({b.status}) of the gate"
        self.open_side_by_side(a.call_log, b.call_log, label)

    def action_open(self) -> None:
        """Open two marked runs, or the run under the cursor against A (while the gate
        runs too: the runs that have ended)."""
        if not len(self.rows):
            return
        if "A" in self.marks and "B" in self.marks:
            self.open_runs(self._by_run(self.marks["A"]), self._by_run(self.marks["B"]))
            return
        run = self._current()
        if run is None or run.call_log is None or self.session.a is None:
            self.app.notify("this run left no call log to open", timeout=3)
            return
        label = f"A recorded {self.a_name()} · B run {run.run}'s call log ({run.status})"
        self.open_side_by_side(self.session.a, run.call_log, label)

    def action_diff(self) -> None:
        pair = pick_pair(self.result) if self.result is not None else None
        if pair is None:
            self.app.notify("no two runs with a call log to open", timeout=3)
            return
        self.open_runs(*pair)

    def action_tree(self) -> None:
        """w: the runs that left a call log as a tree of where they part (screens/group.py)."""
        done = [r for r in self.rows.results if r.call_log is not None]
        if len(done) < 2:
            self.app.notify("no two runs with a call log to group", timeout=3)
            return
        self.group_runs(done)

    @work(thread=True, exclusive=True, exit_on_error=False, group="group", description="group")
    def group_runs(self, results: list[RunResult]) -> None:
        """Read the runs' call logs and group them (``core.why.grouping``), off the UI thread."""
        from cassette_tui.core.why.grouping import gate_runs, group

        rules = self.session.a.rules if self.session.a is not None else None
        try:
            grouping = group(gate_runs(results, rules))
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(WorkerFailed("cannot group the runs", exc))
            return
        self.post_message(GroupReady(f"the gate of {self.a_name()}", {None: grouping}))

    @on(GroupReady)
    def _group_ready(self, message: GroupReady) -> None:
        from .group import GroupScreen, GroupSource

        if self.is_current:
            self.app.push_screen(GroupScreen(GroupSource(message.title, message.groups)))

    def action_again(self) -> None:
        if self.running:
            self.app.notify("a gate is running: escape cancels it", timeout=3)
            return
        self.ask_runs()
