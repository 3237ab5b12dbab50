"""The parts every finding of a diagnosis is made of: its seqs, and values cut short for
its message (``diagnose.py`` lists the findings)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..format.findings import Finding
from ..scan.masking import key_at, mask_at, mask_value
from ..scan.pair_masking import mask_pair

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from .model import Row

MAX_SEQS = 20  # seqs listed per finding


def finding(
    kind: str,
    seqs: dict[str, list[int]],
    message: str,
    action: str,
    evidence: dict[str, Any] | None = None,
) -> Finding:
    return Finding(kind=kind, seqs=seqs, message=message, action=action, evidence=evidence or {})


def row_seqs(row: Row) -> dict[str, list[int]]:
    """``{"a": [A's seq], "b": [B's seq]}`` of one row (``[]`` on a missing side)."""
    return {
        "a": [row.a_seq] if row.a_seq is not None else [],
        "b": [row.b_seq] if row.b_seq is not None else [],
    }


def short(value: Any, width: int = 40, path: str | None = None) -> str:
    """``value`` for a finding's message, cut to ``width`` characters, each secret in it
    masked first (``masking.mask_at`` under ``path``'s last key): a message is printed,
    saved and shown in the app, and a value cut short is no longer found by the scan."""
    return _cut(mask_at(value, path), width)


def short_pair(a: Any, b: Any, width: int = 40, path: str | None = None) -> tuple[str, str]:
    """``short`` of a drift's two values, each secret found on either side masked on both
    (``pair_masking.mask_pair``): a secret A's scan finds and B's misses (B's copy cut
    inside it, or split) is not shown by B's half of the message."""
    masked_a, masked_b, _ = mask_pair(a, b, key_at(path))
    return _cut(masked_a, width), _cut(masked_b, width)


def _cut(value: Any, width: int) -> str:
    text = (
        "null" if value is None else (repr(value) if not isinstance(value, str) else f'"{value}"')
    )
    return text if len(text) <= width else text[: width - 3] + "..."


def json_short(value: Any, width: int = 60) -> str:
    """``value`` as compact JSON, cut to ``width`` characters, its secrets masked."""
    value = mask_value(value)
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def step(c: Cassette, i: int | None, side: str) -> str:
    if i is None:
        return f"no step in {side}"
    return f"{side} seq {c.seq(i)} {c.tool(i)}"


def key_text(key: tuple[str, str]) -> str:
    return f"{key[0]} {key[1]}"


def seq_list(seqs: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3, 5"``; long lists are cut with a count."""
    parts: list[str] = []
    start = prev = None
    for s in seqs:
        if start is not None and prev is not None and s == prev + 1:
            prev = s
            continue
        if start is not None:
            parts.append(f"{start}-{prev}" if prev != start else f"{start}")
        start = prev = s
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else f"{start}")
    if len(parts) > 8:
        return ", ".join(parts[:8]) + f", ... ({len(seqs)} in all)"
    return ", ".join(parts)


def side_seqs(rows: list[Row]) -> dict[str, list[int]]:
    """The seqs of ``rows`` on each side (at most ``MAX_SEQS`` each)."""
    return {
        "a": [r.a_seq for r in rows if r.a_seq is not None][:MAX_SEQS],
        "b": [r.b_seq for r in rows if r.b_seq is not None][:MAX_SEQS],
    }
