"""Per-entry columns of a cassette's index, in a few bytes an entry instead of a Python
object and a pointer (issue 31: a diff of two 1M-entry runs holds one of each per entry).

- ``DigestColumn``: args digests (``"sha256:"`` + 16 lowercase hex digits, ``digest.py``)
  as their 8 raw bytes in an ``array("Q")``; the text is made when an entry is asked for.
  A stored digest of another form (any string a file may hold) or none is kept as is,
  aside. 8 bytes an entry against 80 (a 72-byte string and its pointer).
- ``NO_RESPONSE_HASH``: the response-hash column (``Cassette.response_hashes``) is an
  ``array("q")`` of ``hash(bytes)`` values, with this mark for "no hash": ``hash`` never
  returns -1 (CPython maps it to -2), so the mark is never a real hash.
- ``ToolColumn``: tool names as a small id per entry (1 or 2 bytes; 4 past 65,536 names)
  into a list of the distinct names, against an 8-byte list reference an entry.
"""

from __future__ import annotations

import operator
import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, cast, overload

from .digest import DIGEST_PREFIX

#: the response-hash column's "no hash" (an error entry, an in-memory cassette, a line
#: read by the fallback parser); never a value of ``hash``
NO_RESPONSE_HASH = -1

_TEXT_LEN = len(DIGEST_PREFIX) + 16
_HEX_START = len(DIGEST_PREFIX)
#: digests in the standard form, back to back (a batch checked in one C-level match)
_STANDARD_RUN = re.compile(f"(?:{re.escape(DIGEST_PREFIX)}[0-9a-f]{{16}})*")
#: the byte order the codes are read in: they hold the digest's bytes in order
_ORDER = sys.byteorder
#: per-entry kinds (``_kinds``): the standard form, none, another text (kept aside)
_STANDARD, _NONE, _OTHER = 0, 1, 2

T = TypeVar("T")


def _code_of(hex16: str) -> int:
    return int.from_bytes(bytes.fromhex(hex16), _ORDER)


def _is_standard(text: object) -> bool:
    return (
        type(text) is str and len(text) == _TEXT_LEN and _STANDARD_RUN.fullmatch(text) is not None
    )


class DigestColumn(Sequence[str | None]):
    """A column of args digests, ``str`` or ``None`` per entry, in 8 bytes an entry for a
    digest of the standard form (see the module docstring). Compares equal to a list of
    the same values.

    ``codes[i]`` is an integer that two standard digests share exactly when their texts
    are equal (the engine's comparisons read it: no text is made); for an entry of
    another form it is 0, and ``is_standard`` tells.
    """

    __slots__ = ("_kinds", "_other", "codes")

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self.codes = array("Q")
        #: ``None`` while every entry is of the standard form, else a kind a byte
        self._kinds: bytearray | None = None
        self._other: dict[int, str] = {}
        self.extend(values)

    @property
    def all_standard(self) -> bool:
        """Every entry is a digest of the standard form: ``codes`` alone tell them apart."""
        return self._kinds is None

    def is_standard(self, i: int) -> bool:
        return self._kinds is None or self._kinds[i] == _STANDARD

    def append(self, text: str | None) -> None:
        if _is_standard(text):
            assert text is not None
            self.codes.append(_code_of(text[_HEX_START:]))
            if self._kinds is not None:
                self._kinds.append(_STANDARD)
            return
        if self._kinds is None:
            self._kinds = bytearray(len(self.codes))
        if text is None:
            self._kinds.append(_NONE)
        else:
            self._other[len(self.codes)] = text
            self._kinds.append(_OTHER)
        self.codes.append(0)

    def extend(self, values: Iterable[str | None]) -> None:
        """Append ``values``; a batch of standard digests is converted at C speed (one
        join, one match, one ``bytes.fromhex``)."""
        batch = values if isinstance(values, list) else list(values)
        if not batch:
            return
        joined = None
        if set(map(type, batch)) == {str} and set(map(len, batch)) == {_TEXT_LEN}:
            joined = "".join(cast(list[str], batch))
            if _STANDARD_RUN.fullmatch(joined) is None:
                joined = None
        if joined is None:
            for text in batch:
                self.append(text)
            return
        self.codes.frombytes(bytes.fromhex(joined.replace(DIGEST_PREFIX, "")))
        if self._kinds is not None:
            self._kinds.extend(bytes(len(batch)))

    def after(self, codes: Sequence[int]) -> DigestColumn:
        """A new column of standard digests given by their ``codes`` (an ``array("Q")``
        or a view of one) followed by this column's entries, in memory."""
        out = DigestColumn()
        out.codes = array("Q", codes)
        out.codes.extend(self.codes)
        if self._kinds is not None:
            out._kinds = bytearray(len(codes)) + self._kinds
            out._other = {len(codes) + k: text for k, text in self._other.items()}
        return out

    def taken(self, order: Iterable[int]) -> DigestColumn:
        """A new column of the entries at the positions ``order``, in that order."""
        out = DigestColumn()
        order = list(order)
        out.codes = array("Q", [self.codes[k] for k in order])
        kinds = self._kinds
        if kinds is not None:
            out._kinds = bytearray(kinds[k] for k in order)
            out._other = {n: self._other[k] for n, k in enumerate(order) if k in self._other}
        return out

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> str | None: ...
    @overload
    def __getitem__(self, index: slice) -> DigestColumn: ...
    def __getitem__(self, index: int | slice) -> str | None | DigestColumn:
        if isinstance(index, slice):
            return self.taken(range(*index.indices(len(self))))
        code = self.codes[index]  # raises IndexError like a list
        kinds = self._kinds
        if kinds is not None and kinds[index] != _STANDARD:
            if index < 0:
                index += len(self)
            return None if kinds[index] == _NONE else self._other[index]
        return DIGEST_PREFIX + code.to_bytes(8, _ORDER).hex()

    def __iter__(self) -> Iterator[str | None]:
        if self._kinds is None:
            prefix, order = DIGEST_PREFIX, _ORDER
            for code in self.codes:
                yield prefix + code.to_bytes(8, order).hex()
        else:
            for i in range(len(self)):
                yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DigestColumn):
            return (
                self.codes == other.codes
                and (self._kinds or bytearray(len(self))) == (other._kinds or bytearray(len(other)))
                and self._other == other._other
            )
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DigestColumn({list(self)!r})"


