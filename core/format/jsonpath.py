"""One JSON-path syntax and one leaf walker for the whole engine.

Every path a message prints (lint, diagnosis, drift, nearest, replay misses) and every
path a normalization rule accepts is written in this one syntax, so a path copied from a
message into ``[tool.cassette.normalize]`` means the same node:

``$``
    the root (the args, for a normalization rule; the entry, for a lint finding).
``.name``
    an object key made of letters, digits and ``_`` (not starting with a digit).
``[3]``
    a list index.
``["any key"]``
    any object key, as a JSON string: keys with dots, brackets, spaces, quotes, ``*`` or
    that are empty (``$["a.b"]``, ``$["*"]``, ``$[""]``).
``.*`` / ``[*]``
    (patterns only) any one key or index.
``.**``
    (patterns only) any number of levels, zero included.

A pattern may leave out the leading ``$`` and the first dot (``metadata.request_id``,
``items.*.id``): the dotted form the config always accepted. In that dotted form a segment
of digits (``items.0``) matches list index 0 as well as the key ``"0"``.

``format_path(["hits", 0, "a.b"])`` -> ``'$.hits[0]["a.b"]'``;
``parse_path('$.hits[0]["a.b"]')`` -> ``("hits", 0, "a.b")``. The two round-trip for any
list of string keys and integer indexes (a property test holds them to it).

``iter_leaves(value)`` walks a JSON value without recursion (any depth), in document
order, yielding ``(parts, leaf)``; empty objects and lists are leaves too.
``leaf_values(value)`` gives the scalar leaves alone, in no set order and without paths:
the cheap walk for a question about the values (is any volatile?).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

#: a key written as ``.name``: what a person would type, unambiguous in the grammar
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Wildcard:
    """A pattern segment: any one key or index (``*``), or any levels (``**``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


#: the pattern segment ``*``: any one key or list index
ANY: Final = _Wildcard("*")
#: the pattern segment ``**``: any number of levels, zero included
ANY_DEPTH: Final = _Wildcard("**")


@dataclass(frozen=True, slots=True)
class KeyOrIndex:
    """A dotted-form segment of digits (``items.0``): the key ``"0"`` or the index ``0``."""

    key: str

    @property
    def index(self) -> int:
        return int(self.key)


#: one part of a concrete path
Part = str | int
#: one segment of a pattern
Segment = str | int | KeyOrIndex | _Wildcard


class JSONPathError(ValueError):
    """A path that does not follow the syntax; the message says where and why."""


def format_key(key: Part) -> str:
    """One path step: ``.name``, ``[3]`` or ``["any key"]`` (see the module docstring)."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"[{key}]"
    key = str(key)
    if _IDENTIFIER.match(key):
        return "." + key
    return "[" + json.dumps(key, ensure_ascii=False) + "]"


#: formatted steps of the keys seen most (a drift of 100k rows formats a million paths
#: from a few hundred distinct keys); bounded
_KEY_TEXT: dict[str, str] = {}
_KEY_TEXT_MAX = 1 << 16


def format_path(parts: Iterator[Part] | list[Part] | tuple[Part, ...]) -> str:
    """A ``$``-based path from keys (``str``) and list indexes (``int``)."""
    out = "$"
    cache = _KEY_TEXT
    for part in parts:
        if type(part) is str:
            text = cache.get(part)
            if text is None:
                text = format_key(part)
                if len(cache) < _KEY_TEXT_MAX:
                    cache[part] = text
            out += text
        elif type(part) is int:
            out += f"[{part}]"
        else:
            out += format_key(part)
    return out


def child_path(parent: str, key: Part) -> str:
    """``parent`` (a formatted path) one step down: ``child_path("$.a", 0)`` -> ``"$.a[0]"``."""
    return parent + format_key(key)


def parse_path(text: str, *, pattern: bool = False) -> tuple[Segment, ...]:
    """The segments of ``text``: keys (``str``), indexes (``int``), and with ``pattern``
    also ``ANY``, ``ANY_DEPTH`` and ``KeyOrIndex`` (a digit segment of the dotted form).

    Raises:
        JSONPathError: an empty segment, an unclosed bracket, a bad quoted key, a wildcard
            where ``pattern`` is false; the message quotes the path and the column.
    """
    if not isinstance(text, str) or not text:
        raise JSONPathError(f"bad path {text!r}: empty")
    segments: list[Segment] = []
    pos = 0
    n = len(text)
    dotted = True  # the leading-$-less form: digit segments may be indexes
    if text.startswith("$"):
        pos = 1
        dotted = False
    elif text[0] != "[":
        text = "." + text  # "a.b" reads as ".a.b"
        n += 1
        pos = 0

    def bad(why: str, at: int) -> JSONPathError:
        shown = text[1:] if dotted and text.startswith(".") else text
        col = at if not (dotted and text.startswith(".")) else max(at - 1, 0)
        return JSONPathError(f"bad path {shown!r} at column {col + 1}: {why}")

    while pos < n:
        ch = text[pos]
        if ch == ".":
            segment, pos = _dotted_segment(text, pos, pattern=pattern, dotted=dotted, bad=bad)
        elif ch == "[":
            segment, pos = _bracket_segment(text, pos, pattern=pattern, bad=bad)
        else:
            raise bad(f"unexpected {ch!r} (expected '.' or '[')", pos)
        segments.append(segment)
    return tuple(segments)


def _dotted_segment(
    text: str, pos: int, *, pattern: bool, dotted: bool, bad: Callable[[str, int], Exception]
) -> tuple[Segment, int]:
    """The segment ``.name`` at ``pos`` of ``text`` (``*``/``**`` in a pattern; a digit
    name of the dotted form in a pattern is a ``KeyOrIndex``), and where the next begins."""
    end = pos + 1
    while end < len(text) and text[end] not in ".[":
        end += 1
    name = text[pos + 1 : end]
    if not name:
        raise bad('empty segment (a key with dots or brackets is written ["a.b"])', pos)
    if name in ("*", "**"):
        if not pattern:
            raise bad(f"wildcard {name!r} in a path that is not a pattern", pos)
        return (ANY if name == "*" else ANY_DEPTH), end
    if dotted and pattern and name.isdigit():
        return KeyOrIndex(name), end
    return name, end


def _bracket_segment(
    text: str, pos: int, *, pattern: bool, bad: Callable[[str, int], Exception]
) -> tuple[Segment, int]:
    """The segment ``["key"]``, ``[index]`` or (in a pattern) ``[*]`` at ``pos`` of
    ``text``, and where the next begins."""
    if text.startswith('["', pos):
        try:
            key, end = json.JSONDecoder().raw_decode(text, pos + 1)
        except json.JSONDecodeError as exc:
            raise bad(f"bad quoted key: {exc.msg}", pos) from None
        if not isinstance(key, str) or end >= len(text) or text[end] != "]":
            raise bad('a quoted key is written ["key"]', pos)
        return key, end + 1
    end = text.find("]", pos)
    if end < 0:
        raise bad("unclosed [", pos)
    inner = text[pos + 1 : end]
    if inner == "*":
        if not pattern:
            raise bad("wildcard '*' in a path that is not a pattern", pos)
        return ANY, end + 1
    if inner.isdigit() and inner.isascii():
        return int(inner), end + 1
    raise bad('expected [index], ["key"] or [*]', pos)


def segment_matches(segment: Segment, key: Part) -> bool:
    """Whether one pattern ``segment`` (not ``ANY_DEPTH``) matches a concrete ``key``
    (an object key ``str`` or a list index ``int``)."""
    if segment is ANY:
        return True
    if isinstance(segment, KeyOrIndex):
        return segment.key == key if isinstance(key, str) else segment.index == key
    if isinstance(segment, int):
        return isinstance(key, int) and segment == key
    return isinstance(key, str) and segment == key


def iter_leaves(
    value: Any,
    prefix: tuple[Part, ...] = (),
    *,
    skip: Callable[[Any], bool] | None = None,
    only: tuple[type, ...] | None = None,
) -> Iterator[tuple[tuple[Part, ...], Any]]:
    """Every leaf below ``value`` as ``(parts, leaf)``, in document order (object keys in
    their order, list items by index), without recursion: any depth is safe. A leaf is a
    scalar, or an empty object or list. ``skip(node)`` true for a non-empty object or
    list: that node is neither entered nor yielded (a base64 envelope, say). ``only``: the
    leaf types wanted (``(str,)``, say; subclasses count): other leaves, empty objects and
    lists included, are passed over without building their path, which is what makes a
    scan of every string of a large cassette cheap (lint, the secret scan)."""
    if not isinstance(value, dict | list):
        if only is None or isinstance(value, only):
            yield prefix, value
        return
    if skip is not None and skip(value):
        return
    if not value:
        if only is None or isinstance(value, only):
            yield prefix, value
        return
    # scalar types met by identity; a non-empty object or list is entered, never yielded
    exact = frozenset(only) - {dict, list} if only is not None else None
    # each frame: the path to a node and an iterator over its (key, child) pairs; a path
    # is built for a child only when it is yielded or entered
    stack: list[tuple[tuple[Part, ...], Iterator[tuple[Any, Any]]]] = [
        (prefix, iter(value.items()) if isinstance(value, dict) else enumerate(value))
    ]
    while stack:
        parts, it = stack[-1]
        for key, child in it:
            kind = type(child)
            if exact is not None and kind in exact:
                yield parts + (key,), child
            elif kind is dict or kind is list or isinstance(child, dict | list):
                if skip is not None and skip(child):
                    continue
                if not child:
                    if exact is None or isinstance(child, only):  # type: ignore[arg-type]
                        yield parts + (key,), child
                else:
                    sub = child.items() if isinstance(child, dict) else enumerate(child)
                    stack.append((parts + (key,), iter(sub)))
                    break
            elif exact is None or isinstance(child, only):  # type: ignore[arg-type]
                yield parts + (key,), child
        else:
            stack.pop()


def leaf_values(value: Any) -> Iterator[Any]:
    """Every scalar leaf below ``value`` (objects' values and list items, at any depth,
    without recursion), in no set order and with no path built: a test over the values
    that needs a path only when it finds something (lint's volatile args) asks this
    first, then ``iter_leaves`` for the paths. Empty objects and lists yield nothing."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is dict:
            push(node.values())
        elif kind is list:
            push(node)
        elif isinstance(node, dict):
            push(node.values())
        elif isinstance(node, list | tuple):
            push(node)
        else:
            yield node
