"""``s`` on a row of the pair view: "with B's answer here, does A pass?"

A is gated N times offline (the gate's N: the last gate's, else ``gate.DEFAULT_RUNS``)
with the selected step answered as B answered it: the engine of ``gate --swap
SEQ=B.jsonl:SEQ`` (``core/why/swap.py`` writes the swapped cassette into one of the
session's run folders, ``core/loop/gate.py`` gates it) in a thread worker. The pass rate
shows beside the row (``with B's answer here: 20/20 pass``; ``⇄ 20/20 pass`` where the row
has no room for the words) and stays there while the list scrolls: swaps are kept by the
row's two entries, so they survive a realignment. Several rows may have one each, running
at once or done; ``s`` again on a row runs its swap again; escape stops the running ones.
A row that cannot be swapped (only one run made the call, another tool, the same answer)
says why and runs nothing.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from cassette_tui.core.format.cassette import Cassette, save
from cassette_tui.core.format.jobs import CancelToken, Progress, run_job
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.why.swap import Swap, swapped_entries
from rich.text import Text
from textual import on

from ..messages import SwapDone, SwapProgress, WorkerFailed
from ..session import Session
from ..text.safe import describe_error, printable
from ..text.why import SwapMark, swap_refusal
from .loop_keys import LoopKeysScreen

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.loop.agent import AgentCommand

#: a row's swap is kept under its two entries (A's index, B's index)
RowKey = tuple[int, int]
#: cells of B's side kept visible left of a swap mark
B_KEPT = 6


class SwapKeysScreen(LoopKeysScreen):
    """A pair view with ``s`` (see the module). The subclass holds ``result``, the diff
    shown."""

    result: DiffResult | None = None

    def __init__(self, session: Session | None = None) -> None:
        super().__init__(session)
        #: every row's swap, by its two entries
        self.swaps: dict[RowKey, SwapMark] = {}
        self._swap_tokens: dict[RowKey, CancelToken] = {}

    # -- what the rows show ----------------------------------------------------------------
    def _row_key(self, index: int) -> RowKey | None:
        result = self.result
        if result is None or not 0 <= index < len(result.rows):
            return None
        row = result.rows[index]
        return None if row.a is None or row.b is None else (row.a, row.b)

    def swap_of(self, index: int) -> SwapMark | None:
        """The swap of row ``index`` of the diff shown, or ``None``."""
        key = self._row_key(index) if self.swaps else None
        return self.swaps.get(key) if key is not None else None

    def _swap_note(self, index: int, width: int) -> Text | None:
        mark = self.swap_of(index)
        if mark is None:
            return None
        return mark.note(max(0, (width - 3) // 2 - B_KEPT))

    def swap_line(self, index: int) -> Text | None:
        """The detail pane's first line for row ``index``: its swap in words, or ``None``."""
        mark = self.swap_of(index)
        if mark is None:
            return None
        text = Text(printable(mark.words()), style="bold")
        text.append("  s runs it again" if not mark.running else "  escape stops it", "dim")
        return text

    def _redraw_swaps(self, key: RowKey | None = None) -> None:
        self.steps.row_note = self._swap_note
        self.steps.redraw()
        if key is not None and self._row_key(self.steps.cursor) == key:
            self.start_detail(self.steps.cursor, keep_scroll=True)

    # -- the key ---------------------------------------------------------------------------
    def swap_runs(self) -> int:
        """The gate's N: the last gate's, else the gate screen's default."""
        from .gate import DEFAULT_RUNS

        gate = self.session.loop.gate
        return gate.runs_result.requested if gate is not None else DEFAULT_RUNS

    def action_swap(self) -> None:
        """s: gate A with B's answer at the selected row (see the module)."""
        result = self.result
        if result is None or not len(self.model):
            self.app.notify("nothing to swap yet: the steps are loading", timeout=3)
            return
        index = self.steps.cursor
        why = swap_refusal(result, index)
        if why is not None:
            self.app.notify(printable(f"s does nothing here: {why}"), markup=False, timeout=5)
            return
        agent = self.session.agent
        if agent is None:
            from .no_agent import NoAgentScreen

            self.app.push_screen(NoAgentScreen("Swap"))
            return
        row = result.rows[index]
        assert row.a is not None and row.b is not None
        assert row.a_seq is not None and row.b_seq is not None
        key = (row.a, row.b)
        running = self.swaps.get(key)
        if running is not None and running.running:
            self.app.notify("this row's swap is running: escape stops it", timeout=3)
            return
        if result.b.path is None:
            self.app.notify("B was not read from a file: no answer of it to swap in", timeout=5)
            return
        mark = self.swaps[key] = SwapMark(row.a_seq, row.b_seq, self.swap_runs())
        token = self._swap_tokens[key] = CancelToken()
        self._redraw_swaps(key)
        work = partial(self._run_swap, result.a, Path(result.b.path), key, mark, agent, token)
        self.run_worker(work, thread=True, group="swap", exit_on_error=False, description="swap")

    def _run_swap(
        self,
        a: Cassette,
        b: Path,
        key: RowKey,
        mark: SwapMark,
        agent: AgentCommand,
        token: CancelToken,
    ) -> None:
        """In a worker: the swapped cassette (the engine of ``gate --swap``), then its gate."""
        session = self.session
        try:
            entries = swapped_entries(a, [Swap(mark.a_seq, b, mark.b_seq)])
            name = a.path.name if a.path is not None else "A.jsonl"
            path = save(entries, session.run_folders.new("swap") / name, rules=a.rules)
            options = LoopOptions(config=session.config)
            job = gate_job(path, agent, options, runs=mark.runs, token=token)
            gate = run_job(job, partial(self._swap_progress, key, token))
        except Exception as exc:  # noqa: BLE001 - shown beside the row and as a notification
            self.post_message(WorkerFailed("swap", exc, partial(self._swap_failed, key, mark)))
            return
        self.post_message(SwapDone(key[0], key[1], gate))

    def _swap_progress(self, key: RowKey, token: CancelToken, progress: Progress) -> None:
        if progress.unit == "runs" and not token.cancelled:
            self.post_message(SwapProgress(key[0], key[1], progress))

    @on(SwapProgress)
    def _swap_progressed(self, message: SwapProgress) -> None:
        key = (message.a, message.b)
        mark = self.swaps.get(key)
        if mark is not None and mark.running:
            mark.done = message.progress.done
            self._redraw_swaps()

    @on(SwapDone)
    def _swap_done(self, message: SwapDone) -> None:
        key = (message.a, message.b)
        mark = self.swaps.get(key)
        self._swap_tokens.pop(key, None)
        if mark is None:
            return
        mark.result = message.result
        self._redraw_swaps(key)
        self.app.notify(printable(mark.words()), markup=False, timeout=6)

    def _swap_failed(self, key: RowKey, mark: SwapMark, failure: WorkerFailed) -> None:
        self._swap_tokens.pop(key, None)
        mark.problem = describe_error(failure.error)
        self._redraw_swaps(key)

    def report_failure(self, failure: WorkerFailed) -> None:
        if failure.what == "swap":  # a swap's file, not the user's: never ends the app
            self.app.notify(
                printable(f"swap could not run: {describe_error(failure.error)}"),
                title="error",
                severity="error",
                markup=False,
            )
            return
        super().report_failure(failure)

    def cancel_swaps(self) -> bool:
        """Stop every running swap (escape); ``True`` when one was running."""
        running = [t for t in self._swap_tokens.values() if not t.cancelled]
        for token in running:
            token.cancel()
        if running:
            self.app.notify("swap stopped: its agents were killed", timeout=3)
        return bool(running)

    def on_unmount(self) -> None:
        for token in self._swap_tokens.values():
            token.cancel()  # the screen went (the app quits): no agent outlives it
