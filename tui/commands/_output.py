"""Output helpers shared by the headless commands.

Cassette text (tool names, argument keys and values, responses, messages built from them)
and file names are data: on a terminal they must show literally and never move the cursor,
clear the screen, write the clipboard or reorder text, and a lone surrogate (``"\\ud800"``,
which JSON allows) must not crash the write. ``safe`` makes one string printable;
``echo_json`` prints a ``--json`` document as UTF-8 whatever the locale, with control and
bidi characters as ``\\uXXXX`` escapes.

Layout follows the convention of command-line tools: text output is fitted to the
terminal's width only when stdout is a terminal; into a pipe or a file every line is
written whole (``grep`` finds a path or a phrase on one line), so the output never depends
on the width of the terminal the command happens to run in. When the output encoding cannot
write the marks (``PYTHONIOENCODING=ascii``), ASCII stand-ins are used.
"""

from __future__ import annotations

import contextlib
import errno
import re
import sys
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

import click
import orjson
from cassette_tui.core.format.atomic import TargetExists
from cassette_tui.core.format.constants import EXIT_BAD_INPUT
from cassette_tui.core.format.jsonvalue import dumps_strict
from rich.console import Console

from ..text.safe import FORMAT_CHARS, safe  # safe: the one printable line, re-exported

#: the width decisions (values cut to fit beside a path) use when stdout is not a terminal
NOMINAL_WIDTH = 80

#: glyph -> ASCII stand-in, for output encodings that cannot write the glyph
ASCII_MARKS = {
    "≠": "*",
    "×": "x",
    "↻": "R",
    "…": "...",
    "→": "->",
    "✓": "+",
    "✗": "x",
    "·": ".",
    "▶": ">",
}


def can_write(text: str, stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stdout) can encode ``text``."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def glyph(mark: str, stream: TextIO | None = None) -> str:
    """``mark`` as written to ``stream`` (default stdout): itself, or its ASCII stand-in
    when the stream's encoding cannot write it."""
    if mark.isascii() or can_write(mark, stream):
        return mark
    return "".join(ASCII_MARKS.get(ch, ch) if not can_write(ch, stream) else ch for ch in mark)


def tolerant_streams() -> None:
    """Let stdout and stderr write any text: a character the encoding cannot hold is
    written as its ``\\uXXXX`` escape instead of raising ``UnicodeEncodeError`` (an ASCII
    or C locale, ``PYTHONIOENCODING=ascii``)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        # "strict" raises; a C locale's "surrogateescape" raises on any non-ASCII text
        if reconfigure is not None and getattr(stream, "errors", "") != "backslashreplace":
            with contextlib.suppress(ValueError, OSError):  # a closed or odd stream
                reconfigure(errors="backslashreplace")


@dataclass(frozen=True)
class Layout:
    """How text output is laid out: ``width`` in cells; ``wrap`` is true only on a terminal
    (then long lines are wrapped or cut to ``width``; else every line is written whole)."""

    width: int
    wrap: bool


class _StdoutConsole(Console):
    """Rich's console, but a closed pipe is left to ``cli.py`` (status 141 for every
    command) instead of Rich's own exit with status 1, which means "findings" here."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader of stdout went away")


def stdout_console() -> tuple[Console, Layout]:
    """The Rich console for a command's text output and its layout.

    On a terminal: its width, lines fitted to it. Not a terminal: nothing is wrapped or cut
    (``soft_wrap``), and :data:`NOMINAL_WIDTH` only decides how long a quoted value may be.
    """
    tty = sys.stdout.isatty()
    console = _StdoutConsole(
        highlight=False,
        soft_wrap=not tty,
        emoji=False,
        width=None if tty else 10_000,
    )
    return console, Layout(console.width if tty else NOMINAL_WIDTH, tty)


