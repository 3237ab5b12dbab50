"""Cassette text as data, never markup.

Everything a cassette holds (tool names, args, responses, error messages) and every file
name reaches the screen through these helpers, as ``rich.text.Text`` built from plain
strings. Control characters that could move the cursor, clear the screen or reorder text
(C0, DEL, C1, bidi and zero-width controls) become visible stand-ins, so a response holding
``\\x1b[2J`` or ``[bold red]...[/]`` shows literally and cannot change the terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.text import Text

#: Characters that change the terminal or the order or look of the text around them,
#: besides the C0 controls: DEL and the C1 controls (``\x9b`` is a CSI on some terminals),
#: the Arabic letter mark (U+061C) and the other bidi marks, zero-width characters,
#: line/paragraph separators, the bidi embeddings, overrides and isolates, word joiners
#: and invisible operators, the byte order mark, and the tag characters (U+E0000-U+E007F,
#: invisible text).
FORMAT_CHARS = (
    "\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u206f"
    "\ufeff\U000e0000-\U000e007f"
)
#: Every character that must not reach a terminal raw (a regex character class).
UNSAFE_CHARS = "[\x00-\x1f" + FORMAT_CHARS + "]"
_UNSAFE = re.compile(UNSAFE_CHARS)
#: In multi-line text, newlines and tabs are layout, not a threat.
_UNSAFE_MULTILINE = re.compile("[\x00-\x08\x0b-\x1f" + FORMAT_CHARS + "]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "control pictures": ␛ ␀ ␇ ␊ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` on one line with every control character replaced by a visible form."""
    return _UNSAFE.sub(_visible, text)


def safe(value: Any) -> str:
    """``value`` (any object, through ``str``) as one printable line: ``printable``, and
    a lone surrogate (``"\\ud800"``, which JSON allows) as its ``\\udXXX`` escape, since
    no terminal can write it. The one helper for untrusted text in the commands and the app
    (``commands/_output.py`` re-exports it)."""
    return printable(str(value)).encode("utf-8", "backslashreplace").decode("utf-8")


def printable_block(text: str) -> str:
    """Like ``printable`` but keeps newlines and tabs (for pretty-printed blocks)."""
    return _UNSAFE_MULTILINE.sub(_visible, text)


def plain(text: str, style: str = "") -> Text:
    """A one-line ``Text`` of untrusted ``text``: no markup, no control characters."""
    return Text(printable(text), style=style, no_wrap=True, overflow="ellipsis", end="")


def _scalar(value: Any, max_chars: int | None) -> str:
    if isinstance(value, str) and max_chars is not None and len(value) > max_chars:
        value = f"{value[:max_chars]}…(+{len(value) - max_chars} chars)"
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def dumps_nested(value: Any, *, indent: int | None, max_chars: int | None = None) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=False)`` without recursion, for
    values nested deeper than the recursive encoders manage (a response 500 levels deep
    parses, but ``json.dumps(indent=2)`` and Rich hit the recursion limit on it)."""
    item_sep, key_sep = (",", ": ") if indent is not None else (",", ":")
    out: list[str] = []
    stack: list[tuple[Any, bool, int, list[bool]]] = []

    def newline(level: int) -> str:
        return "" if indent is None else "\n" + " " * (indent * level)

    def start(item: Any, level: int) -> None:
        if isinstance(item, dict) and item:
            out.append("{")
            stack.append((iter(item.items()), True, level + 1, [True]))
        elif isinstance(item, (list, tuple)) and item:
            out.append("[")
            stack.append((iter(item), False, level + 1, [True]))
        elif isinstance(item, dict):
            out.append("{}")
        elif isinstance(item, (list, tuple)):
            out.append("[]")
        else:
            out.append(_scalar(item, max_chars))

    start(value, 0)
    while stack:
        items, is_dict, level, first = stack[-1]
        try:
            item = next(items)
        except StopIteration:
            stack.pop()
            out.append(newline(level - 1) + ("}" if is_dict else "]"))
            continue
        out.append(("" if first[0] else item_sep) + newline(level))
        first[0] = False
        if is_dict:
            key, item = item
            out.append(_scalar(key if isinstance(key, str) else str(key), None) + key_sep)
        start(item, level)
    return "".join(out)


def compact(value: Any) -> str:
    """Compact one-line JSON of a value (non-ASCII kept readable), made printable."""
    try:
        dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except RecursionError:
        dumped = dumps_nested(value, indent=None)
    except (TypeError, ValueError):
        dumped = repr(value)
    return printable(dumped)


def args_summary(args: Any, limit: int = 200) -> str:
    """A short one-line summary of a call's args: ``q="retry budget" top_k=5``."""
    if isinstance(args, dict):
        parts: list[str] = []
        size = 0
        for key, value in args.items():
            part = f"{safe(key)}={compact(value)}"
            parts.append(part)
            size += len(part) + 1
            if size > limit:
                break
        text = " ".join(parts)
    else:
        text = compact(args)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut_strings(value: Any, max_chars: int) -> Any:
    """``value`` with every string longer than ``max_chars`` cut, saying how much was cut."""
    if isinstance(value, str):
        if len(value) > max_chars:
            return f"{value[:max_chars]}…(+{len(value) - max_chars} chars)"
        return value
    if isinstance(value, dict):
        return {key: _cut_strings(item, max_chars) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_strings(item, max_chars) for item in value]
    return value


def pretty_lines(
    value: Any, *, max_lines: int | None, max_chars: int | None
) -> tuple[list[str], int]:
    """Pretty-printed JSON of ``value`` as printable lines, and how many lines were cut.

    Args:
        max_lines: keep at most this many lines (``None``: all).
        max_chars: cut strings longer than this (``None``: keep them whole).
    """
    try:
        shown = _cut_strings(value, max_chars) if max_chars is not None else value
        dumped = json.dumps(shown, indent=2, ensure_ascii=False, default=str)
    except RecursionError:
        dumped = dumps_nested(value, indent=2, max_chars=max_chars)
    except (TypeError, ValueError):
        dumped = repr(shown)
    lines = printable_block(dumped).split("\n")
    if max_lines is not None and len(lines) > max_lines:
        return lines[:max_lines], len(lines) - max_lines
    return lines, 0


def describe_error(error: BaseException) -> str:
    """One line for a failure shown in the app: a cassette error's own message (it names
    the file, the line and the field), an ``OSError`` as its path and reason in words,
    else ``Type: message``."""
    from cassette_tui.core.format.errors import CassetteError

    if isinstance(error, CassetteError):
        return str(error)
    if isinstance(error, OSError) and error.strerror:
        # plain words naming the path (``fixtures: not a directory``), not Python's repr
        where = error.filename if error.filename is not None else "a file"
        return f"{where}: {error.strerror.lower()}"
    return f"{type(error).__name__}: {error}"


def tool_text(name: str, reveal: bool = False) -> str:
    """A tool name on one line, a token used as the name masked like a value
    (``masking.mask_value``) unless ``reveal``."""
    from cassette_tui.core.scan.masking import mask_value

    return printable(name if reveal else mask_value(name))
