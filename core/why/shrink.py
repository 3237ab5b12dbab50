"""The parts of a JSON response that ``minimise --shrink-responses`` may drop: an object's
keys and a list's items, at any depth, addressed by a path of keys and indices from the
response's root. Strings, numbers and the like are kept whole (a shorter string is
another answer, not less of one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..format.jsonpath import Part, format_path

__all__ = ["at", "child_containers", "format_path", "keeping", "parts"]

PathParts = tuple[Part, ...]


def at(value: Any, path: PathParts) -> Any:
    """The value at ``path`` inside ``value``."""
    for part in path:
        value = value[part]
    return value


def parts(value: Any, path: PathParts) -> list[Part]:
    """The keys (an object) or indices (a list) of the container at ``path``, in order;
    ``[]`` for anything else."""
    inner = at(value, path)
    if isinstance(inner, dict):
        return list(inner)
    if isinstance(inner, list):
        return list(range(len(inner)))
    return []


def keeping(value: Any, path: PathParts, kept: Sequence[Part]) -> Any:
    """A copy of ``value`` whose container at ``path`` keeps only the parts ``kept`` (in
    its own order); the rest of ``value`` is shared, not copied."""
    if not path:
        wanted = set(kept)
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k in wanted}
        return [v for i, v in enumerate(value) if i in wanted]
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out: Any = dict(value)
    else:
        out = list(value)
    out[head] = keeping(value[head], rest, kept)
    return out


def child_containers(value: Any, path: PathParts) -> list[PathParts]:
    """The paths of the non-empty objects and lists right inside the container at
    ``path``, in order."""
    inner = at(value, path)
    items = inner.items() if isinstance(inner, dict) else enumerate(inner)
    return [(*path, k) for k, v in items if isinstance(v, dict | list) and v]
