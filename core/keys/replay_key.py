"""The replay key: what makes a live call and a recorded one the same call.

A call's key is ``(tool, args digest)``: the digest (``format.digest.digest``) of its args
normalized under the rules (``NormalizationRules.apply``), built by ``call_key``. Replay
looks a live call up by it (``lookup_key``: when the raw args miss, their redacted copy
is tried, for a cassette redacted after recording); a cassette's entries are indexed by
it (``KeyIndex``: each key's positions in file order, so its recordings are served in
recorded order); and a key is repeated when it is recorded or called more than once
(``KeyIndex.repeated``, ``is_repeated``).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Container, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..format.digest import live_digest

if TYPE_CHECKING:
    from ..format.cassette import Cassette

#: a call's replay key: ``(tool, args digest under the rules)``
Key = tuple[str, str]
K = TypeVar("K", bound=Hashable)


class Normalizer(Protocol):
    """What a key needs of normalization rules (``NormalizationRules``, or the format's
    identity): the normalized copy of a call's args."""

    def apply(self, tool: str, args: Any) -> Any:
        """The normalized copy of ``args`` for a call of ``tool`` (``args`` unchanged)."""
        ...


class ArgsRedactor(Protocol):
    """What ``lookup_key`` needs of a redactor (``scan.redact.Redactor``)."""

    def redact_args(self, tool: str, args: Any) -> Any:
        """``args`` itself when nothing in it is a secret, else a redacted copy."""
        ...


def args_digest(rules: Normalizer, tool: str, args: Any) -> str:
    """The digest of ``args`` normalized under ``rules`` for a call of ``tool``: what an
    entry stores as its ``args_digest`` (``format.digest.live_digest``: the article's
    ``digest``, by orjson where that is exact)."""
    return live_digest(rules.apply(tool, args))


def call_key(rules: Normalizer, tool: str, args: Any) -> Key:
    """The replay key of a call of ``tool`` with ``args`` under ``rules``."""
    return (tool, live_digest(rules.apply(tool, args)))


def redacted_name(redactor: ArgsRedactor, tool: str) -> str:
    """The tool name as ``redactor`` redacts it (its ``redact_tool``, when it has one: a
    token used as a tool name; ``scan.redact.Redactor`` has), else ``tool``."""
    redact_tool = getattr(redactor, "redact_tool", None)
    return redact_tool(tool) if redact_tool is not None else tool


def lookup_key(
    index: Container[Key],
    rules: Normalizer,
    redactor: ArgsRedactor | None,
    tool: str,
    args: Any,
) -> Key:
    """The key ``(tool, digest)`` a live call is looked up by at replay: the raw call's
    key when ``index`` holds it, else that of the redacted call (its tool name and args
    redacted) when ``index`` holds that (a cassette redacted after recording), else the raw
    one (a miss)."""
    key = call_key(rules, tool, args)
    if key in index or redactor is None:
        return key
    redacted = redactor.redact_args(tool, args)
    redacted_tool = redacted_name(redactor, tool)
    if redacted is args and redacted_tool == tool:
        return key
    other = call_key(rules, redacted_tool, redacted)
    return other if other in index else key


