"""The cassette-tui app: two cassettes side by side (or one alone), stepped through by
keyboard, over SSH.

The app holds the opened cassettes and asks ``core`` for the diff (once per alignment,
cached); screens only present what ``core`` computed. Default theme ``ansi-dark``: the
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
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassette_tui.core.cassette import Cassette
from cassette_tui.core.diff import diff_cassettes
from textual.app import App
from textual.screen import Screen

from .bindings import APP
from .palette import StepActions

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from .screens.select import RunSource

DEFAULT_THEME = "ansi-dark"


def default_keymap_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cassette-tui" / "keys.toml"


def load_keymap(path: str | Path) -> dict[str, str]:
    """Read a keymap: a TOML file with a ``[keys]`` table of binding id -> keys
    (``"main.next" = "x"``; several keys comma-separated). Raises ``ValueError`` with the
    reason when the file is not that."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{p}: cannot read keymap: {exc}") from None
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise ValueError(f'{p}: expected a [keys] table of "binding.id" = "key" strings')
    keymap = {str(k): v for k, v in keys.items()}
    problem = keymap_problem(keymap)
    if problem:
        raise ValueError(f"{p}: {problem}")
    return keymap


def _keys_of(keys: str) -> list[str]:
    from textual.keys import _normalize_key_list

    return [key for key in _normalize_key_list(keys).split(",") if key]


def keymap_problem(keymap: dict[str, str]) -> str | None:
    """Why ``keymap`` cannot be used, or ``None``: an id no binding has (a typo would be
    ignored silently), an empty key, or a key that would run two actions on one screen
    (one of them would silently never run)."""
    import difflib

    from . import bindings

    tables = {
        "main screen": bindings.PAIR,
        "single-file screen": bindings.SINGLE,
        "step screen": bindings.STEP,
        "help screen": bindings.HELP,
        "run selector": bindings.RUNS,
    }
    known = {b.id for table in (*tables.values(), bindings.APP) for b in table if b.id}
    for binding_id, keys in keymap.items():
        if binding_id not in known:
            close = difflib.get_close_matches(binding_id, sorted(known), n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            return f'unknown binding id "{binding_id}"{hint}; the help screen (?) lists them'
        if not keys.strip() or any(not key.strip() for key in keys.split(",")):
            return f'"{binding_id}" = "{keys}": empty key'
    for where, table in tables.items():
        owner: dict[str, str] = {}
        # the app's own keys (? for help) give way to a screen's; only priority ones clash
        for binding in (*(b for b in bindings.APP if b.priority), *table):
            if not binding.id:
                continue
            for key in _keys_of(keymap.get(binding.id, binding.key)):
                other = owner.setdefault(key, binding.id)
                if other != binding.id and (binding.id in keymap or other in keymap):
                    return (
                        f'"{key}" would be both "{other}" and "{binding.id}" on the {where}; '
                        "give one of them another key"
                    )
    return None


#: seconds a clean exit after SIGTERM/SIGHUP may take before the process is ended
SIGNAL_EXIT_GRACE_S = 3.0


class CassetteApp(App[None]):
    """``CassetteApp(a, b)`` compares two cassettes; ``CassetteApp(a)`` shows one;
    ``CassetteApp(run_source=RunSource(...))`` starts on the run selector of a multi-run file."""

    TITLE = "cassette-tui"
    CSS_PATH = "app.tcss"
    BINDINGS = APP
    COMMANDS = App.COMMANDS | {StepActions}
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        a: Cassette | None = None,
        b: Cassette | None = None,
        *,
        run_source: RunSource | None = None,
        align: str = "seq",
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        handle_signals: bool = False,
    ) -> None:
        super().__init__()
        self._handle_signals = handle_signals
        if align not in ("seq", "key"):
            raise ValueError(f"align must be 'seq' or 'key', not {align!r}")
        if a is None and run_source is None:
            raise ValueError("give a cassette, or runs to choose from")
        self.a, self.b, self.align = a, b, align
        self.run_source = run_source
        self._results: dict[str, Any] = {}
        self._diff_lock = threading.Lock()
        self._theme_name = theme or DEFAULT_THEME
        #: (message, severity) -> monotonic time until which that toast is on screen
        self._toasts: dict[tuple[str, str], float] = {}
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

    def on_mount(self) -> None:
        self.theme = self._theme_name
        if self._handle_signals:
            self._install_signal_handlers()

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
        watchdog = threading.Timer(SIGNAL_EXIT_GRACE_S, os._exit, args=(128 + signum,))
        watchdog.daemon = True
        watchdog.start()
        self.exit(return_code=128 + signum)

    def get_default_screen(self) -> Screen[Any]:
        if self.run_source is not None:
            from .screens.select import SelectScreen

            return SelectScreen(self.run_source)
        if self.b is None:
            from .screens.single import SingleScreen

            return SingleScreen()
        from .screens.pair import PairScreen

        return PairScreen()

    def diff(self, align: str) -> Any:
        """The ``core`` diff of A and B under ``align``, computed once (call it from a
        worker thread: a key alignment of large cassettes takes a while)."""
        # one snapshot: a run picked in the selector may replace A, B and the cache meanwhile
        a, b, results = self.a, self.b, self._results
        assert a is not None and b is not None
        with self._diff_lock:
            result = results.get(align)
            if result is None:
                # Rows for 100k steps are 100k new objects: without a pause of the cyclic
                # collector, its full passes over everything already loaded (the cassette
                # indexes, Textual's widgets) cost more than the alignment itself.
                gc_was_enabled = gc.isenabled()
                gc.disable()
                try:
                    result = diff_cassettes(a, b, align=align)
                finally:
                    if gc_was_enabled:
                        gc.enable()
                results[align] = result
            return result

    def show_runs(self, a: Cassette, b: Cassette | None = None) -> None:
        """From the run selector: compare ``a`` (failing) with ``b`` (passing), or show ``a``
        alone, on a screen whose ``q`` comes back to the selector."""
        from .screens.select import RunPairScreen, RunSingleScreen

        self.a, self.b, self._results = a, b, {}
        self.push_screen(RunPairScreen() if b is not None else RunSingleScreen())

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
