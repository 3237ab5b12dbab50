"""Readable in every terminal: when the app draws without colour.

With ``NO_COLOR`` set (https://no-color.org), and on terminals of 16 colours or fewer
(``TERM=vt100``, ``linux``, ``xterm`` without 256 colours, as over many SSH sessions), the
app draws every character in the terminal's own default foreground and background. Colour
then carries nothing: statuses are the marks (``=`` ``~`` ``≠`` ``×`` ``<`` ``>``), the
cursor row is reverse video, focus is a double rule and bold. Shades computed from a theme
would otherwise be mapped to the nearest of 16 colours, and several land on the same
colour as the background (text drawn black on black).

Textual honours ``NO_COLOR`` with a filter chosen when the app is built, from the default
theme (a truecolor one), so it greys every colour (``Monochrome``) instead of dropping it;
:func:`apply_plain` puts Textual's ``NoColor`` filter in its place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from textual.app import App
from textual.filter import Monochrome, NoColor

#: Rich's colour systems with at most 16 colours (``None``: no colour at all)
_FEW_COLOURS = (None, "standard", "windows")


def colour_system(environ: Mapping[str, str] | None = None) -> str | None:
    """The colour system the terminal in ``environ`` (default: this process's) offers:
    ``"truecolor"``, ``"256"``, ``"standard"`` (16 colours) or ``None``, as Rich reads it
    from ``TERM``, ``COLORTERM`` and ``TEXTUAL_COLOR_SYSTEM``."""
    from rich.console import Console

    env = dict(os.environ if environ is None else environ)
    env.pop("NO_COLOR", None)
    forced = env.get("TEXTUAL_COLOR_SYSTEM", "auto")
    if forced != "auto":
        return None if forced == "none" else forced
    console = Console(force_terminal=True, _environ=env)
    return console.color_system


def plain_colours(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the app should draw in the terminal's default colours only: ``NO_COLOR`` is
    set (to anything, per no-color.org), or the terminal has 16 colours or fewer."""
    env = os.environ if environ is None else environ
    return "NO_COLOR" in env or colour_system(env) in _FEW_COLOURS


def apply_plain(app: App[Any]) -> None:
    """Make ``app`` draw in default colours only: Textual's ``NoColor`` filter in place of
    its ``Monochrome`` one (or added), and the ``-plain`` class on the app for the styles
    that need another cue than colour (the input cursor as reverse video)."""
    filters = app._filters
    filters[:] = [f for f in filters if not isinstance(f, Monochrome | NoColor)]
    filters.append(NoColor())
    app.add_class("-plain")
