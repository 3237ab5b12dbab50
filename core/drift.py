"""Drift of one aligned row: what differs between two entries, per JSON path.

``entry_drift(a, b)`` runs deepdiff over the args and over the outcomes (response, or
error) of two entries and maps every difference to a ``DriftItem``: value changed,
type changed, number type (``1`` vs ``1.0``: the same number, another JSON type), added,
removed, list item added, list item removed. It is the only place deepdiff runs; callers
(``DiffResult.drift``) call it lazily, per row, and cache the result. Equal parts are
skipped before deepdiff (a plain comparison of canonical bytes takes microseconds where
deepdiff takes seconds on two identical 1 MB values).
"""

from __future__ import annotations

from typing import Any

from deepdiff import DeepDiff

from .diff_model import Change, DriftItem
from .entry import Entry
from .jsonpath import format_path as json_path
from .jsontext import sorted_json_bytes

__all__ = ["entry_drift", "json_path", "value_drift"]

#: deepdiff report type -> our change kind
_REPORTS: dict[str, Change] = {
    "values_changed": Change.VALUE_CHANGED,
    "type_changes": Change.TYPE_CHANGED,
    "dictionary_item_added": Change.ADDED,
    "dictionary_item_removed": Change.REMOVED,
    "iterable_item_added": Change.ITEM_ADDED,
    "iterable_item_removed": Change.ITEM_REMOVED,
    "set_item_added": Change.ITEM_ADDED,
    "set_item_removed": Change.ITEM_REMOVED,
    "attribute_added": Change.ADDED,
    "attribute_removed": Change.REMOVED,
}


_CHANGE_ORDER = {change: rank for rank, change in enumerate(Change)}


def _path_order(parts: list[Any]) -> tuple[Any, ...]:
    """A sort key for a path: list indexes in numeric order, keys in text order."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_drift(a: Any, b: Any, part: str = "response") -> list[DriftItem]:
    """The differences between two JSON values as ``DriftItem``s tagged with ``part``, in
    deepdiff's order (changes, then removals and additions). ``[]`` when the values are
    equal as JSON (``1`` and ``1.0`` are not: that is a ``number_type`` change)."""
    if sorted_json_bytes(a) == sorted_json_bytes(b):
        return []
    tree = DeepDiff(a, b, view="tree", verbose_level=2, threshold_to_diff_deeper=0)
    found: list[tuple[tuple[Any, ...], int, Change, Any]] = []
    for report, levels in tree.items():
        change = _REPORTS.get(report)
        if change is None:
            continue
        for level in levels:
            parts = level.path(output_format="list")
            found.append((_path_order(parts), _CHANGE_ORDER[change], change, level))
    # deepdiff keeps each report's levels in a set, whose order follows string hashing
    # (PYTHONHASHSEED): sort by path so the same diff always reads the same way
    found.sort(key=lambda item: item[:2])
    items: list[DriftItem] = []
    for _order, _rank, change, level in found:
        path = json_path(level.path(output_format="list"))
        old = None if change in (Change.ADDED, Change.ITEM_ADDED) else level.t1
        new = None if change in (Change.REMOVED, Change.ITEM_REMOVED) else level.t2
        kind = change
        if change is Change.TYPE_CHANGED and _is_number(old) and _is_number(new):
            kind = Change.NUMBER_TYPE if old == new else Change.VALUE_CHANGED
        items.append(DriftItem(path, old, new, kind, part))
    return items


def entry_drift(a: Entry, b: Entry) -> list[DriftItem]:
    """The drift between two aligned entries: the tool name (part ``"tool"``) when it
    differs, then the args (part ``"args"``), then the outcome: both responses (part
    ``"response"``), both errors (part ``"error"``), or — when one side raised and the other
    returned — a ``removed`` item for A's outcome and an ``added`` one for B's at ``$``."""
    items: list[DriftItem] = []
    if a.tool != b.tool:
        items.append(DriftItem("$", a.tool, b.tool, Change.VALUE_CHANGED, "tool"))
    items.extend(value_drift(a.args, b.args, "args"))
    if a.is_error and b.is_error:
        items.extend(value_drift(a.error, b.error, "error"))
    elif not a.is_error and not b.is_error:
        items.extend(value_drift(a.response, b.response, "response"))
    else:
        part_a = "error" if a.is_error else "response"
        part_b = "error" if b.is_error else "response"
        value_a = a.error if a.is_error else a.response
        value_b = b.error if b.is_error else b.response
        items.append(DriftItem("$", value_a, None, Change.REMOVED, part_a))
        items.append(DriftItem("$", None, value_b, Change.ADDED, part_b))
    return items
