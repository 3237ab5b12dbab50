"""The rule path syntax and the tree walks the normalization rules make with it.

Paths are in the engine's one JSON-path syntax (``format/jsonpath.py``): what a message
prints (``$.metadata.request_id``, ``$["a.b"]``) is accepted, as is the dotted form
(``metadata.request_id``, ``items.*.id``); a ``TOOL:`` prefix scopes a rule to one tool.
Every walk rebuilds the containers on its way and never changes a value in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..format.jsonpath import ANY_DEPTH, JSONPathError, Part, Segment, parse_path, segment_matches


def parse_rule_path(path: str) -> tuple[Segment, ...]:
    """The pattern of a rule's ``path``; raises ``JSONPathError`` for a path that does not
    parse or names the root."""
    segments = parse_path(path, pattern=True)
    if not segments:
        raise JSONPathError(f"bad path {path!r}: the root itself cannot be dropped")
    return segments


def split_tool(spec: str) -> tuple[str | None, str]:
    """``"search_docs:since"`` -> ``("search_docs", "since")``; ``"a.b"`` -> ``(None, "a.b")``;
    ``"search_docs:$.since"`` -> ``("search_docs", "$.since")``."""
    head, sep, tail = spec.partition(":")
    if sep and head and not any(c in head for c in '.*[]"$'):
        return head, tail
    return None, spec


def drop_matching(value: Any, pattern: tuple[Segment, ...]) -> Any:
    """A copy of ``value`` without the nodes matching ``pattern`` (containers rebuilt on the
    way, never mutated)."""
    if not pattern:
        return value
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        value = drop_matching(value, rest)  # zero levels
        return map_children(value, lambda _k, v: drop_matching(v, pattern))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if segment_matches(head, k):
                if not rest:
                    continue
                v = drop_matching(v, rest)
            out[k] = v
        return out
    if isinstance(value, list):
        out_list = []
        for i, v in enumerate(value):
            if segment_matches(head, i):
                if not rest:
                    continue
                v = drop_matching(v, rest)
            out_list.append(v)
        return out_list
    return value


def map_children(value: Any, fn: Callable[[Part, Any], Any]) -> Any:
    """A container with ``fn(key or index, child)`` for each child; a scalar as it is."""
    if isinstance(value, dict):
        return {k: fn(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [fn(i, v) for i, v in enumerate(value)]
    return value


def map_at(value: Any, pattern: tuple[Segment, ...], fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every node matching ``pattern`` (``()`` = the root)."""
    if not pattern:
        return fn(value)
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        value = map_at(value, rest, fn)
        return map_children(value, lambda _k, v: map_at(v, pattern, fn))
    return map_children(value, lambda k, v: map_at(v, rest, fn) if segment_matches(head, k) else v)


def map_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every scalar below ``value`` (containers rebuilt)."""
    if isinstance(value, (dict, list)):
        return map_children(value, lambda _k, v: map_leaves(v, fn))
    return fn(value)
