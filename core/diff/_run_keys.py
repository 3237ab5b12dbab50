"""The replay keys of two runs as one small value per entry, the same in both runs, for
the findings that group entries by key (``_repeated_keys.py``, ``_stale_responses.py``)
without a ``(tool, digest text)`` tuple per entry (issue 31: ``diff`` of 1M entries in
memory that does not grow with the rows).

``RunKeys(a, b).of(side)`` gives, per entry of run ``"a"`` or ``"b"``, a hashable value
that two entries of either run share exactly when their ``Cassette.key`` are equal: an
``int`` (the digest's 8 bytes, ``Cassette.digest_codes``, and the tool's id in one id
space of both runs) when every digest of both runs is of the standard form, else the key
itself. ``positions`` lists, in order, the entries whose digest is one of a few: a scan at
C speed, the keys made for those entries only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING

from ..format.columns import DigestColumn
from ..format.spill import drop_pages

if TYPE_CHECKING:
    from ..format.cassette import Cassette

#: a compact key: an ``int``, or a ``(tool, digest)`` tuple
CompactKey = Hashable

#: digest codes ``RunKeys.positions`` reads between two drops of their pages (``spill.py``)
SCAN_STEP = 1 << 16


class RunKeys:
    """Compact keys of the entries of ``a`` and ``b`` (see the module docstring)."""

    __slots__ = ("_codes", "_keys", "cassettes")

    def __init__(self, a: Cassette, b: Cassette) -> None:
        self.cassettes = {"a": a, "b": b}
        columns = [c.digests() for c in (a, b)]
        exact = all(isinstance(d, DigestColumn) and d.all_standard for d in columns)
        self._codes = {side: c.digest_codes() for side, c in self.cassettes.items()}
        self._keys: dict[str, Callable[[int], CompactKey]] = {}
        if not exact:  # a digest of another form: its code does not tell it apart
            for side, c in self.cassettes.items():
                self._keys[side] = c.key
            return
        ids: dict[str, int] = {}
        names = [c._tools.names for c in (a, b)]
        for name in itertools.chain.from_iterable(names):
            ids.setdefault(name, len(ids))
        shift = max(len(ids), 1).bit_length()
        for side, c in self.cassettes.items():
            local = [ids[name] for name in c._tools.names]
            self._keys[side] = _int_key(self._codes[side], c._tools.ids, local, shift)

    def of(self, side: str) -> Callable[[int], CompactKey]:
        """The compact key of entry ``i`` of run ``side`` (``"a"`` or ``"b"``)."""
        return self._keys[side]

    def code(self, side: str, i: int) -> int:
        """The digest code of entry ``i`` of run ``side`` (``Cassette.digest_codes``)."""
        return self._codes[side][i]

    def drop(self, side: str) -> None:
        """Let go of the pages of run ``side``'s columns that ``of`` and ``code`` read
        (digest codes, tool ids) when they are in temporary files (``spill.drop_pages``):
        a loop that reads keys of many entries calls it every ``SCAN_STEP`` entries."""
        drop_pages(self._codes[side])
        drop_pages(getattr(self.cassettes[side]._tools, "ids", None))

    def positions(self, side: str, codes: Collection[int]) -> Iterator[int]:
        """The entries of run ``side`` whose digest code is in ``codes`` (a set), in
        order: the codes are scanned at C speed, no key is made, ``SCAN_STEP`` codes at
        a time (the pages of a column in a temporary file let go after each: the whole
        column's 8 bytes an entry would otherwise count in ``VmRSS``, issue 31)."""
        column = self._codes[side]
        contains = codes.__contains__
        for start in range(0, len(column), SCAN_STEP):
            part = column[start : start + SCAN_STEP]
            yield from itertools.compress(range(start, start + len(part)), map(contains, part))
            drop_pages(column)


def _int_key(
    codes: Sequence[int], tool_ids: Sequence[int], local: list[int], shift: int
) -> Callable[[int], int]:
    """``i -> code << shift | tool id`` over the columns ``codes`` and ``tool_ids``."""
    code_at, id_at = codes.__getitem__, tool_ids.__getitem__

    def key(i: int) -> int:
        return code_at(i) << shift | local[id_at(i)]

    return key