class KeyIndex(dict[K, list[int]]):
    """Key -> the positions holding it, in increasing order: a cassette's entries by
    replay key (``of``), or any sequence of keys by value (``from_keys``). A plain
    ``dict`` (``get``, ``in``, ``items`` as usual), with the counts replay and the
    diagnosis ask of it."""

    @staticmethod
    def of(cassette: Cassette) -> KeyIndex[Key]:
        """The entries of ``cassette`` by ``cassette.key(i)``."""
        return KeyIndex.from_keys(cassette.key(i) for i in range(len(cassette)))

    @staticmethod
    def from_keys(keys: Iterable[K], positions: Iterable[int] | None = None) -> KeyIndex[K]:
        """Each key of ``keys`` with the positions it holds: its index in ``keys``, or the
        matching item of ``positions`` (the keys of a subset, with their own places)."""
        index: KeyIndex[K] = KeyIndex()
        pairs = enumerate(keys) if positions is None else zip(positions, keys, strict=True)
        for i, key in pairs:
            index.setdefault(key, []).append(i)
        return index

    def count(self, key: K) -> int:
        """How many positions hold ``key`` (0 when none)."""
        return len(self.get(key, ()))

    def first(self, key: K) -> int | None:
        """The first position holding ``key``, ``None`` when none."""
        found = self.get(key)
        return found[0] if found else None

    def repeated(self) -> dict[K, list[int]]:
        """The keys held at more than one position, with their positions."""
        return {key: idxs for key, idxs in self.items() if len(idxs) > 1}


def is_repeated(recorded: int, calls: int) -> bool:
    """Whether a key recorded ``recorded`` times and called ``calls`` times at replay is
    repeated: called more than once, or called at all and recorded more than once (one
    never called is unused, not repeated)."""
    return calls > 1 or (calls >= 1 and recorded > 1)


#: bytes of the byte table of one hash partition of ``repeated_flags`` (8 slots an entry
#: of the partition): past this, the entries are counted a partition at a time
_FLAG_TABLE_BYTES = 1 << 21


def repeated_flags(tools: Sequence[Hashable], digests: Sequence[Hashable]) -> bytearray:
    """Per entry, 1 when its key ``(tools[i], digests[i])`` is held by another entry too,
    else 0: ``KeyIndex.count(key) > 1`` of every entry, in one byte each. ``digests``:
    the digests' texts, or their codes (``Cassette.digest_codes``: equal exactly when the
    texts are).

    Memory does not grow with a key object per entry (a diff of 1M entries): the digests
    are first counted into a table of saturating byte counters indexed by their hash
    (8 slots an entry), and only the entries whose slot was hit twice (repeats, and the
    few that share a slot by chance) are counted exactly by key (an ``int`` for a tool id
    and a digest code, else a tuple). Past ``_FLAG_TABLE_BYTES`` of table the entries go
    in hash partitions, one table and one exact count at a time (issue 31: 2 MB at most,
    not 8 bytes an entry and the candidates of every partition at once). Same answer as
    the plain count (``tests/core/diff/test_streamed_rows.py``)."""
    n = len(digests)
    flags = bytearray(n)
    if n < 2:
        return flags
    parts = -(-8 * n // _FLAG_TABLE_BYTES)
    size = -(-8 * n // parts)
    for part in range(parts):
        seen = bytearray(size)
        if parts == 1:
            for d in digests:
                slot = hash(d) % size
                if seen[slot] < 2:
                    seen[slot] += 1
            maybe = array("q", (i for i, d in enumerate(digests) if seen[hash(d) % size] > 1))
        else:
            for d in digests:
                h = hash(d)
                if h % parts == part:
                    slot = h // parts % size
                    if seen[slot] < 2:
                        seen[slot] += 1
            maybe = array(
                "q",
                (
                    i
                    for i, d in enumerate(digests)
                    if (h := hash(d)) % parts == part and seen[h // parts % size] > 1
                ),
            )
        del seen
        counts = Counter(_flag_key(tools[i], digests[i]) for i in maybe)
        for i in maybe:
            if counts[_flag_key(tools[i], digests[i])] > 1:
                flags[i] = 1
        del counts, maybe
    return flags


def _flag_key(tool: Hashable, digest: Hashable) -> Hashable:
    """The key ``(tool, digest)`` as one ``int`` when it is a tool id (0 to 2**32 - 1) and
    a digest code (36 bytes, not a tuple and its items), else as the tuple: two keys are
    equal exactly when their tools and digests are (an ``int`` is never a tuple)."""
    if type(tool) is int and type(digest) is int and 0 <= tool < 1 << 32:
        return digest << 32 | tool
    return (tool, digest)
