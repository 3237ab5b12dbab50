"""A drift's two sides masked with the secrets found on either side.

Each side of a drift is masked by its own scan (``masking.mask_found``), and the scans can
disagree: a JSON text on side A finds ``"api_key": "..."`` by its key, while B's copy of
the same text, cut short, is no JSON and its scan finds nothing; a token broken by a space
on one side only is no token there. Masked one side at a time, the other side showed the
secret, or most of it. Here every secret one side's scan found and the other's did not
(``pair_secrets``; one both found is masked on each already) is masked on both: wherever
its whole text, or a run of at least ``PIECE_MIN`` characters of it, shows in a side's
text (``mask_pieces``: a secret cut at the text's end, or split in two by a space or by a
cut to a screen's width). Runs shorter than ``PIECE_MIN`` are left: they show no more of
a secret than its mask does plus three characters, and a shorter minimum would mask the
other side's ordinary words (``pass``, ``http``) wherever a secret holds them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .masking import _merged, mask, mask_found

__all__ = ["PIECE_MIN", "mask_pair", "mask_pieces", "mask_pieces_in", "pair_secrets"]

#: the shortest run of a secret's characters masked where it shows on its own: 8
#: characters. The mask itself shows at most 4 (``masking.mask``); a run of 7 shown next
#: to the mask of the rest shows at most 7 in a row.
PIECE_MIN = 8
#: the runs are found by these aligned blocks of each secret (``PIECE_MIN // 2`` long): a
#: run of ``PIECE_MIN`` characters of a secret holds at least one of them whole
_BLOCK = PIECE_MIN // 2


def pair_secrets(*found: Iterable[str]) -> tuple[str, ...]:
    """The secrets some side's scan found and another's did not (each side: the secrets
    ``mask_found`` masked in it), each once, longest first (then in text order: no hash
    seed in the order). A secret every side's scan found is masked wherever its text
    shows on each side already: it is left out, so two answers holding the same secrets
    (the usual drift) cost nothing more."""
    sides = [{s for s in side if s} for side in found]
    if not sides:
        return ()
    every: set[str] = sides[0].intersection(*sides[1:])
    one_sided = set[str]().union(*sides) - every
    return tuple(sorted(one_sided, key=lambda s: (-len(s), s)))


def mask_pair(a: Any, b: Any, key: str | None = None) -> tuple[Any, Any, tuple[str, ...]]:
    """``(a, b, carried)``: ``a`` and ``b`` (a drift's two values, found under ``key``)
    each masked by its own scan (``mask_found``), then each with the secrets one side's
    scan found and the other's did not (``carried``, ``pair_secrets``) masked wherever
    they show (``mask_pieces_in``). ``a`` and ``b`` themselves when neither holds a
    secret."""
    masked_a, found_a = mask_found(a, key)
    masked_b, found_b = mask_found(b, key)
    secrets = pair_secrets(found_a, found_b)
    if not secrets:
        return masked_a, masked_b, ()
    return mask_pieces_in(masked_a, secrets), mask_pieces_in(masked_b, secrets), secrets


def mask_pieces_in(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with ``mask_pieces`` applied to each string in it (object keys too);
    ``value`` itself when nothing changes."""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask_pieces(value, secrets)
    if isinstance(value, dict):
        out = {mask_pieces_in(k, secrets): mask_pieces_in(v, secrets) for k, v in value.items()}
        same = len(out) == len(value) and all(k in value and value[k] is v for k, v in out.items())
        return value if same else out
    if isinstance(value, list):
        items = [mask_pieces_in(v, secrets) for v in value]
        return value if all(x is y for x, y in zip(items, value, strict=True)) else items
    return value


def mask_pieces(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each run of it that is a secret's whole text, or at least
    ``PIECE_MIN`` characters of one, in it as written or JSON-escaped, replaced by the
    run's mask in guillemets (``«Zq7V…(18 chars)»``, as ``masking.mask`` writes a secret:
    the whole secret's run reads as its mask). Runs that overlap or touch are masked as
    one. ``text`` itself when no run is found.

    Cost: per secret, one ``str.find`` over ``text`` for each ``PIECE_MIN // 2`` block of
    it; a run is grown a character at a time from a block only where a block is found."""
    spans: list[tuple[int, int]] = []
    for pattern in _patterns(secrets):
        if len(pattern) < PIECE_MIN:
            at = text.find(pattern)
            while at >= 0:
                spans.append((at, at + len(pattern)))
                at = text.find(pattern, at + len(pattern))
        else:
            spans.extend(_runs(text, pattern))
    if not spans:
        return text
    out: list[str] = []
    done = 0
    for start, end in _merged(spans):
        out.append(text[done:start])
        out.append(f"«{mask(text[start:end])}»")
        done = end
    out.append(text[done:])
    return "".join(out)


def _patterns(secrets: Sequence[str]) -> list[str]:
    """Each secret, and its JSON-escaped text where that differs (a screen shows a string
    as JSON)."""
    out: list[str] = []
    for secret in secrets:
        if not secret:
            continue
        out.append(secret)
        escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
        if escaped != secret:
            out.append(escaped)
    return out


def _runs(text: str, pattern: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are runs of at least ``PIECE_MIN`` characters of
    ``pattern`` (``len(pattern) >= PIECE_MIN``). A run of ``PIECE_MIN`` starting at any
    index ``p`` of ``pattern`` holds the block at the next multiple of ``_BLOCK`` whole,
    so finding those blocks and growing each hit both ways finds every run."""
    spans: list[tuple[int, int]] = []
    n, m = len(text), len(pattern)
    for i in range(0, m - _BLOCK + 1, _BLOCK):
        block = pattern[i : i + _BLOCK]
        at = text.find(block)
        while at >= 0:
            lo, lo_p = at, i
            while lo > 0 and lo_p > 0 and text[lo - 1] == pattern[lo_p - 1]:
                lo -= 1
                lo_p -= 1
            hi, hi_p = at + _BLOCK, i + _BLOCK
            while hi < n and hi_p < m and text[hi] == pattern[hi_p]:
                hi += 1
                hi_p += 1
            if hi - lo >= PIECE_MIN:
                spans.append((lo, hi))
            at = text.find(block, at + 1)
    return spans