def digest_code(text: str) -> int | None:
    """The ``DigestColumn.codes`` value of a digest of the standard form, else ``None``
    (no entry of a column of standard digests holds that text)."""
    return _code_of(text[_HEX_START:]) if _is_standard(text) else None


def as_digest_column(values: Sequence[str | None]) -> DigestColumn:
    """``values`` as a ``DigestColumn`` (itself when it is one already)."""
    return values if isinstance(values, DigestColumn) else DigestColumn(values)


def as_hash_column(values: Sequence[int | None] | Any) -> array[int]:
    """Response hashes as the ``array("q")`` column (``None`` becomes ``NO_RESPONSE_HASH``);
    an ``array`` is kept as it is."""
    if isinstance(values, array):
        return values
    return array("q", [NO_RESPONSE_HASH if h is None else h for h in values])


class CodedColumn(Sequence[T]):
    """Per entry, a small integer code (``codes``: an ``array``, a ``bytearray``, or a view
    of one in a temporary file, ``spill.py``) into ``values``, the distinct values the
    column holds. Reads as the list of values it stands for: index, ``len``, iteration,
    ``==`` with any sequence of the same values; a slice is the subclass's
    (``_sliced``). The shared part of ``ToolColumn`` and ``diff.packed.StatusColumn``."""

    __slots__ = ("codes", "values")

    def __init__(self, values: Sequence[T], codes: Any) -> None:
        self.values = values
        self.codes = codes

    def _sliced(self, codes: Any) -> Any:
        """The column's answer to a slice, given the slice's codes."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Any: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._sliced(self.codes[index])
        return self.values[self.codes[index]]

    def __iter__(self) -> Iterator[T]:
        return map(self.values.__getitem__, self.codes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class ToolColumn(CodedColumn[str]):
    """Per entry, its tool name, as an id into ``names`` (``ids``: an ``array`` of the
    narrowest type that holds every id). Reads as the list of names it stands for: index,
    slice (a ``ToolColumn``), ``len``, iteration, ``==`` with any sequence of the same
    names. ``ids`` may be swapped for a view of it in a temporary file (``spill.py``)."""

    __slots__ = ()

    def __init__(self, names: list[str], ids: array[int]) -> None:
        super().__init__(names, ids)

    @property
    def names(self) -> list[str]:
        """The distinct names, in order of first use; ``ids`` index it."""
        return cast(list[str], self.values)

    @property
    def ids(self) -> array[int]:
        """Per entry, its name's position in ``names``."""
        return cast("array[int]", self.codes)

    @ids.setter
    def ids(self, ids: array[int]) -> None:
        self.codes = ids

    @classmethod
    def of(cls, tools: Iterable[str]) -> ToolColumn:
        """The column of ``tools`` (any iterable of names), ids in order of first use."""
        return ToolColumnBuilder().column(tools)

    def _sliced(self, codes: Any) -> ToolColumn:
        return ToolColumn(
            self.names, codes if isinstance(codes, array) else array(codes.format, codes)
        )


class ToolColumnBuilder:
    """A ``ToolColumn`` made a batch of names at a time (``add``), the batches' ids kept
    in the narrowest type so far (widened when a name past 256 or 65,536 comes): the
    load, while spilling, folds its tool names in between chunks instead of keeping a
    list reference an entry to the end (issue 31). ``column`` gives the column
    ``ToolColumn.of`` gives for all the names at once."""

    __slots__ = ("_index", "ids", "names")

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self.names: list[str] = []
        self.ids = array("B")

    def add(self, tools: Iterable[str]) -> None:
        """Append ``tools``' ids (new names get the next ids)."""
        index, names = self._index, self.names

        def id_of(tool: str) -> int:
            known = index.get(tool)
            if known is None:
                known = index[tool] = len(names)
                names.append(tool)
            return known

        wide = array("i", map(id_of, tools))
        typecode = "B" if len(names) <= 1 << 8 else "H" if len(names) <= 1 << 16 else "i"
        if typecode != self.ids.typecode:
            self.ids = array(typecode, self.ids)
        self.ids.extend(wide if typecode == "i" else array(typecode, wide))

    def column(self, tail: Iterable[str] = ()) -> ToolColumn:
        """Every name added, then ``tail``, as one column; the builder starts again."""
        self.add(tail)
        out = ToolColumn(self.names, self.ids)
        self.__init__()  # type: ignore[misc]
        return out
