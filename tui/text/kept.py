"""The results of a function of a few large objects, kept for the next screen that asks:
the pane, the step screen and ``e`` build the detail of one step again from the same
entries as held (``Cassette.entry_view``), and what is worked out whole from a 2 MB
answer (its masked long texts, its line count, the first difference of two of them) is
the same at each view."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Any, Generic, TypeVar

__all__ = ["KeptByIds"]

_R = TypeVar("_R")


class KeptByIds(Generic[_R]):
    """``compute(*objects)``'s result for the last ``size`` tuples of objects asked about, by the
    objects' ids (and ``extra``), each kept with its objects, which keeps the ids theirs.
    The objects must not change while kept (entries as held are read only). Safe to
    share between the workers of two screens."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: OrderedDict[tuple[Hashable, ...], tuple[tuple[Any, ...], _R]] = OrderedDict()
        self._lock = Lock()

    def get(self, objects: tuple[Any, ...], extra: Hashable, compute: Callable[..., _R]) -> _R:
        """The result kept for ``objects`` (the same objects) and ``extra``, else
        ``compute(*objects)``'s, then kept (the least recently asked dropped past ``size``)."""
        key = (*map(id, objects), extra)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and all(x is y for x, y in zip(kept[0], objects, strict=True)):
                self._kept.move_to_end(key)
                return kept[1]
        result = compute(*objects)
        with self._lock:
            self._kept[key] = (objects, result)
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return result

    def clear(self) -> None:
        """Forget every result kept."""
        with self._lock:
            self._kept.clear()
