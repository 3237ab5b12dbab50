"""Drift of one aligned row: what differs between two entries, per JSON path.

``entry_drift(a, b)`` runs deepdiff over the args and over the outcomes (response, or
error) of two entries and maps every difference to a ``DriftItem``: value changed,
type changed, number type (``1`` vs ``1.0``: the same number, another JSON type), added,
removed, list item added, list item removed. deepdiff is the definition; two plain JSON
trees take a walk that gives the same items without it (``value_drift``). Callers
(``DiffResult.drift``) call it lazily, per row, and cache the result. Equal parts are
skipped before deepdiff (a plain comparison of canonical bytes takes microseconds where
deepdiff takes seconds on two identical 1 MB values).
"""

from __future__ import annotations

import math
from typing import Any

from ..format.entry import Entry
from ..format.jsonpath import format_path as json_path
from ..format.jsontext import sorted_json_bytes
from .model import Change, DriftItem

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
    "reordered": Change.REORDERED,  # ours: the same items in another order
}

#: lists longer than this (both sides together) are compared index by index: matching
#: their items (``difflib``) would cost the product of their lengths
MATCH_ITEMS = 2000


_CHANGE_ORDER = {change: rank for rank, change in enumerate(Change)}


def _path_order(parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """A sort key for a path: list indexes in numeric order, keys in text order."""
    return tuple((0, p, "") if type(p) is int else (1, 0, str(p)) for p in parts)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: a difference as deepdiff reports it: (report type, path parts, t1, t2)
_Report = tuple[str, tuple[Any, ...], Any, Any]

_SCALARS = frozenset((str, int, bool, type(None)))


def _fast_reports(a: Any, b: Any) -> list[_Report] | None:
    """deepdiff's reports (``view="tree"``, ``threshold_to_diff_deeper=0``) for two plain
    JSON trees, by deepdiff's own rules: another type at a path is ``type_changes``; two
    objects compare key by key (``dictionary_item_added``/``_removed`` for the others);
    two lists holding any object or list compare index by index, the longer one's tail
    ``iterable_item_added``/``_removed``; two lists of scalars only go to deepdiff itself
    (it aligns them with difflib); equal scalars are skipped, others ``values_changed``.

    ``None`` when the walk meets what is not plain JSON where both sides are compared (a
    non-finite float, a key that is not a string, a tuple...): deepdiff then decides.
    A property test holds this equal to deepdiff (tests/core/diff/test_drift_fast.py)."""
    out: list[_Report] = []
    stack: list[tuple[tuple[Any, ...], Any, Any]] = [((), a, b)]
    scalars = _SCALARS
    isfinite = math.isfinite
    while stack:
        parts, x, y = stack.pop()
        tx = type(x)
        if tx is not type(y):
            out.append(("type_changes", parts, x, y))
        elif tx is dict:
            if not _dict_reports(parts, x, y, out, stack):
                return None
        elif tx is list:
            _list_reports(parts, x, y, out, stack)
        elif tx is float:
            if not (isfinite(x) and isfinite(y)):
                return None
            if x != y:
                out.append(("values_changed", parts, x, y))
        elif tx not in scalars:
            return None
        elif x != y:
            out.append(("values_changed", parts, x, y))
    return out


#: the pairs of values the fast walk has yet to compare: (path parts, A's value, B's value)
_Stack = list[tuple[tuple[Any, ...], Any, Any]]


def _dict_reports(
    parts: tuple[Any, ...], x: dict[Any, Any], y: dict[Any, Any], out: list[_Report], stack: _Stack
) -> bool:
    """Two objects at ``parts``: the keys only one holds reported, the shared ones pushed
    on ``stack``. False when a key compared is not a string (deepdiff decides then)."""
    for k, v in x.items():
        if type(k) is not str:
            return False
        if k not in y:
            out.append(("dictionary_item_removed", parts + (k,), v, None))
    for k, v in y.items():
        if k not in x:
            if type(k) is not str:
                return False
            out.append(("dictionary_item_added", parts + (k,), None, v))
    for k, v in x.items():
        if k in y:
            stack.append((parts + (k,), v, y[k]))
    return True


def _list_reports(
    parts: tuple[Any, ...], x: list[Any], y: list[Any], out: list[_Report], stack: _Stack
) -> None:
    """Two lists at ``parts``: the same items in another order, one ``reordered`` report;
    of scalars only, deepdiff's own reports (unless equal); items only inserted or only
    removed (matched by their canonical JSON, ``difflib``), those items alone reported
    (``1 item inserted at [0]``, never every later index as changed); else the shared
    indexes pushed on ``stack`` and the longer one's tail reported."""
    if len(x) == len(y) and len(x) > 1:
        kx = [sorted_json_bytes(v) for v in x]
        ky = [sorted_json_bytes(v) for v in y]
        if kx != ky and sorted(kx) == sorted(ky):
            out.append(("reordered", parts, x, y))
            return
    if not (_holds_containers(x) or _holds_containers(y)):
        if len(x) == len(y) and all(
            type(p) is type(q) and p == q for p, q in zip(x, y, strict=True)
        ):
            return
        out.extend((report, parts + sub, t1, t2) for report, sub, t1, t2 in _deep_reports(x, y))
        return
    if len(x) != len(y) and len(x) + len(y) <= MATCH_ITEMS and _only_inserted(parts, x, y, out):
        return
    n = min(len(x), len(y))
    for i in range(n):
        stack.append((parts + (i,), x[i], y[i]))
    for i in range(n, len(x)):
        out.append(("iterable_item_removed", parts + (i,), x[i], None))
    for j in range(n, len(y)):
        out.append(("iterable_item_added", parts + (j,), None, y[j]))


def _only_inserted(parts: tuple[Any, ...], x: list[Any], y: list[Any], out: list[_Report]) -> bool:
    """When ``y`` is ``x`` with items inserted or removed (no item changed), report those
    items (``iterable_item_added`` at B's index, ``iterable_item_removed`` at A's) and
    return True; else report nothing and return False."""
    from difflib import SequenceMatcher

    kx = [sorted_json_bytes(v) for v in x]
    ky = [sorted_json_bytes(v) for v in y]
    ops = SequenceMatcher(None, kx, ky, autojunk=False).get_opcodes()
    if any(tag == "replace" for tag, *_ in ops):
        return False
    changed = sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
    if changed != abs(len(x) - len(y)):
        return False  # not the fewest items (repeated items fooled the matcher): by index
    for tag, i1, i2, j1, j2 in ops:
        if tag == "delete":
            out.extend(("iterable_item_removed", parts + (i,), x[i], None) for i in range(i1, i2))
        elif tag == "insert":
            out.extend(("iterable_item_added", parts + (j,), None, y[j]) for j in range(j1, j2))
    return True


def _holds_containers(values: list[Any]) -> bool:
    """Whether a list holds an object or a list."""
    return any(type(v) is dict or type(v) is list for v in values)


def _deep_reports(a: Any, b: Any) -> list[_Report]:
    """deepdiff's reports for any two values (the definition of drift)."""
    from deepdiff import DeepDiff

    tree = DeepDiff(
        a,
        b,
        view="tree",
        verbose_level=2,
        threshold_to_diff_deeper=0,
        ignore_nan_inequality=True,  # NaN is NaN; NaN, infinities and null stay apart
    )
    reports: list[_Report] = []
    for report, levels in tree.items():
        if report not in _REPORTS:
            continue
        for level in levels:
            reports.append((report, tuple(level.path(output_format="list")), level.t1, level.t2))
    return reports


def value_drift(a: Any, b: Any, part: str = "response", *, fast: bool = True) -> list[DriftItem]:
    """The differences between two JSON values as ``DriftItem``s tagged with ``part``,
    sorted by path (list indexes in numeric order), then by kind. ``[]`` when the values
    are equal as JSON (``1`` and ``1.0`` are not: that is a ``number_type`` change).

    deepdiff defines the drift; for two plain JSON trees (see ``_fast_reports``) the same items
    come from a walk that skips deepdiff (``fast=False`` forces deepdiff), 10-100x faster.
    """
    if sorted_json_bytes(a) == sorted_json_bytes(b):
        return []
    reports = _fast_reports(a, b) if fast else None
    if reports is None:
        reports = _deep_reports(a, b)
    found: list[tuple[tuple[Any, ...], int, Change, tuple[Any, ...], Any, Any]] = []
    for report, parts, t1, t2 in reports:
        change = _REPORTS[report]
        found.append((_path_order(parts), _CHANGE_ORDER[change], change, parts, t1, t2))
    # deepdiff keeps each report's levels in a set, whose order follows string hashing
    # (PYTHONHASHSEED): sort by path so the same diff always reads the same way
    found.sort(key=lambda item: item[:2])
    items: list[DriftItem] = []
    for _order, _rank, change, parts, t1, t2 in found:
        old = None if change in (Change.ADDED, Change.ITEM_ADDED) else t1
        new = None if change in (Change.REMOVED, Change.ITEM_REMOVED) else t2
        kind = change
        if change is Change.TYPE_CHANGED and _is_number(old) and _is_number(new):
            kind = Change.NUMBER_TYPE if old == new else Change.VALUE_CHANGED
        items.append(DriftItem(json_path(parts), old, new, kind, part))
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
