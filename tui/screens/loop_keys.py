"""The debug loop's keys on a step screen (the pair screen, and one cassette alone): ``r``
replay A, ``t`` gate A, ``R`` re-record A, ``p`` pin the selected entry, ``l`` the loop
panel (and ``b`` there: bisect A against B). Every one acts on the session's A; the
screen says which entry to pin and how to refresh what it shows of the loop (the pair
screen's loop bar)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.loop.pin import plan_pin
from textual.screen import Screen

from ..text.loop import loop_stages
from ..text.safe import describe_error, printable
from .loop import LoopScreen
from .pin import PinScreen
from .steps import StepsScreen

if TYPE_CHECKING:
    from cassette_tui.core.diff.result import DiffResult
    from cassette_tui.core.loop.record import RecordResult

#: where the pin key writes fixtures (relative to the working folder, as ``pin -o``)
FIXTURES_DIR = Path("fixtures")


class LoopKeysScreen(StepsScreen):
    """A step screen with the loop's keys (see the module)."""

    def loop_result(self) -> DiffResult | None:
        """The diff the loop's Diff stage reports, or ``None`` (none yet, or one cassette)."""
        return None

    def refresh_loop_bar(self) -> None:
        """Say again what each stage of the loop found (after a pin, a re-record...)."""

    def pin_target(self) -> tuple[Cassette, int] | None:
        """The cassette and entry index ``p`` pins, or ``None`` when there is none yet."""
        raise NotImplementedError

    def action_replay(self) -> None:
        """r: one offline replay of A (or how to configure an agent)."""
        from .replay import ReplayScreen

        self._open_loop_screen("Replay", ReplayScreen)

    def action_gate(self) -> None:
        """t: the gate, N replays of A (or how to configure an agent)."""
        from .gate import GateScreen

        self._open_loop_screen("Gate", GateScreen)

    def _open_loop_screen(self, stage: str, screen: Callable[[], Screen[None]]) -> None:
        if self.session.agent is None:
            from .no_agent import NoAgentScreen

            self.app.push_screen(NoAgentScreen(stage))
        else:
            self.app.push_screen(screen())

    def action_loop(self) -> None:
        from ..text.why import bisect_stage

        stages = [*loop_stages(self.session, self.loop_result()), bisect_stage(self.session)]
        self.app.push_screen(LoopScreen(stages, self.session.agent_problem), self._loop_chosen)

    def _loop_chosen(self, choice: str | None) -> None:
        if choice == "bisect":
            self.open_bisect()

    def open_bisect(self) -> None:
        """The bisect screen on A and B (b on the loop panel), or why not."""
        from .bisect import BisectScreen

        if self.session.b is None:
            words = (
                "bisect needs two runs: open A with a passing run (cassette-tui A.jsonl B.jsonl)"
            )
            self.app.notify(words, markup=False, timeout=5)
            return
        self._open_loop_screen("Bisect", lambda: BisectScreen(self.session))

    def action_pin(self) -> None:
        """Preview the selected entry as a fixture; enter writes it."""
        target = self.pin_target()
        if target is None:
            self.app.notify("nothing to pin yet: the steps are loading", timeout=3)
            return
        cassette, index = target
        try:
            plan = plan_pin(cassette, cassette.seq(index), FIXTURES_DIR)
        except (CassetteError, LookupError, ValueError, OSError) as exc:
            # PinError: plain words naming the path and what to do, as `pin` prints them
            self.app.notify(
                printable(f"cannot pin: {describe_error(exc)}"), severity="error", markup=False
            )
            return
        self.app.push_screen(PinScreen(plan), self._pinned)

    def _pinned(self, path: Path | None) -> None:
        if path is None:
            return
        self.session.loop.pins.append(path)
        self.refresh_loop_bar()
        self.app.notify(printable(f"pinned -> {path}"), markup=False, timeout=5)

    def action_rerecord(self) -> None:
        """Re-record A live into a new file (asks first), then A against it."""
        from .rerecord import RerecordedPairScreen, RerecordScreen

        def opened(result: RecordResult | None) -> None:
            if result is not None and result.cassette is not None:
                self.app.push_screen(RerecordedPairScreen(self.session.against(result.cassette)))

        self.app.push_screen(RerecordScreen(self.session, self.refresh_loop_bar), opened)
