"""Where two long strings differ: the first differing character and both sides around it.

A drift or a miss on a 2,000-character system prompt that differs at character 1,900 is
useless when each side is cut to its first 40 characters (both read the same). ``spot``
finds the first differing character and returns a window of each side around it, so
``diff``, the app and a miss message can show ``at character 191: "…within 24 hours." vs
"…within 48 hours."`` at any width.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: strings at least this long are shown around their first difference
LONG = 40


@dataclass(frozen=True)
class Spot:
    """The first difference of two strings.

    Attributes:
        position: 1-based index of the first differing character (one past the shorter
            string when one is a prefix of the other).
        a, b: each side's text around it, with ``…`` where it was cut.
    """

    position: int
    a: str
    b: str

    def describe(self, left: str = "", right: str = " vs ", note: str = "") -> str:
        """``at character 191: "…24 hours." vs "…48 hours."`` (JSON-quoted sides;
        ``note`` after the position: ``at character 65 (inside a secret): ...``)."""
        qa = json.dumps(self.a, ensure_ascii=False)
        qb = json.dumps(self.b, ensure_ascii=False)
        return f"at character {self.position}{note}: {left}{qa}{right}{qb}"


#: how many characters ``first_difference`` compares at a time before it halves
_CHUNK = 65_536


def first_difference(a: str, b: str) -> int:
    """0-based index of the first character where ``a`` and ``b`` differ (``len`` of the
    shorter when one is a prefix of the other). Equal strings give ``len(a)``."""
    n = min(len(a), len(b))
    lo = 0
    # ``_CHUNK`` characters at a time from the start (one copy of a chunk of ``b``, kept
    # in the cache: halving the whole copied both sides' halves, twice the text), then
    # halves of the chunk that differs
    while lo < n:
        hi = min(lo + _CHUNK, n)
        if not a.startswith(b[lo:hi], lo):
            break
        lo = hi
    else:
        return n
    hi -= 1  # the first difference is before the end of this chunk
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def is_long_pair(a: Any, b: Any, long: int = LONG) -> bool:
    """Two different strings, at least one of them ``long`` characters or more."""
    return isinstance(a, str) and isinstance(b, str) and a != b and max(len(a), len(b)) >= long


def spot(a: str, b: str, width: int = 40, at: int | None = None, before: int | None = None) -> Spot:
    """The first difference of ``a`` and ``b`` with each side cut to about ``width``
    characters around it: a third before it (``before`` characters when given, at most
    ``width`` less 8), the rest after, ``…`` where cut. ``at``: ``first_difference(a,
    b)`` when the caller knows it already."""
    width = max(width, 8)
    i = first_difference(a, b) if at is None else at
    before = max(width // 3, 3) if before is None else min(max(before, 0), width - 8)
    start = max(i - before, 0)

    def window(s: str) -> str:
        end = min(start + width, len(s))
        text = s[start:end]
        if start > 0:
            text = "…" + text
        if end < len(s):
            text += "…"
        return text

    return Spot(i + 1, window(a), window(b))
