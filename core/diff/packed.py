"""Aligned rows kept as columns: 18 bytes a row instead of a ``Row`` object and its ints.

A ``Row`` is fully told by its two entry indexes, its status and its four flags: its seqs
are the cassettes' (``Cassette.seq``) and its tool is A's when A has the entry, else B's
(every row builder of ``align.py`` and ``refine.py`` does so). ``PackedRows`` keeps those
in arrays and builds the ``Row`` when it is asked for, so the rows of a diff of two
1M-entry runs by call key, or refined, take 18 MB, not 180 MB.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..format.columns import CodedColumn
from ..format.spill import Spool, is_spilling
from .model import Row, Status

if TYPE_CHECKING:
    from ..format.cassette import Cassette

_STATUSES = tuple(Status)
_CODE = {status: code for code, status in enumerate(_STATUSES)}
_REP_A, _REP_B, _ERR_A, _ERR_B = 1, 2, 4, 8
#: rows a spooling ``PackedRows`` holds in memory before it writes them to its files
_SPOOL_BATCH = 1 << 16


class PackedRows(Sequence[Row]):
    """Rows of cassettes ``a`` and ``b`` in columns (see the module docstring); a
    ``Sequence[Row]`` that compares equal to a list of the same rows. ``append`` and
    ``extend`` take ``Row``s whose seqs and tool are the cassettes' own."""

    def __init__(
        self, a: Cassette, b: Cassette, rows: Iterable[Row] = (), *, spool: bool = False
    ) -> None:
        self.a, self.b = a, b
        self._ia = array("q")
        self._ib = array("q")
        self._status = bytearray()
        self._flags = bytearray()
        #: rows already in the spools (``spool``), before the columns above
        self._spooled = 0
        self._spools: tuple[Spool, Spool, Spool, Spool] | None = None
        #: inside ``spill.spilling()``, ``spool=True`` writes the columns to temporary
        #: files a batch of ``_SPOOL_BATCH`` rows at a time as they grow (issue 31: the
        #: rows of a 1M-entry diff are never whole in memory); no row is read until
        #: ``spill`` (a builder that reads what it built does not ask for it)
        self._spooling = spool and is_spilling()
        #: per entry of A and of B, 1 when its key is held more than once in its run
        #: (``replay_key.repeated_flags``), when the builder knows them (the key
        #: alignment), else ``None``
        self.repeated: tuple[bytearray, bytearray] | None = None
        self.extend(rows)

    def append(self, row: Row) -> None:
        """Keep ``row``. Raises ``ValueError`` when its tool or seqs are not the ones the
        columns would give back (a row builder that left the rule above)."""
        i, j = row.a, row.b
        tool = self.a.tool(i) if i is not None else self.b.tool(j) if j is not None else None
        if (
            row.tool != tool
            or row.a_seq != (None if i is None else self.a.seq(i))
            or row.b_seq != (None if j is None else self.b.seq(j))
        ):
            raise ValueError(f"a row that its columns cannot give back: {row!r}")
        self._ia.append(-1 if row.a is None else row.a)
        self._ib.append(-1 if row.b is None else row.b)
        self._status.append(_CODE[row.status])
        self._flags.append(
            (row.repeated_a and _REP_A)
            | (row.repeated_b and _REP_B)
            | (row.error_a and _ERR_A)
            | (row.error_b and _ERR_B)
        )
        if self._spooling and len(self._status) >= _SPOOL_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._spools is None:
            self._spools = (Spool("q"), Spool("q"), Spool("B"), Spool("B"))
        ia, ib, status, flags = self._spools
        ia.add(self._ia)
        ib.add(self._ib)
        status.add(self._status)  # type: ignore[arg-type]
        flags.add(self._flags)  # type: ignore[arg-type]
        self._spooled += len(self._status)
        self._ia, self._ib = array("q"), array("q")
        self._status, self._flags = bytearray(), bytearray()

    def extend(self, rows: Iterable[Row]) -> None:
        for row in rows:
            self.append(row)

    def spill(self) -> None:
        """Move the columns to temporary files inside a ``spill.spilling()`` block (the
        headless ``diff``, issue 31); the rows read the same. Call it once every row is
        in: a spilled column takes no more rows."""
        from ..format.spill import give_back, maybe_spilled

        self._spooling = False
        if self._spools is not None:
            ia, ib, status, flags = self._spools
            self._spools, self._spooled = None, 0
            self._ia, self._ib = ia.view(self._ia), ib.view(self._ib)
            self._status = status.view(self._status)  # type: ignore[assignment,arg-type]
            self._flags = flags.view(self._flags)  # type: ignore[assignment,arg-type]
            give_back()
            return
        self._ia = maybe_spilled(self._ia)  # type: ignore[assignment]
        self._ib = maybe_spilled(self._ib)  # type: ignore[assignment]
        self._status = maybe_spilled(self._status)  # type: ignore[assignment,arg-type]
        self._flags = maybe_spilled(self._flags)  # type: ignore[assignment,arg-type]
        give_back()

    def entries(self, side: str) -> Sequence[int]:
        """Per row, its entry of side ``"a"`` or ``"b"``, -1 where the side has none: the
        column itself, no row built."""
        if self._spools is not None:
            raise RuntimeError("rows read while they are spooled: call spill() first")
        return self._ia if side == "a" else self._ib

    @property
    def statuses(self) -> StatusColumn:
        """Every row's status, in order, without building the rows: a read-only view of
        the status column (1 byte a row, not a list's 8; issue 31), as ``SeqRows.statuses``
        is, which the app reads."""
        if self._spools is not None:
            raise RuntimeError("rows read while they are spooled: call spill() first")
        return StatusColumn(self._status)

    def __len__(self) -> int:
        return self._spooled + len(self._status)

    def __getitem__(self, index: Any) -> Any:
        if self._spools is not None:
            raise RuntimeError("rows read while they are spooled: call spill() first")
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"row {index} out of range")
        i, j = self._ia[index], self._ib[index]
        flags = self._flags[index]
        a, b = self.a, self.b
        return Row(
            None if i < 0 else i,
            None if j < 0 else j,
            None if i < 0 else a.seq(i),
            None if j < 0 else b.seq(j),
            _STATUSES[self._status[index]],
            a.tool(i) if i >= 0 else b.tool(j),
            bool(flags & _REP_A),
            bool(flags & _REP_B),
            bool(flags & _ERR_A),
            bool(flags & _ERR_B),
        )

    def __iter__(self) -> Iterator[Row]:
        for k in range(len(self)):
            yield self[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedRows({list(self)!r})"


class StatusColumn(CodedColumn[Status]):
    """Row statuses as one byte each (``codes``: a ``bytearray``, or a view of one in a
    temporary file, ``spill.py``), read as the ``Status`` list they stand for: index,
    slice (a list), ``len``, iteration, ``==`` with any sequence of the same statuses
    (``columns.CodedColumn``). ``StatusColumn.of`` packs a list; item assignment writes a
    status's code."""

    __slots__ = ()

    def __init__(self, codes: bytearray | memoryview) -> None:
        super().__init__(_STATUSES, codes)

    @classmethod
    def of(cls, statuses: Iterable[Status]) -> StatusColumn:
        """The column of ``statuses``."""
        return cls(bytearray(map(_CODE.__getitem__, statuses)))

    @staticmethod
    def code_of(status: Status) -> int:
        """The byte that stands for ``status`` in ``codes``."""
        return _CODE[status]

    def _sliced(self, codes: Any) -> list[Status]:
        return [_STATUSES[code] for code in codes]

    def __setitem__(self, index: int, status: Status) -> None:
        self.codes[index] = _CODE[status]