#: DEL, C1 controls, bidi and invisible formatting characters and the tag characters,
#: which ``json.dumps(ensure_ascii=False)`` writes raw (it escapes the C0 controls itself)
_JSON_UNSAFE = re.compile("[" + FORMAT_CHARS + "]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # a tag character: its UTF-16 surrogate pair, as JSON writes it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(doc: Any, *, indent: int | None = 2) -> str:
    """``doc`` as strict JSON text (a non-finite number as ``{"$numberDouble": "NaN"}``,
    see ``core.jsonvalue``): non-ASCII text kept readable, but every control, bidi or tag
    character written as its ``\\uXXXX`` escape (the same string once parsed; raw, they
    would drive the terminal the JSON is printed to)."""
    text = dumps_strict(doc, indent=indent, ensure_ascii=False, default=str)
    # outside strings JSON has only ASCII: the characters replaced here are in strings
    return _JSON_UNSAFE.sub(_escape, text)


def echo_json(doc: Any, *, indent: int | None = 2) -> None:
    """Print ``doc`` as JSON (see :func:`json_text`), UTF-8 encoded; a lone surrogate is
    written as its JSON escape (it can only occur inside a JSON string)."""
    text = json_text(doc, indent=indent) + "\n"
    click.echo(text.encode("utf-8", "backslashreplace"), nl=False)


def plain_json_text(doc: Any) -> str:
    """``json_text(doc)`` (indent 2), the same text, written by orjson when ``doc`` holds
    only dicts with ``str`` keys, lists, tuples, ``str``, ``int``, ``bool`` and ``None``
    (``_plain``), else (or when orjson refuses it: an integer past 64 bits, a lone
    surrogate, nesting past 254 levels) by ``json_text``. What ``check --json`` prints:
    the standard library writes with its Python encoder once given an indent (0.5 s for
    the 64k findings of a 1M-entry cassette); orjson's ``OPT_INDENT_2`` writes the same
    layout and escapes (``tests/cli/test_check_json_text.py``)."""
    if not _plain(doc):
        return json_text(doc)
    try:
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError too
        return json_text(doc)
    # the characters escaped below are DEL and non-ASCII ones: an ASCII text without DEL
    # (``isascii`` reads a word at a time) holds none
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_UNSAFE.sub(_escape, text)


def _plain(doc: Any) -> bool:
    """Whether ``doc`` holds only what ``plain_json_text`` gives orjson (see there): no
    float (its digits and non-finite values are written otherwise), no other type."""
    stack = [doc]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is dict:
            if not all(type(key) is str for key in node):
                return False
            push(node.values())
        elif kind is list or kind is tuple:
            push(node)
        elif not (kind is str or kind is int or kind is bool or node is None):
            return False
    return True


def echo_plain_json(doc: Any) -> None:
    """``echo_json(doc)``, the text made by ``plain_json_text`` (the same bytes)."""
    click.echo((plain_json_text(doc) + "\n").encode("utf-8", "backslashreplace"), nl=False)


def error_document(error: object, file: object = None) -> dict[str, Any]:
    """The ``--json`` document of a command that failed on bad input: ``{"error", "file"}``.
    ``file`` is the path the error names (a ``CassetteFormatError``'s ``path``, an
    ``OSError``'s ``filename``), else the ``file`` given, else ``None``."""
    named = getattr(error, "path", None) or getattr(error, "filename", None) or file
    return {"error": str(error), "file": None if named is None else str(named)}


def fail(command: str, error: object, *, file: object = None) -> NoReturn:
    """Print ``cassette-tui COMMAND: message`` on stderr and exit 2 (a ``TargetExists`` in
    a command with ``--force`` says ``use --force to replace it``). When the running
    command was given ``--json`` (its ``as_json`` parameter), stdout still gets a JSON
    document, :func:`error_document` (``{"error", "file"}``), so ``| jq`` reads why."""
    ctx = click.get_current_context(silent=True)
    if isinstance(error, TargetExists) and ctx is not None and "force" in ctx.params:
        error = error.for_flag("--force")  # the command's words, not the library's
    click.echo(f"cassette-tui {command}: {safe(error)}", err=True)
    if ctx is not None and ctx.params.get("as_json"):
        echo_json(error_document(error, file))
    sys.exit(EXIT_BAD_INPUT)
