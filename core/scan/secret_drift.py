"""A drift whose first difference lies inside a secret: shown with each side's mask
labelled with its secret's hash, so the two sides read apart without showing either.

Masked as every screen masks (``«ghp_…(40 chars)»``), two tokens of one shape read the
same: ``"«ghp_…(40 chars)»" -> "«ghp_…(40 chars)»"``, and a long text whose first
difference is inside a token shows the same window on both sides (or a later difference,
at a position counted in the masked text). ``secret_apart`` gives both sides masked with
hash labels (``«ghp_…(40 chars), hash 1a2b3c4d»``, as ``check``'s findings name a secret
and ``allow_hashes`` takes it) and the position of the first difference in the values as
recorded; ``diff`` and the app's drift line show those instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..format.textspot import Spot, first_difference, spot
from .masked_text import MaskedText
from .masking import mask_labelled

__all__ = ["SecretApart", "secret_apart"]


@dataclass(frozen=True)
class SecretApart:
    """Two different strings whose first difference is inside a secret.

    Attributes:
        position: 1-based index of the first differing character in the values as
            recorded (not in their masked forms).
        a, b: each whole value masked with hash-labelled masks (``mask_labelled``).
        at: 0-based index of their first difference; mask_start: the index of the ``«``
            of the mask it is in (the earlier of the two sides').
    """

    position: int
    a: str
    b: str
    at: int
    mask_start: int

    def spot(self, width: int) -> Spot:
        """Both sides around the first difference, cut to about ``width`` characters (more
        when the mask needs it) from just before the mask it is in: the secret's mask,
        then its hash, at ``position``."""
        before = self.at - self.mask_start + 2
        where = spot(self.a, self.b, max(width, before + 16), self.at, before)
        return Spot(self.position, where.a, where.b)


def secret_apart(
    a: str,
    b: str,
    masked_a: str | MaskedText,
    masked_b: str | MaskedText,
    key: str | None,
    raw_at: int | None = None,
) -> SecretApart | None:
    """``SecretApart`` of ``a`` and ``b`` (strings found under ``key``, whose masks for a
    screen are ``masked_a`` and ``masked_b``, built or not: ``MaskedText``) when they
    differ first inside a secret on either side, else ``None`` (equal values, or no secret
    masked in either: nothing is scanned again then; or a first difference outside every
    secret: the masked forms show it). Inside a secret: the first difference of the
    labelled forms is inside a mask whose secret covers the values' first difference
    (``_mask_start``). ``raw_at``: ``first_difference(a, b)`` when the caller knows it."""
    equal = raw_at == len(a) == len(b) if raw_at is not None else a == b
    if equal or ("«" not in masked_a and "«" not in masked_b):
        return None
    if raw_at is None:
        raw_at = first_difference(a, b)
    # the texts scanned again only when a mask of either side may cover it: a 2 MB
    # answer with secrets that differs at its end is not
    if not (_covers(masked_a, raw_at) or _covers(masked_b, raw_at)):
        return None
    la, lb = mask_labelled(a, key), mask_labelled(b, key)
    at = first_difference(la, lb)
    starts = [s for s in (_mask_start(la, at, raw_at), _mask_start(lb, at, raw_at)) if s >= 0]
    if not starts:
        return None
    return SecretApart(raw_at + 1, la, lb, at, min(starts))


#: a mask ``mask_labelled`` writes (not a ``«`` of the text, nor a mask recorded as
#: such), with the length of its secret
_LABELLED = re.compile(r"«[^«»]{0,4}…\((\d+) chars\), hash [0-9a-f]{8}»")


#: a mask as every screen writes it (``masking.mask`` in guillemets), with its secret's length
_PLAIN = re.compile(r"«[^«»]{0,4}…\((\d+) chars\)»")


def _covers(masked: str | MaskedText, raw_at: int) -> bool:
    """Whether a mask of ``masked`` (a value masked for a screen) stands for a secret that
    covers index ``raw_at`` of the value, each mask before it counted as its secret's
    length (a JSON-escaped secret is longer than that: its place is then missed)."""
    shift = 0  # characters the masks before add to the value
    for start, size, length in _plain_masks(masked):
        raw_start = start - shift
        if raw_start > raw_at:
            return False
        if raw_at < raw_start + length:
            return True
        shift += size - length
    return False


def _plain_masks(masked: str | MaskedText) -> Iterator[tuple[int, int, int]]:
    """Each match of ``_PLAIN`` in ``masked`` in turn: its start, its length and its
    secret's length. A ``MaskedText`` is not built: a match holds one ``«``, its first
    character, and one ``»``, its last, so it is the text from a ``«`` to the first ``»``
    after it, read alone (matches never overlap: ``finditer``'s)."""
    if isinstance(masked, str):
        for m in _PLAIN.finditer(masked):
            yield m.start(), len(m.group(0)), int(m.group(1))
        return
    opens = masked.positions("«")
    start = next(opens, None)
    while start is not None:
        after = next(opens, None)
        # the » closing it, before the next «: else no match from this one
        end = masked.find("»", start + 1, after) + 1
        if end > 0:
            found = _PLAIN.fullmatch(masked[start:end])
            if found is not None:
                yield start, end - start, int(found.group(1))
        start = after


def _mask_start(text: str, at: int, raw_at: int) -> int:
    """The index of the ``«`` of the mask of a labelled masked text that index ``at`` is
    inside (its ``«`` included), else -1; -1 too unless its secret covers ``raw_at`` in
    the value (the masks before it counted as their secrets' lengths): a secret one side's
    scan finds and the other's does not (a JSON text against the same text cut) makes the
    masked forms part before the values do, and its escaped form is not its length."""
    start = text.rfind("«", 0, at + 1)
    m = _LABELLED.match(text, start) if start >= 0 else None
    if m is None or m.end() <= at:
        return -1
    raw_start = start - sum(
        len(k.group(0)) - int(k.group(1)) for k in _LABELLED.finditer(text, 0, start)
    )
    return start if raw_start <= raw_at < raw_start + int(m.group(1)) else -1
