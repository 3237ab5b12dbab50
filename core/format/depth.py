"""One nesting limit for imported values, checked without recursion.

A value nested deeper than :data:`MAX_DEPTH` levels of lists and objects (an argument
string holding ``[[[[...]]]]``, a YAML body) is a format error naming the file and the
field, so that no later stage (the digest, drift, lint, ``--json``, the app) meets a value
at the edge of Python's recursion limit, where the outcome would depend on how deep the
caller's own stack happens to be (975 levels worked, 985 raised ``RecursionError``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import CassetteFormatError

#: the deepest nesting an imported value may have (levels of lists and objects)
MAX_DEPTH = 600


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Levels of nested lists/tuples and dicts in ``value`` (a scalar is 0), counted
    without recursion; stops counting once past ``limit`` (returns ``limit + 1``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > limit:
                return limit + 1
        stack.extend((child, level) for child in children if isinstance(child, dict | list | tuple))
    return deepest


def check_depth(value: Any, path: str | Path, line: int | None, field: str) -> None:
    """Raise ``CassetteFormatError(path, line, field, ...)`` when ``value`` is nested
    deeper than :data:`MAX_DEPTH` levels."""
    if depth_of(value) > MAX_DEPTH:
        raise CassetteFormatError(
            path, line, field, f"nested deeper than {MAX_DEPTH} levels of lists and objects"
        )
