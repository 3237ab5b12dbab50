"""The bisect screen (``b`` on the loop panel): which of the responses that differ between A
(failing) and B (passing) make the agent fail, offline. The engine of ``cassette-tui
bisect`` (``core/why/bisect.py``: hybrid cassettes gated ``RUNS`` times each, delta
debugging over them) in a thread worker, its progress (candidates tried, replays run, the
candidate being gated) from the job's ``Progress`` events.

Escape stops it: the agents are killed and what was learned stays, the smallest failing
set so far marked as not proven minimal. The report says the answer ("2 of 17 differing
responses suffice: A seq 3 search_docs $.results[0], A seq 5 read_file") and lists every
candidate with its outcome (flaky, or where the agent left the recording, as such). The
hybrids stay on disk where ``cassette-tui bisect`` puts them (``bisect-<UTC time>/``
beside A, ``minimal.jsonl`` among them): enter opens the one under the cursor against B,
``a`` A against it, in the main view (q comes back here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from cassette_tui.core.format.jobs import CancelToken, run_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.why.bisect import BisectResult, Candidate, bisect_job
from cassette_tui.core.why.hybrid import DifferingStep
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Footer, Static

from .. import bindings
from ..messages import BisectDone, JobProgress
from ..session import Session
from ..text.plural import plural
from ..text.runs import short_command
from ..text.safe import printable, safe
from ..text.why import bisect_answer, candidate_line, last_bisect, taken
from .loop_job import LoopJobScreen
from .select import RunList

#: offline replays per candidate (as ``cassette-tui bisect``'s ``--runs``)
RUNS = 5
#: what the screen says before the first candidate is gated
STARTING = "diffing A and B: the responses that differ…"


@dataclass(frozen=True)
class HybridRow:
    """One hybrid cassette in the list: a candidate (``number``), or the minimal one."""

    path: Path
    line: Text
    notable: bool


class HybridRows:
    """The hybrids as list rows: the minimal one first (when written), then every
    candidate in the order tried."""

    def __init__(self, rows: list[HybridRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def render(self, index: int, width: int, styles: Mapping[str, Style]) -> Text:
        return self.rows[index].line.copy()

    def notable(self, index: int) -> bool:
        return self.rows[index].notable

    def matches(self, index: int, needle: str) -> bool:
        return needle in self.rows[index].line.plain

    def next_notable(self, start: int, direction: int) -> int | None:
        stop = len(self.rows) if direction > 0 else -1
        return next((i for i in range(start + direction, stop, direction) if self.notable(i)), None)


def hybrid_rows(candidates: list[Candidate], result: BisectResult | None) -> HybridRows:
    """The rows of ``candidates`` (the result's, or those done while it runs), with the
    minimal hybrid first once ``result`` wrote one."""
    of = len(result.differing) if result is not None else _differing(candidates)
    rows = []
    if result is not None and result.minimal is not None and result.out_dir is not None:
        path = result.out_dir / "minimal.jsonl"
        if path.exists():
            line = Text(no_wrap=True, overflow="ellipsis", end="")
            word = "so far" if result.cancelled else "minimal"
            line.append(f"   ★  {word:<12} ", style="bold")
            line.append(f"{printable(taken(result.minimal, of))} ({path.name})")
            rows.append(HybridRow(path, line, False))
    for n, c in enumerate(candidates, 1):
        rows.append(HybridRow(c.cassette, candidate_line(n, c, of), c.outcome == "unresolved"))
    return HybridRows(rows)


def _differing(candidates: list[Candidate]) -> int:
    """How many responses differ, while the bisect runs: its second candidate takes them all."""
    return len(candidates[1].steps) if len(candidates) > 1 else 0


def out_folder(failing: Path, now: datetime | None = None) -> Path:
    """Where the hybrids go: ``bisect-<UTC time>/`` beside A (``cassette-tui bisect``'s
    default), ``-2``, ``-3``... when a bisect of the same second made that one."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    base = failing.parent / f"bisect-{stamp}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


class BisectScreen(LoopJobScreen):
    """A bisect of A against B: progress, then the answer and the hybrids tried."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings.BISECT)
    KEYMAP_NAME = "bisect screen"
    STAGE = "bisect"

    DEFAULT_CSS = """
    BisectScreen #bisect-title { height: 1; padding: 0 1; }
    BisectScreen #bisect-setup { height: auto; padding: 0 1; color: $text-muted; }
    BisectScreen #bisect-progress { height: auto; padding: 0 1; }
    BisectScreen #bisect-answer { height: auto; padding: 0 1; }
    BisectScreen #bisect-columns { height: 1; color: $text-muted; }
    BisectScreen #bisect-list { height: 1fr; min-height: 3; }
    """

    def __init__(self, session: Session | None = None) -> None:
        super().__init__()
        self._own_session = session
        self.result: BisectResult | None = None
        #: the candidates gated so far, as the job hands them out
        self.live: list[Candidate] = []
        #: the candidate being gated, and its runs done / due
        self.current: tuple[DifferingStep, ...] | None = None
        self.gate_runs = (0, RUNS)
        #: where the running bisect writes its hybrids
        self.out_dir: Path | None = None
        self.rows = HybridRows([])

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="bisect-title")
        yield Static("", id="bisect-setup")
        yield Static("", id="bisect-progress")
        yield Static("", id="bisect-answer")
        yield Static(Text("    #  outcome      hybrid: B with…", style="bold"), id="bisect-columns")
        yield RunList(self.rows, id="bisect-list")
        yield Footer()

    def _title(self) -> Text:
        a, b = self.session.a, self.session.b
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append("Bisect ", style="bold underline")
        for side, cassette, role in (("A", a, "failing"), ("B", b, "passing")):
            name = cassette.path.name if cassette is not None and cassette.path else side
            text.append(f"{side} ", style="bold")
            text.append(f"{safe(name)} ({role})  ")
        text.append(f"· agent {printable(short_command(self.agent.template))}", style="dim")
        return text

    @property
    def hybrid_list(self) -> RunList:
        return self.query_one("#bisect-list", RunList)

    def on_mount(self) -> None:
        last = last_bisect(self.session)
        if last is not None:  # the last bisect of A and B stays in view; b runs a new one
            self.show_result(last)
        else:
            self.start()

    # -- the job -----------------------------------------------------------------------
    def start(self) -> None:
        a, b = self.session.a, self.session.b
        if a is None or b is None or a.path is None or b.path is None:
            self.could_not_run(ValueError("A and B must be files to bisect them"))
            return
        self.result = None
        self.live = []
        self.current = None
        self.out_dir = out_folder(Path(a.path))
        self.show_rows()
        self.query_one("#bisect-answer").display = False
        self._say("#bisect-setup", self._setup_words(self.out_dir))
        self._say("#bisect-progress", Text(f"{STARTING} · escape stops", style="bold"))
        self.hybrid_list.focus()
        self.run_bisect(Path(a.path), Path(b.path), self.out_dir, self.begin())

    def _setup_words(self, out_dir: Path) -> Text:
        a = self.session.a
        beside = a is not None and a.path is not None and out_dir.parent == Path(a.path).parent
        # beside A, by its name: a long folder would push the rows down
        where = f"{safe(out_dir.name)}/ beside A" if beside else safe(str(out_dir))
        runs = self.result.candidates[0].runs if self.result and self.result.candidates else RUNS
        replays = plural(runs, "offline replay")
        return Text(f"{replays} per candidate (network off) · hybrids in {where}")

    @work(thread=True, exclusive=True, exit_on_error=False, group="loop", description="bisect")
    def run_bisect(self, failing: Path, passing: Path, out_dir: Path, token: CancelToken) -> None:
        session = self.session
        options = LoopOptions(config=session.config)  # each gate's runs in a folder of its own
        job = bisect_job(failing, passing, self.agent, out_dir, options, runs=RUNS, token=token)
        try:
            result = run_job(job, self.post_progress)
        except Exception as exc:  # noqa: BLE001 - shown on the screen
            self.could_not_run(exc)
            return
        session.loop.bisect = result  # kept even when the screen was left meanwhile
        self.post_message(BisectDone(result))

    def _say(self, where: str, text: Text) -> None:
        self.query_one(where, Static).update(text)

    @on(JobProgress)
    def _progress(self, message: JobProgress) -> None:
        p = message.progress
        if not self.running:
            return
        if p.stage == "bisect" and isinstance(p.item, tuple):
            self.current, self.gate_runs = p.item, (0, RUNS)
        elif p.stage == "bisect" and isinstance(p.item, Candidate):
            self.live.append(p.item)
            self.current = None
            self.show_rows(self.hybrid_list.cursor)
        elif p.unit == "runs":
            self.gate_runs = (p.done, p.total or RUNS)
        else:
            return  # the diff's and the search's own steps: the line says "diffing"
        self._say("#bisect-progress", self._progress_words())

    def _progress_words(self) -> Text:
        """``candidate 4 · 3 tried · 12 replays · trying A's answers at seq 3, 5 · run 2/5``."""
        done = sum(c.runs for c in self.live) + self.gate_runs[0]
        text = Text(end="")
        text.append(f"candidate {len(self.live) + 1}", style="bold")
        text.append(f" · {len(self.live)} tried · {done} replays")
        if self.current is not None:
            of = _differing(self.live) if len(self.live) > 1 else len(self.current)
            text.append(f"\ntrying {printable(taken(self.current, of))}")
            text.append(f" · run {self.gate_runs[0]}/{self.gate_runs[1]}")
        text.append(" · escape stops", style="dim")
        return text

    @on(BisectDone)
    def _done(self, message: BisectDone) -> None:
        self.show_result(message.result)
        self.finish()

    def show_result(self, result: BisectResult) -> None:
        """The answer, the counts, the hybrids (the minimal one first)."""
        self.result = result
        self.current = None
        if result.out_dir is not None:
            self._say("#bisect-setup", self._setup_words(result.out_dir))
        else:  # nothing was gated: the folder named before the start was never made
            self._say("#bisect-setup", Text("nothing gated · no hybrid written"))
        how = "stopped" if result.cancelled else "done"
        self._say("#bisect-progress", Text(f"{how} · b bisects again", style="dim"))
        answer = self.query_one("#bisect-answer", Static)
        answer.update(bisect_answer(result))
        answer.display = True
        self.show_rows(0)
        self.hybrid_list.focus()

    def show_rows(self, cursor: int = 0) -> None:
        candidates = self.result.candidates if self.result is not None else self.live
        self.rows = hybrid_rows(candidates, self.result)
        self.hybrid_list.set_model(self.rows, cursor)

    def show_failure(self, text: str) -> None:
        self._say("#bisect-progress", Text(printable(text), style="bold"))

    # -- keys --------------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.hybrid_list.move(1)

    def action_cursor_up(self) -> None:
        self.hybrid_list.move(-1)

    def action_first(self) -> None:
        self.hybrid_list.first()

    def action_last(self) -> None:
        self.hybrid_list.last()

    def _hybrid(self) -> Path | None:
        if not len(self.rows):
            done = self.result is not None and not self.running
            words = (
                "no hybrid cassette: the bisect gated none (its answer says why)"
                if done
                else "no hybrid cassette yet: the first candidate is being gated"
            )
            self.app.notify(words, timeout=3)
            return None
        return self.rows.rows[self.hybrid_list.cursor].path

    def action_open_b(self) -> None:
        """enter: the hybrid under the cursor (A side) against B."""
        hybrid, b = self._hybrid(), self.session.b
        if hybrid is None or b is None or b.path is None:
            return
        label = f"A hybrid {hybrid.name} · B {b.path.name} (passing) of the bisect"
        self.open_side_by_side(hybrid, Path(b.path), label)

    def action_open_a(self) -> None:
        """a: A against the hybrid under the cursor (B side)."""
        hybrid, a = self._hybrid(), self.session.a
        if hybrid is None or a is None:
            return
        name = a.path.name if a.path is not None else "A"
        self.open_side_by_side(a, hybrid, f"A {name} (failing) · B hybrid {hybrid.name}")

    def action_again(self) -> None:
        if self.running:
            self.app.notify("a bisect is running: escape stops it", timeout=3)
            return
        self.start()
