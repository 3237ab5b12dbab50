"""The cassette-tui app: two cassettes side by side (or one alone), stepped through by
keyboard, over SSH.

The app owns one ``Session`` (``tui/session.py``): the opened cassettes, the alignment and
the diffs ``core`` computed (once per alignment, cached); screens only present what it
holds. The keymap file is read by ``tui/keymap.py``. Default theme ``ansi-dark``: the
terminal's own 16 colours, which survive SSH without ``COLORTERM``; NO_COLOR is honoured by
Textual itself, and every status also has a glyph.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.constants import EXIT_BAD_INPUT
from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from .bindings import APP
from .colours import apply_plain
from .palette import StepActions
from .session import Session

if TYPE_CHECKING:
    from cassette_tui.core.format.errors import CassetteFormatError
    from cassette_tui.core.loop.agent import AgentCommand
    from textual.notifications import SeverityLevel

    from .screens.group import GroupSource
    from .screens.select import RunSource

DEFAULT_THEME = "ansi-dark"


#: rows from which the loaded objects are kept out of the collector's passes (keep_loaded)
FREEZE_ROWS = 50_000

#: seconds a clean exit after SIGTERM/SIGHUP may take before the process is ended
SIGNAL_EXIT_GRACE_S = 3.0


class CassetteApp(App[None]):
    """``CassetteApp(a, b)`` compares two cassettes; ``CassetteApp(a)`` shows one;
    ``CassetteApp(run_source=RunSource(...))`` starts on the run selector of a multi-run file;
    ``CassetteApp(group_source=GroupSource(...))`` on the tree of runs grouped by where they
    part. ``CassetteApp(load_head(pa), load_head(pb), reading=(pa, pb))`` compares two large
    files: the rows of their first lines at once, then the files read whole with progress
    on screen (``open_pair``)."""

    TITLE = "cassette-tui"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = list(APP)
    COMMANDS = App.COMMANDS | {StepActions}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        a: Cassette | None = None,
        b: Cassette | None = None,
        *,
        run_source: RunSource | None = None,
        group_source: GroupSource | None = None,
        align: str = "seq",
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        handle_signals: bool = False,
        plain: bool = False,
        agent: AgentCommand | None = None,
        agent_problem: str | None = None,
        config: str | None = None,
        reading: tuple[Path, Path] | None = None,
    ) -> None:
        # plain: default colours only (NO_COLOR, or a terminal of 16 colours or fewer;
        # tui/colours.py). Textual reads NO_COLOR itself, but picks a greying filter.
        plain = plain or "NO_COLOR" in os.environ
        super().__init__(ansi_color=True if plain else None)
        if plain:
            apply_plain(self)
        self._handle_signals = handle_signals
        #: what is open, and what core computed about it
        # reading: a and b are the first lines of these two files (``load_head``), read
        # whole by the pair screen's worker with progress on screen
        self.session = Session(
            a, b, align=align, run_source=run_source, group_source=group_source, reading=reading
        )
        self.session.agent = agent
        self.session.agent_problem = agent_problem if agent is None else None
        self.session.config = config
        self._theme_name = theme or DEFAULT_THEME
        #: (message, severity) -> monotonic time until which that toast is on screen
        self._toasts: dict[tuple[str, str], float] = {}
        #: the user's keymap (binding id -> keys), as read from keys.toml
        self.keymap: dict[str, str] = dict(keymap or {})
        #: why the app ended on bad input (``file:line: field ...``), for the command to
        #: print once the terminal is restored; ``None`` otherwise
        self.bad_input: str | None = None
        if keymap:
            self.set_keymap(keymap)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's ``notify``, but a toast already on screen is not stacked again: ``n``
        held down past the last difference says "no more differences" once, not four times."""
        now = time.monotonic()
        if self._toasts.get((message, severity), 0.0) > now:
            return
        shown = timeout if timeout is not None else self.NOTIFICATION_TIMEOUT
        self._toasts[(message, severity)] = now + shown
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def fail_bad_input(self, error: CassetteFormatError) -> None:
        """End the app on an input found bad after it started (the full parse is deferred to
        workers: a bad line in the middle surfaces there): exit status 2
        (``EXIT_BAD_INPUT``) and ``bad_input`` holding the error's one line, which ``open``
        prints once the terminal is restored, as ``diff`` would before anything."""
        if self.bad_input is None:
            self.bad_input = str(error)
            self.exit(return_code=EXIT_BAD_INPUT)

    def on_mount(self) -> None:
        self.theme = self._theme_name
        if self._handle_signals:
            self._install_signal_handlers()

    def on_unmount(self) -> None:
        # the app ends (its screens, and so their jobs, are gone): the loop's run files go
        self.session.run_folders.close()

    def _install_signal_handlers(self) -> None:
        """SIGTERM (``kill``, a service stop) and SIGHUP (the SSH connection dropped) quit
        the app the way ``ctrl+q`` does, so the terminal gets back its main screen, its
        cursor and no mouse reporting, instead of being left in the app's modes."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, self._quit_on_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                continue

    def _quit_on_signal(self, signum: int) -> None:
        # After SIGHUP the terminal is gone, and Textual's shutdown can block for ever on
        # writes to it (its writer queue; seen when an SSH session or tmux server dies):
        # a watchdog ends the process if the clean exit has not done so within seconds.
        watchdog = threading.Timer(SIGNAL_EXIT_GRACE_S, self._exit_now, args=(128 + signum,))
        watchdog.daemon = True
        watchdog.start()
        self.exit(return_code=128 + signum)

    def _exit_now(self, code: int) -> None:
        """End the process at once (the clean exit hung), the loop's run files removed."""
        self.session.run_folders.close()
        os._exit(code)

    def get_default_screen(self) -> Screen[Any]:
        session = self.session
        if session.group_source is not None:
            from .screens.group import GroupScreen

            return GroupScreen(session.group_source, first=True)
        if session.run_source is not None:
            from .screens.select import SelectScreen

            return SelectScreen(session.run_source)
        if session.b is None:
            from .screens.single import SingleScreen

            return SingleScreen()
        from .screens.pair import PairScreen

        return PairScreen()

    def show_runs(self, a: Cassette, b: Cassette | None = None) -> None:
        """From the run selector: compare ``a`` (failing) with ``b`` (passing), or show ``a``
        alone, on a screen whose ``q`` comes back to the selector."""
        from .screens.select import RunPairScreen, RunSingleScreen

        self.session.open_runs(a, b)
        self.push_screen(RunPairScreen() if b is not None else RunSingleScreen())

    def keep_loaded(self, rows: int) -> None:
        """After ``rows`` rows are shown: take what is allocated so far (the cassettes'
        indexes, the diff and its rows) out of the cyclic collector's full passes
        (``gc.freeze``) when they are many (``FREEZE_ROWS``): they live as long as the app
        shows them, and a pass over a million of them paused a key press for half a second
        at 1M entries. Reference counting still frees them when they go."""
        if rows >= FREEZE_ROWS:
            gc.freeze()

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
