"""A least-recently-used memo of a function of one string, bounded by the total length of
the strings it keeps rather than by their count (issue 31)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

_R = TypeVar("_R")
_MISSING: object = object()


class BytesLRU(Generic[_R]):
    """Remembers ``compute(text, flag)`` for up to ``max_chars`` characters of ``text`` in
    all, dropping the least recently used first.

    ``functools.lru_cache`` bounds the number of entries only: 32,768 texts of up to 4 KB
    each may hold ~128 MB, and a diff of 1M rows fills it (issue 31). Bounding by length
    keeps the memory flat whatever the texts. A text longer than ``max_chars`` is computed
    and not kept. Results must be immutable (they are shared between callers)."""

    def __init__(self, compute: Callable[[str, Hashable], _R], max_chars: int) -> None:
        self._compute = compute
        self.max_chars = max_chars
        self._kept: OrderedDict[tuple[str, Hashable], _R] = OrderedDict()
        self._chars = 0

    def __call__(self, text: str, flag: Hashable) -> _R:
        key = (text, flag)
        kept = self._kept
        # pop and put back (to the recent end) rather than get and move_to_end: no
        # KeyError if another thread drops the key between the two calls.
        hit: _R | object = kept.pop(key, _MISSING)
        if hit is not _MISSING:
            kept[key] = cast(_R, hit)
            return cast(_R, hit)
        found = self._compute(text, flag)
        if len(text) <= self.max_chars:
            if key not in kept:
                self._chars += len(text)
            kept[key] = found
            while self._chars > self.max_chars and kept:
                (old, _), _ = kept.popitem(last=False)
                self._chars -= len(old)
        return found

    def clear(self) -> None:
        """Forget every remembered result."""
        self._kept.clear()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def chars(self) -> int:
        """Total length of the texts kept, in characters."""
        return self._chars
