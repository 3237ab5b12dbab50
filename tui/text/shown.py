"""What a screen shows of one value: the first lines of its pretty print, secrets masked,
built from those lines only.

A 2 MB response pretty-printed is 40k lines, of which the detail pane shows 12 (2,000
when expanded). Masking and printing the whole value cost a second or more for a large
list or object; here the value is first cut to the part that lands in the lines shown
(``_Pruner``), then that part is masked and printed, so the work follows what is seen. The
count of lines cut comes from the whole value's pretty print by orjson, in C. The lines are
the same as ``pretty_lines(mask_value(value), ...)`` (``tests/tui/test_shown_lines.py``).

A long string is the exception: ``mask_value`` masks each secret the scan finds anywhere
in it everywhere its text occurs, so a string longer than the part shown is masked whole
(``masked_long_text``), not cut first. Finding that it holds no secret costs one pass of
the prefilter over its bytes (``core.scan.string_secrets``, ``json_text_secrets``).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from cassette_tui.core.format.jsonpath import Part
from cassette_tui.core.scan.masked_text import MaskedText
from cassette_tui.core.scan.masking import mask_part, mask_value
from cassette_tui.core.scan.masking import masked_long_found as _masked_long_found

from .kept import KeptByIds
from .safe import pretty_lines, printable_block

__all__ = ["LONG_TEXT", "masked_long_found", "masked_long_text", "shown_lines"]

#: a string longer than this is masked by ``masked_long_text`` (and kept: the pane and the
#: step screen show the same one)
LONG_TEXT = 16_384


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
    pruner = _Pruner(max_lines, max(max_chars, LONG_TEXT), reveal)
    part, _ = pruner.prune(value, 0, ())
    if not reveal:
        part = mask_part(part)  # one pass of the prefilter when it holds no secret
    part = _cut(part, max_chars, pruner.dropped, ())
    try:
        dumped = json.dumps(part, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, TypeError, ValueError):
        return pretty_lines(value if reveal else mask_value(value), max_lines=max_lines,
                            max_chars=max_chars)  # fmt: skip
    lines = printable_block(dumped).split("\n")[:max_lines]
    return lines, max(0, total - max_lines)


#: the long texts masked last, by id and key, with the text, and the secrets masked in
#: them: the detail of one step is built again for the step screen and for ``e``, from the
#: same entries, and its drift shows the same texts (a 3 MB JSON text parses in 7 ms, and
#: the prefilter passes over it in 10); A and B of the step shown, under two keys at most
_TEXTS: KeptByIds[tuple[str | MaskedText, list[str]] | None] = KeptByIds(4)


def masked_long_text(text: str, key: str | None) -> str | MaskedText | None:
    """``mask_value(text, key)`` of a string found under ``key``: ``text`` itself when it
    holds no secret, else the whole text with each secret the scan finds anywhere in it
    masked everywhere it occurs, as a ``MaskedText`` (built only where it is read: the
    part shown, its length, the drift's first difference) or a string; ``None`` when
    ``key`` names a secret (the whole text is the secret), left to ``mask_value``:
    ``masking.masked_long``, the last few kept."""
    found = masked_long_found(text, key)
    return None if found is None else found[0]


def masked_long_found(text: str, key: str | None) -> tuple[str | MaskedText, list[str]] | None:
    """``(masked_long_text(text, key), the secrets masked in it)``, kept as it is (the
    secrets: for the drift's other side, ``core.scan.pair_masking``); ``None`` as there."""
    return _TEXTS.get((text,), key, lambda kept: _masked_long_found(kept, key))


#: the line counts of the large values counted last, by id, with the value: the pane, the
#: step screen and ``e`` show the same entries' values, as held (``Cassette.entry_view``:
#: not changed by the screens), and orjson's print of a 2.4 MB list of 40k small objects,
#: only to count its lines, took 9 ms a side (24 MB: 0.1 s) at each view; A's and B's
#: args and answers of the step shown
_COUNTS: KeptByIds[int | None] = KeptByIds(4)


def _line_count(value: Any) -> int | None:
    """Lines of ``json.dumps(value, indent=2)``: orjson prints the same layout (one line
    per scalar, empty container or closing bracket). ``None`` when orjson cannot. A value
    of few nodes is counted by walking it (``_walked_lines``): orjson's print of a 24 MB
    string, only to count its lines, took 25 ms. A larger one's count is kept for the
    next view of the same value (``_COUNTS``)."""
    walked = _walked_lines(value)
    if walked is not None:
        return walked
    return _COUNTS.get((value,), None, _printed_lines)


def _printed_lines(value: Any) -> int | None:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
    except (orjson.JSONEncodeError, TypeError):
        return None


#: the nodes ``_walked_lines`` visits before it leaves the count to orjson, and the depth
#: (orjson refuses past 254 levels)
_WALK_NODES = 2_000
_WALK_DEPTH = 200
_INT64 = (-(2**63), 2**64 - 1)  # the ints orjson prints


def _walked_lines(value: Any) -> int | None:
    """``_line_count(value)`` by a walk over at most ``_WALK_NODES`` nodes of plain JSON
    types (a non-empty container: its opening and closing lines and its children's); or
    ``None``, for orjson to count (more nodes or levels, or anything orjson may refuse: a
    key that is no string, an int past 64 bits, a string that is not UTF-8)."""
    lines = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if depth > _WALK_DEPTH:
            return None
        kind = type(node)
        if (kind is dict or kind is list) and seen + len(stack) + len(node) > _WALK_NODES:
            return None  # past the nodes walked, known before the children are stacked
        if kind is dict:
            if any(type(k) is not str or not _utf8(k) for k in node):
                return None
            lines += 2 if node else 1
            stack.extend((child, depth + 1) for child in node.values())
        elif kind is list:
            lines += 2 if node else 1
            stack.extend((child, depth + 1) for child in node)
        elif kind is str:
            if not _utf8(node):
                return None
            lines += 1
        elif kind is int:
            if not _INT64[0] <= node <= _INT64[1]:
                return None
            lines += 1
        elif kind is float or kind is bool or node is None:
            lines += 1
        else:
            return None
    return lines


def _utf8(text: str) -> bool:
    """Whether ``text`` is UTF-8 (no lone surrogate): orjson prints it."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Shown:
    """A long string with its secrets already masked as ``mask_value`` masks them (it
    passes over this: it is no string), cut by ``_cut`` as a string: the part it shows
    read from a ``MaskedText``, the whole not built."""

    def __init__(self, text: str | MaskedText) -> None:
        self.text = text


class _Pruner:
    """Cuts a value to the nodes that start in its first ``max_lines`` pretty-printed
    lines, and long strings to their first ``window`` characters (``dropped``: the
    characters left off, by path). Unless ``reveal``, a long string becomes a ``_Shown``:
    of its start when it holds no secret, else of the whole text masked."""

    def __init__(self, max_lines: int, window: int, reveal: bool = True) -> None:
        self.end = max_lines
        self.window = window
        self.reveal = reveal
        self.dropped: dict[tuple[Part, ...], int] = {}

    def _long_text(self, value: str, path: tuple[Part, ...]) -> Any:
        """A string longer than the window: its start, masked as the whole string is
        (``masked_long_text``), or the whole string masked when a secret is in it."""
        if self.reveal:
            return self._window(value, path)
        key = next((p for p in reversed(path) if isinstance(p, str)), None)
        masked = masked_long_text(value, key)
        if masked is None:  # masked whole by its key: as mask_value does
            return value
        if masked is value:  # no secret in it: its start, not scanned again
            return _Shown(self._window(value, path))
        return _Shown(masked)

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


def _cut(value: Any, max_chars: int, dropped: dict[tuple[Part, ...], int], path: tuple) -> Any:
    """``value`` with every string longer than ``max_chars`` cut, saying how many
    characters were cut (those the pruner left off included), as ``pretty_lines`` does."""
    if isinstance(value, _Shown):
        value = value.text  # masked already, and whole
        if isinstance(value, MaskedText):  # the part shown read alone, as the whole cut
            size, extra = len(value), dropped.get(path, 0) if dropped else 0
            if size > max_chars or extra:
                return f"{value[:max_chars]}…(+{size - max_chars + extra} chars)"
            return str(value)
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
