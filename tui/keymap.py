"""The user's keymap: a TOML file of binding id -> keys, checked before the UI starts.

``~/.config/cassette-tui/keys.toml`` (or ``--keys FILE``) holds a ``[keys]`` table:
``"main.next" = "x"`` (several keys comma-separated). An unknown id (a typo would be
ignored silently), an empty key, or a key that would run two actions on one screen is an
error naming the file, before the terminal is taken over. The screens checked are the
screen classes themselves (their ``BINDINGS`` and ``KEYMAP_NAME``), so a new screen is
checked as soon as it is listed in ``screens()``.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path

from textual.binding import Binding, BindingType

from . import bindings


def default_keymap_path() -> Path:
    """``$XDG_CONFIG_HOME/cassette-tui/keys.toml`` (``~/.config`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cassette-tui" / "keys.toml"


def load_keymap(path: str | Path) -> dict[str, str]:
    """Read a keymap: a TOML file with a ``[keys]`` table of binding id -> keys
    (``"main.next" = "x"``; several keys comma-separated). Raises ``ValueError`` with the
    file and the reason when the file is not that."""
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


def screens() -> dict[str, list[Binding]]:
    """Every screen's name (``KEYMAP_NAME``) and bindings, from the screen classes."""
    from .screens.bisect import BisectScreen
    from .screens.gate import GateScreen
    from .screens.help import HelpScreen
    from .screens.loop import LoopScreen
    from .screens.loop_pair import LoopPairScreen
    from .screens.no_agent import NoAgentScreen
    from .screens.pair import PairScreen
    from .screens.pin import PinScreen
    from .screens.replay import MissScreen, ReplayScreen
    from .screens.rerecord import RerecordScreen
    from .screens.select import SelectScreen
    from .screens.single import SingleScreen
    from .screens.step import StepScreen

    return {
        screen.KEYMAP_NAME: _bindings(screen.BINDINGS)
        for screen in (
            PairScreen,
            SingleScreen,
            StepScreen,
            HelpScreen,
            SelectScreen,
            PinScreen,
            LoopScreen,
            RerecordScreen,
            ReplayScreen,
            MissScreen,
            GateScreen,
            BisectScreen,
            NoAgentScreen,
            LoopPairScreen,
        )
    }


def _bindings(table: Iterable[BindingType]) -> list[Binding]:
    return [binding for binding in table if isinstance(binding, Binding)]


def _keys_of(keys: str) -> list[str]:
    """The keys of a comma-separated key list, in Textual's long form (``?`` ->
    ``question_mark``), as ``Binding.make_bindings`` expands them."""
    return [b.key for b in Binding.make_bindings([(keys, "")]) if b.key]


def keymap_problem(keymap: dict[str, str]) -> str | None:
    """Why ``keymap`` cannot be used, or ``None``: an id no binding has (a typo would be
    ignored silently), an empty key, or a key that would run two actions on one screen
    (one of them would silently never run)."""
    tables = screens()
    known = {b.id for table in (*tables.values(), bindings.APP) for b in table if b.id}
    for binding_id, keys in keymap.items():
        if binding_id not in known:
            close = difflib.get_close_matches(binding_id, sorted(known), n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            return f'unknown binding id "{binding_id}"{hint}; the help screen (?) lists them'
        if not keys.strip() or any(not key.strip() for key in keys.split(",")):
            return f'"{binding_id}" = "{keys}": empty key'
    for where, table in tables.items():
        # bindings that share a key by default act in different states of their screen
        # (re-record: escape cancels, stops or goes back); keeping that key is no clash
        shared = _shared_by_default(table)
        owner: dict[str, str] = {}
        # the app's own keys (? for help) give way to a screen's; only priority ones clash
        for binding in (*(b for b in bindings.APP if b.priority), *table):
            if not binding.id:
                continue
            for key in _keys_of(keymap.get(binding.id, binding.key)):
                other = owner.setdefault(key, binding.id)
                if (key, frozenset((other, binding.id))) in shared:
                    continue
                if other != binding.id and (binding.id in keymap or other in keymap):
                    return (
                        f'"{key}" would be both "{other}" and "{binding.id}" on the {where}; '
                        "give one of them another key"
                    )
    return None


def _shared_by_default(table: list[Binding]) -> set[tuple[str, frozenset[str]]]:
    """The (key, pair of ids) of the bindings of ``table`` that have a key in common by
    default."""
    ids: dict[str, list[str]] = {}
    for binding in table:
        if binding.id:
            for key in _keys_of(binding.key):
                ids.setdefault(key, []).append(binding.id)
    return {
        (key, frozenset((x, y)))
        for key, owners in ids.items()
        for x in owners
        for y in owners
        if x != y
    }
