"""What a screen shows of one value: the first lines of its pretty print, secrets masked,
built from those lines only.

A 2 MB response pretty-printed is 40k lines, of which the detail pane shows 12 (2,000
when expanded). Masking and printing the whole value cost a second or more for a large
list or object; here the value is first cut to the part that lands in the lines shown
(``_Pruner``), then that part is masked and printed, so the work follows what is seen. The
count of lines cut comes from the whole value's pretty print by orjson, in C. The lines are
the same as ``pretty_lines(mask_value(value), ...)`` (``tests/tui/test_shown_lines.py``).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from cassette_tui.core.format.jsonpath import Part
from cassette_tui.core.scan.masking import mask_json_text_head, mask_value

from .safe import pretty_lines, printable_block

__all__ = ["shown_lines"]

#: A string longer than the characters shown plus this margin is scanned for secrets
#: over its first ``max_chars + margin`` characters only: a secret that starts in the part
#: shown ends within it (a 4096-bit PEM key is 3.3 KB). A JSON text (``{`` or ``[``
#: first) is parsed, as the secret scan parses it, and the nodes that start in the part
#: shown are scanned (``masking.mask_json_text_head``).
SCAN_MARGIN = 64 * 1024
#: a JSON text longer than this is scanned as text, not parsed (the secret scan's
#: ``_JSON_TEXT_MAX``)
JSON_TEXT_MAX = 8_000_000


def shown_lines(
    value: Any, *, max_lines: int | None, max_chars: int | None, reveal: bool
) -> tuple[list[str], int]:
    """The printable lines of ``value`` pretty-printed (JSON, indent 2) with each string
    longer than ``max_chars`` cut, at most ``max_lines`` of them, and how many lines were
    cut; each secret masked (``core.scan.masking.mask_value``) unless ``reveal``. Only the
    part of ``value`` that lands in the lines kept is masked and printed.

    Args:
        max_lines: keep at most this many lines (``None``: all).
        max_chars: cut strings longer than this (``None``: keep them whole).
        reveal: show secrets whole (the ``v`` key).
    """
    if max_lines is None or max_chars is None:
        return pretty_lines(value if reveal else mask_value(value), max_lines=max_lines,
                            max_chars=max_chars)  # fmt: skip
    total = _line_count(value)
    if total is None:  # a value orjson cannot print (a huge int, deep nesting): the plain way
        return pretty_lines(value if reveal else mask_value(value), max_lines=max_lines,
                            max_chars=max_chars)  # fmt: skip
    pruner = _Pruner(max_lines, max_chars + SCAN_MARGIN, max_chars, reveal)
    part, _ = pruner.prune(value, 0, ())
    if not reveal:
        part = mask_value(part)
    part = _cut(part, max_chars, pruner.dropped, ())
    try:
        dumped = json.dumps(part, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, TypeError, ValueError):
        return pretty_lines(value if reveal else mask_value(value), max_lines=max_lines,
                            max_chars=max_chars)  # fmt: skip
    lines = printable_block(dumped).split("\n")[:max_lines]
    return lines, max(0, total - max_lines)


def _line_count(value: Any) -> int | None:
    """Lines of ``json.dumps(value, indent=2)``: orjson prints the same layout (one line
    per scalar, empty container or closing bracket). ``None`` when orjson cannot."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
    except (orjson.JSONEncodeError, TypeError):
        return None


class _Shown:
    """The start of a long JSON text, its secrets already masked (``mask_value`` passes
    over it: it is no string), and how many characters of the text are left off."""

    def __init__(self, text: str, dropped: int) -> None:
        self.text = text
        self.dropped = dropped


