"""The result types of a diff of two cassettes (the ``--json`` schema: docs/json.md).

``align.py`` fills ``Row``s, ``drift.py`` computes ``DriftItem``s lazily per row, and
``diagnose.py`` produces ``Finding``s. The app and the ``diff`` command only present these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..format.findings import Finding

__all__ = ["STATUS_WORDS", "Change", "DriftItem", "Finding", "Row", "Status"]


class Status(str, Enum):
    """The status of one aligned row."""

    SAME = "same"
    RESPONSE_DRIFT = "response_drift"  # same key, different response
    ARGS_DRIFT = "args_drift"  # same tool at the same place, different args
    OTHER_CALL = "other_call"  # by-seq alignment: a different tool at that seq
    ONLY_A = "only_a"
    ONLY_B = "only_b"
    #: same key; the responses differ only in volatile metadata (see refine.py): shown,
    #: not a divergence
    METADATA_DRIFT = "metadata_drift"
    #: the same call with the same answer at another position (parallel calls completed
    #: in another order; see refine.py): not a divergence
    MOVED = "moved"


#: a status that parts two runs, as the diagnosis' messages say it (``first_divergence``)
STATUS_WORDS = {
    Status.RESPONSE_DRIFT: "same call, different response",
    Status.ARGS_DRIFT: "same tool, different args",
    Status.OTHER_CALL: "a different tool at this step",
    Status.ONLY_A: "a step only A made",
    Status.ONLY_B: "a step only B made",
}


class Change(str, Enum):
    """The kind of one drift item (one JSON path)."""

    VALUE_CHANGED = "value_changed"
    TYPE_CHANGED = "type_changed"
    NUMBER_TYPE = "number_type"  # 1 vs 1.0: same number, another JSON type
    ADDED = "added"  # present in B only
    REMOVED = "removed"  # present in A only
    ITEM_ADDED = "item_added"  # list item present in B only
    ITEM_REMOVED = "item_removed"  # list item present in A only
    REORDERED = "reordered"  # a list holding the same items in another order (a, b: the lists)


@dataclass(frozen=True, slots=True)
class Row:
    """One aligned step.

    Attributes:
        a: index of the entry in cassette A (``None`` when the row is only in B).
        b: index of the entry in cassette B (``None`` when the row is only in A).
        a_seq, b_seq: the seqs of those entries, or ``None`` on the missing side.
        status: see ``Status``.
        tool: the tool name (A's when both exist and differ).
        repeated_a, repeated_b: the side's key occurs more than once within its own run.
        error_a, error_b: the side's outcome is an error (``error`` entry, or a response
            carrying an HTTP 4xx/5xx status) while the other side succeeded.
    """

    a: int | None
    b: int | None
    a_seq: int | None
    b_seq: int | None
    status: Status
    tool: str
    repeated_a: bool = False
    repeated_b: bool = False
    error_a: bool = False
    error_b: bool = False


@dataclass(frozen=True)
class DriftItem:
    """One difference at one JSON path.

    Attributes:
        path: the JSON path, ``$`` based (``$.hits[0].title``).
        a: the value in A (``None`` for ``added``/``item_added``).
        b: the value in B (``None`` for ``removed``/``item_removed``).
        change: see ``Change``.
        part: ``"args"`` or ``"response"`` (or ``"error"``), the part of the entry.
    """

    path: str
    a: Any
    b: Any
    change: Change
    part: str = "response"
