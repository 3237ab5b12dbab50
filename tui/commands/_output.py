"""Output helpers shared by the headless commands.

Cassette text (tool names, argument keys and values, responses, messages built from them)
is data: on a terminal it must show literally and never move the cursor, clear the screen
or retitle the window, and a lone surrogate (``"\\ud800"``, which JSON allows) must not
crash the write. ``safe`` makes one string printable; ``echo_json`` prints a ``--json``
document as UTF-8 whatever the locale.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..widgets.safe import printable


def safe(text: Any) -> str:
    """``text`` as one printable line: control characters become visible stand-ins
    (``␛``) and lone surrogates their ``\\udXXX`` escape."""
    out = printable(str(text))
    return out.encode("utf-8", "backslashreplace").decode("utf-8")


def echo_json(doc: Any) -> None:
    """Print ``doc`` as indented JSON, UTF-8 encoded; a lone surrogate is written as its
    JSON escape (it can only occur inside a JSON string)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    click.echo(text.encode("utf-8", "backslashreplace"), nl=False)