class _Pruner:
    """Cuts a value to the nodes that start in its first ``max_lines`` pretty-printed
    lines, and long strings to their first ``window`` characters (``dropped``: the
    characters left off, by path). A long JSON text in a string (an MCP answer) becomes
    a ``_Shown`` of its first ``max_chars`` characters, masked unless ``reveal``."""

    def __init__(
        self, max_lines: int, window: int, max_chars: int = 0, reveal: bool = True
    ) -> None:
        self.end = max_lines
        self.window = window
        self.max_chars = max_chars
        self.reveal = reveal
        self.dropped: dict[tuple[Part, ...], int] = {}

    def _long_text(self, value: str, path: tuple[Part, ...]) -> Any:
        """A string longer than the window: its start, masked when it is a JSON text."""
        if not self.reveal and value.lstrip()[:1] in ("{", "["):
            if len(value) > JSON_TEXT_MAX:  # the secret scan does not parse it either
                return self._window(value, path)
            try:
                inner = orjson.loads(value)
            except orjson.JSONDecodeError:
                return self._window(value, path)
            if not isinstance(inner, dict | list):
                return self._window(value, path)
            # the nodes that start in the characters shown
            head, _ = _json_head(inner, 0, self.max_chars)
            key = next((p for p in reversed(path) if isinstance(p, str)), None)
            masked = mask_json_text_head(value, head, self.max_chars, key)
            if masked is None:  # masked whole by its key: as mask_value does
                return value
            return _Shown(masked[0], len(value) - masked[1])
        return self._window(value, path)

    def _window(self, value: str, path: tuple[Part, ...]) -> str:
        self.dropped[path] = len(value) - self.window
        return value[: self.window]

    def prune(self, value: Any, line: int, path: tuple[Part, ...]) -> tuple[Any, int]:
        """``value`` cut, starting on line ``line``, and the line after it (any line past
        the end once the end is passed)."""
        if isinstance(value, str):
            if len(value) > self.window:
                return self._long_text(value, path), line + 1
            return value, line + 1
        if isinstance(value, dict) and value:
            out: dict[str, Any] = {}
            line += 1
            for key, item in value.items():
                # one child past the end: the last line shown ends with its comma; and
                # one child at least: a non-empty object cut to none would print as "{}"
                if line > self.end and out:
                    if value.get("_binary") is True:  # still a binary envelope: not scanned
                        out["_binary"] = True
                    break
                out[key], line = self.prune(item, line, (*path, key))
            return out, line + 1
        if isinstance(value, list) and value:
            items: list[Any] = []
            line += 1
            for index, item in enumerate(value):
                if line > self.end and items:
                    break
                shown, line = self.prune(item, line, (*path, index))
                items.append(shown)
            return items, line + 1
        return value, line + 1


def _json_head(value: Any, at: int, upto: int) -> tuple[Any, int]:
    """The nodes of ``value`` (parsed from a JSON text) that may start in the text's first
    ``upto`` characters, in document order, and where ``value`` ends at the soonest. A
    node is kept when the fewest characters the nodes before it take in any JSON text of
    them put its start before ``upto`` (no whitespace, a string its characters and quotes,
    a number one digit): 20k characters of 40k small objects are 330 objects, where a
    bound of one character a node scanned 20k of them (0.45 s)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        at += 1
        for index, (key, item) in enumerate(value.items()):
            at += 1 if index else 0
            if at >= upto and out:  # one member at least: none would print as "{}"
                if value.get("_binary") is True:  # still a binary envelope: not scanned
                    out["_binary"] = True
                break
            out[key], at = _json_head(item, at + len(key) + 3, upto)
        return out, at + 1
    if isinstance(value, list):
        items: list[Any] = []
        at += 1
        for index, item in enumerate(value):
            at += 1 if index else 0
            if at >= upto and items:
                break
            shown, at = _json_head(item, at, upto)
            items.append(shown)
        return items, at + 1
    if isinstance(value, str):
        return value, at + len(value) + 2
    if value is None or value is True:
        return value, at + 4
    return value, at + (5 if value is False else 1)


def _cut(value: Any, max_chars: int, dropped: dict[tuple[Part, ...], int], path: tuple) -> Any:
    """``value`` with every string longer than ``max_chars`` cut, saying how many
    characters were cut (those the pruner left off included), as ``pretty_lines`` does."""
    if isinstance(value, _Shown):
        text, extra = value.text, value.dropped
        if not extra and len(text) <= max_chars:  # masked whole, and shorter for it
            return text
        return f"{text[:max_chars]}…(+{len(text) - max_chars + extra} chars)"
    if isinstance(value, str):
        extra = dropped.get(path, 0) if dropped else 0
        if len(value) > max_chars or extra:
            return f"{value[:max_chars]}…(+{len(value) - max_chars + extra} chars)"
        return value
    if isinstance(value, dict):
        return {k: _cut(v, max_chars, dropped, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, max_chars, dropped, (*path, i)) for i, v in enumerate(value)]
    return value
