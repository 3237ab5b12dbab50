"""Step alignment of two cassettes: which entry of A stands beside which entry of B.

Two alignments (issue 3; docs/engine.md, "Alignment"):

- **by seq** (``align="seq"``): row *i* holds the *i*-th entry of A beside the *i*-th entry
  of B (entries in call order); the longer run's tail is only-in-one-side.
- **by call key** (``align="key"``): a longest-common-subsequence alignment in four passes,
  each run only inside the gaps the previous passes left: identical steps first (same tool,
  args digest and outcome fingerprint), then the same key with the same outcome class
  (both errors or both successes), then the same key, then the same tool. An inserted retry
  or an extra lookup therefore shows as a step present on one side only instead of shifting
  every later row; the *n*-th occurrence of a token pairs with the *n*-th, never all with
  the first.

The LCS of each pass (``match_tokens``) trims the common prefix and suffix, runs Myers'
O((N+M)D) algorithm on small regions, and on large ones anchors on tokens that occur once
on each side (patience diff) — or, when there are none, on every common token with its
*n*-th occurrences paired — keeps the longest increasing chain of anchors and recurses
into the gaps. That keeps two 100k-entry cassettes to well under a second of alignment
(``benchmarks/bench_diff.py``); the result is an exact LCS on small regions and a patience
approximation on large ones.

Outcomes (fingerprint and error flag per entry) come from the one outcome model
(``outcome.py``): ``outcome_index`` reads a file-backed cassette sequentially once; no
deepdiff runs here.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any, cast

from ..format import spill
from ..format.cassette import Cassette
from ..format.columns import NO_RESPONSE_HASH
from ..format.outcome import (
    Outcome,
    Outcomes,
    is_error_outcome,
    known_outcomes,
    outcome_index,
    same_outcome,
)
from ..format.spill import Spool, drop_pages, give_back, is_spilling, maybe_on_disk
from ..keys.replay_key import repeated_flags
from .model import Row, Status
from .packed import PackedRows, StatusColumn

__all__ = ["ALIGNMENTS", "Outcomes", "SeqRows", "align", "is_error_outcome", "outcome_index"]

#: the alignments ``align`` accepts
ALIGNMENTS = ("seq", "key")

#: a cancel check: called now and then by long work, it raises to stop it (the diff job
#: passes ``CancelToken.raise_if_cancelled``)
Check = Callable[[], None]
#: the rows built between two checks
_CHECK_ROWS = 4096

#: Myers runs on a region when its size (n + m) is at most this ...
_MYERS_MAX_SIZE = 4000
#: ... and gives up (falling back to anchors) past this many edits.
_MYERS_MAX_D = 400


# -- the LCS of two token sequences ------------------------------------------------------


def _myers(
    ta: Sequence[Hashable],
    tb: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    max_d: int,
    check: Check | None = None,
) -> list[tuple[int, int]] | None:
    """Exact LCS pairs of ``ta[a0:a1]`` and ``tb[b0:b1]`` by Myers' greedy algorithm, or
    ``None`` when more than ``max_d`` insertions and deletions are needed. ``check`` is
    called once per edit distance (it raises to stop: a cancel)."""
    n, m = a1 - a0, b1 - b0
    offset = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        if check is not None:
            check()
        trace.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            while x < n and y < m and ta[a0 + x] == tb[b0 + y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _myers_backtrack(trace, d, n, m, a0, b0)
    return None


def _myers_backtrack(
    trace: list[list[int]], d_end: int, n: int, m: int, a0: int, b0: int
) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(d_end, 0, -1):
        snap = trace[d]  # the furthest x per diagonal before step d, k in [-d-1, d+1]
        k = x - y
        if k == -d or (k != d and snap[k - 1 + d + 1] < snap[k + 1 + d + 1]):
            prev_k = k + 1  # a step down (an entry only in B)
            prev_x = snap[prev_k + d + 1]
            prev_y = prev_x - prev_k
            x_start, y_start = prev_x, prev_y + 1
        else:
            prev_k = k - 1  # a step right (an entry only in A)
            prev_x = snap[prev_k + d + 1]
            prev_y = prev_x - prev_k
            x_start, y_start = prev_x + 1, prev_y
        while x > x_start and y > y_start:
            x -= 1
            y -= 1
            pairs.append((a0 + x, b0 + y))
        x, y = prev_x, prev_y
    while x > 0 and y > 0:  # the initial snake (d == 0)
        x -= 1
        y -= 1
        pairs.append((a0 + x, b0 + y))
    pairs.reverse()
    return pairs


def _longest_increasing(cand_a: Sequence[int], cand_b: Sequence[int]) -> _Pairs:
    """The longest chain of candidate pairs ``(cand_a[k], cand_b[k])`` increasing in both
    indices; the candidates sorted by A index (distinct A indices). O(k log k). Columns in
    and out: a large region has an anchor an entry."""
    from bisect import bisect_left

    n = len(cand_a)
    # per chain length, the smallest B index ending such a chain and its candidate: the
    # first ``length`` items; as long as the candidates while they come in order (a
    # large region: 16 bytes an anchor), so in temporary files while spilling too
    tails, tail_idx = maybe_on_disk("q", n), maybe_on_disk("q", n)
    prev = maybe_on_disk("q", n, -1)  # a temporary file while spilling
    length = 0
    for ci, bj in enumerate(cand_b):
        # past the last tail (the candidates in order: the common case) it is ``length``
        pos = length if length and bj > tails[length - 1] else bisect_left(tails, bj, 0, length)
        tails[pos] = bj
        tail_idx[pos] = ci
        if pos == length:
            length += 1
        prev[ci] = tail_idx[pos - 1] if pos else -1
    ci = tail_idx[length - 1] if length else -1
    del tails, tail_idx  # the chain's columns are made in their place
    chain_a, chain_b = maybe_on_disk("q", length), maybe_on_disk("q", length)
    k = length
    while ci >= 0:  # the chain from its end
        k -= 1
        chain_a[k] = cand_a[ci]
        chain_b[k] = cand_b[ci]
        ci = prev[ci]
    return chain_a, chain_b


#: pairs as two columns: ``(a[k], b[k])``
_Pairs = tuple["array[int]", "array[int]"]


#: a region's tokens counted by hash: the table size, each side's saturating byte counter
#: per slot (0, 1, 2 = two or more), and the position of a slot's one token of B
_Slots = tuple[int, bytearray, bytearray, "array[int]"]
#: the positions of a region's tokens to count: ``range(a0, a1)``, ``range(b0, b1)``, or
#: one hash partition's (``_partition``)
_Positions = tuple[Sequence[int], Sequence[int]]
#: while spilling (``spill.py``), a region of more tokens than this is matched a hash
#: partition at a time, so the tables hold about this many tokens (24 bytes each)
_PART_TOKENS = 1 << 18
#: candidates of a hash partition written into the region's column between two drops of
#: its pages (``_parted_anchors``)
_FOUND_STEP = 1 << 13


def _slot_counts(
    ta: Sequence[Hashable],
    tb: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    positions: _Positions | None = None,
) -> _Slots:
    """Each side's tokens of the region (or of ``positions`` in it) counted into
    saturating byte counters by their hash (4 slots a token): every occurrence of a token
    falls in its slot, so a token absent from a slot's other side is on one side only."""
    pos_a, pos_b = positions or (range(a0, a1), range(b0, b1))
    # odd: a partition's hashes share their remainder by the partition count (a power of
    # two), and would fill only the slots of one remainder of an even size
    size = 4 * (len(pos_a) + len(pos_b)) | 1
    in_a, in_b = bytearray(size), bytearray(size)
    for i in pos_a:
        slot = hash(ta[i]) % size
        if in_a[slot] < 2:
            in_a[slot] += 1
    lone_b = array("i", [-1]) * size  # the position of a slot's one token of B
    for j in pos_b:
        slot = hash(tb[j]) % size
        if in_b[slot] < 2:
            in_b[slot] += 1
            lone_b[slot] = j
    return size, in_a, in_b, lone_b


def _unique_anchors(
    ta: Sequence[Hashable],
    tb: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    slots: _Slots | None = None,
    positions: _Positions | None = None,
) -> _Pairs:
    """The candidates ``_anchors`` takes when some token occurs exactly once on each side:
    ``(i, j)`` for each such token, in A order (of ``positions`` only when given: a hash
    partition's). Without a dict an entry (a region of a diff of 1M entries): each side's
    tokens are counted by hash (``_slot_counts``, made here unless given); a slot that
    holds one token of A and one of B holds a token unique on both sides exactly when the
    two are equal, and only the tokens of the other shared slots are counted exactly, in
    dicts."""
    pos_a, pos_b = positions or (range(a0, a1), range(b0, b1))
    size, in_a, in_b, lone_b = slots or _slot_counts(ta, tb, a0, a1, b0, b1, positions)
    # the tokens of slots shared by several tokens, counted exactly
    count_a: Counter[Hashable] = Counter(
        t for t in map(ta.__getitem__, pos_a) if _crowded(in_a, in_b, hash(t) % size)
    )
    only_b: dict[Hashable, int] = {}  # a crowded slot's B tokens: position, or -1 if twice
    for j in pos_b:
        t = tb[j]
        if _crowded(in_a, in_b, hash(t) % size):
            only_b[t] = -1 if t in only_b else j
    cand_a, cand_b = array("q"), array("q")
    for i in pos_a:
        t = ta[i]
        slot = hash(t) % size
        if in_a[slot] == 1 and in_b[slot] == 1:
            j = lone_b[slot]
            if tb[j] == t:
                cand_a.append(i)
                cand_b.append(j)
        elif in_b[slot] and count_a.get(t) == 1:
            j = only_b.get(t, -1)
            if j >= 0:
                cand_a.append(i)
                cand_b.append(j)
    return cand_a, cand_b


def _crowded(in_a: bytearray, in_b: bytearray, slot: int) -> bool:
    """A slot with tokens of both sides, not exactly one of each."""
    na, nb = in_a[slot], in_b[slot]
    return bool(na and nb) and (na == 2 or nb == 2)


def _common_tokens(
    ta: Sequence[Hashable], tb: Sequence[Hashable], positions: _Positions, slots: _Slots
) -> set[Hashable]:
    """The tokens on both sides, looked for only in slots that hold tokens of both sides
    (a token of one side only, the most of them when every response differs, is never
    counted: issue 31, two counters of every token were the peak of a 1M-entry diff)."""
    size, in_a, in_b = slots[0], slots[1], slots[2]
    shared_a = {t for t in map(ta.__getitem__, positions[0]) if in_b[hash(t) % size]}
    return {t for t in map(tb.__getitem__, positions[1]) if in_a[hash(t) % size] and t in shared_a}


def _anchors(
    ta: Sequence[Hashable], tb: Sequence[Hashable], a0: int, a1: int, b0: int, b1: int
) -> _Pairs:
    """Anchor pairs for a large region: tokens unique on both sides (patience), else every
    common token with its n-th occurrences paired; the longest increasing chain of them.
    While spilling, a large region is counted a hash partition at a time (``_parted``)."""
    parts = -(-(a1 - a0 + b1 - b0) // _PART_TOKENS)
    if parts > 1 and is_spilling():
        return _parted_anchors(ta, tb, a0, a1, b0, b1, 1 << (parts - 1).bit_length())
    positions = (range(a0, a1), range(b0, b1))
    slots = _slot_counts(ta, tb, a0, a1, b0, b1)
    cand_a, cand_b = _unique_anchors(ta, tb, a0, a1, b0, b1, slots)
    if cand_a:
        del slots  # 24 bytes a token, let go before the chain's columns are made
        return _longest_increasing(cand_a, cand_b)
    common = _common_tokens(ta, tb, positions, slots)
    del slots
    return _nth_anchors(ta, tb, a0, a1, b0, b1, common)


def _partition(
    ta: Sequence[Hashable], tb: Sequence[Hashable], region: tuple[int, int, int, int], part: int,
    parts: int,
) -> tuple[_Positions, _Positions]:  # fmt: skip
    """The positions of the region's tokens whose hash is ``part`` modulo ``parts`` (every
    occurrence of a token is in one partition), and those tokens, in the same order: the
    partition's own columns, which its counts read instead of ``ta`` and ``tb`` at
    random (a column in a temporary file would map a page for every few tokens read)."""
    a0, a1, b0, b1 = region
    pos_a, tok_a = _partition_side(ta, a0, a1, part, parts)
    pos_b, tok_b = _partition_side(tb, b0, b1, part, parts)
    return (pos_a, pos_b), (tok_a, tok_b)


def _partition_side(
    tokens: Sequence[Hashable], lo: int, hi: int, part: int, parts: int
) -> _Positions:
    """``_partition`` of one side's ``tokens[lo:hi]``: positions (an 8-byte column, no
    list of ints) and the tokens (a column of ``tokens``' item type when it has one),
    read ``_SIDE_BATCH`` at a time with the pages of a spilled column let go after each
    (issue 31: a whole column's pages otherwise count in ``VmRSS`` until the pager's turn,
    and under load it comes late)."""
    positions = array("q")
    typecode = getattr(tokens, "typecode", None) or getattr(tokens, "format", None)
    kept: Any = array(typecode) if typecode else []
    for start in range(lo, hi, _SIDE_BATCH):
        stop = min(hi, start + _SIDE_BATCH)
        batch = tokens[start:stop]
        chosen = [hash(t) % parts == part for t in batch]
        positions.extend(compress(range(start, stop), chosen))
        kept.extend(compress(batch, chosen))
        del batch
        drop_pages(tokens)
    return positions, kept


def _parted_anchors(
    ta: Sequence[Hashable], tb: Sequence[Hashable], a0: int, a1: int, b0: int, b1: int,
    parts: int,
) -> _Pairs:  # fmt: skip
    """``_anchors`` with the tokens counted one hash partition at a time (the tables of
    one partition in memory, the candidates in a temporary file): the same anchors, as a
    token's uniqueness and commonness are decided within its partition."""
    region = (a0, a1, b0, b1)
    found = maybe_on_disk("q", a1 - a0, -1)  # per entry of A, its candidate in B
    any_found = False
    for part in range(parts):
        (pos_a, pos_b), (la, lb) = _partition(ta, tb, region, part, parts)
        # the partition's tokens counted in its own columns; candidates back to positions
        cand_a, cand_b = _unique_anchors(la, lb, 0, len(la), 0, len(lb))
        for start in range(0, len(cand_a), _FOUND_STEP):
            stop = start + _FOUND_STEP
            for i, j in zip(cand_a[start:stop], cand_b[start:stop], strict=True):
                found[pos_a[i] - a0] = pos_b[j]
            drop_pages(found)  # the pages written, let go (they stay in the file)
        any_found = any_found or bool(cand_a)
        del pos_a, pos_b, la, lb, cand_a, cand_b
        give_back()
    if any_found:
        cand_a = _spooled("q", a1 - a0, _found_pairs(found, a0, 0), (found,))
        cand_b = _spooled("q", a1 - a0, _found_pairs(found, a0, 1), (found,))
        del found
        give_back()
        return _longest_increasing(cand_a, cand_b)
    del found
    common: set[Hashable] = set()
    for part in range(parts):
        _, (la, lb) = _partition(ta, tb, region, part, parts)
        slots = _slot_counts(la, lb, 0, len(la), 0, len(lb))
        common |= _common_tokens(la, lb, (range(len(la)), range(len(lb))), slots)
        del la, lb, slots
    return _nth_anchors(ta, tb, a0, a1, b0, b1, common)


def _found_pairs(found: array[int], a0: int, side: int) -> Callable[[int, int], array[int]]:
    """``(start, stop) ->`` the candidates among ``found[start:stop]`` (per entry of A
    from ``a0``, its candidate in B or -1): their positions in A (``side`` 0) or in B
    (``side`` 1), at C speed and with no list of ints (36 bytes a candidate)."""

    def make(start: int, stop: int) -> array[int]:
        part = found[start:stop]
        chosen = range(a0 + start, a0 + stop) if side == 0 else part
        return array("q", compress(chosen, map((0).__le__, part)))

    return make


def _nth_anchors(
    ta: Sequence[Hashable], tb: Sequence[Hashable], a0: int, a1: int, b0: int, b1: int,
    chosen: set[Hashable],
) -> _Pairs:  # fmt: skip
    """No token is unique on both sides (``_unique_anchors`` found none): every common one
    (``chosen``) with its n-th occurrences paired, and the longest increasing chain."""
    if not chosen:
        return array("q"), array("q")
    cand_a, cand_b = array("q"), array("q")
    pos_b: dict[Hashable, list[int]] = defaultdict(list)
    for j in range(b0, b1):
        if tb[j] in chosen:
            pos_b[tb[j]].append(j)
    seen: Counter[Hashable] = Counter()
    for i in range(a0, a1):
        t = ta[i]
        if t in chosen:
            nth = seen[t]
            seen[t] += 1
            positions = pos_b[t]
            if nth < len(positions):
                cand_a.append(i)
                cand_b.append(positions[nth])
    return _longest_increasing(cand_a, cand_b)


def match_tokens(
    ta: Sequence[Hashable], tb: Sequence[Hashable], check: Check | None = None
) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` with ``ta[i] == tb[j]``, increasing in both indices, forming a
    longest common subsequence of the two token lists (exact on regions of up to a few
    thousand tokens, a patience-diff approximation beyond). Hashable tokens; O(N + M) for
    identical or disjoint inputs, O((N + M) log(N + M)) typical. ``check`` is called
    between regions and edit distances; whatever it raises (``Cancelled``) stops the match."""
    partner = array("q", [-1]) * len(ta)
    _match_region(ta, tb, 0, len(ta), 0, len(tb), partner, check)
    return [(i, j) for i, j in enumerate(partner) if j >= 0]


def _match_region(
    ta: Sequence[Hashable],
    tb: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    partner: array[int],
    check: Check | None = None,
) -> None:
    """Match ``ta[a0:a1]`` with ``tb[b0:b1]``: ``partner[i] = j`` for each pair found (a
    column: a diff of 1M entries pairs about as many)."""
    stack = [(a0, a1, b0, b1)]
    while stack:
        if check is not None:
            check()
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and ta[a0] == tb[b0]:
            partner[a0] = b0
            a0 += 1
            b0 += 1
        while a0 < a1 and b0 < b1 and ta[a1 - 1] == tb[b1 - 1]:
            a1 -= 1
            b1 -= 1
            partner[a1] = b1
        if a0 == a1 or b0 == b1:
            continue
        n, m = a1 - a0, b1 - b0
        if n + m <= _MYERS_MAX_SIZE:
            found = _myers(ta, tb, a0, a1, b0, b1, min(_MYERS_MAX_D, n + m), check)
            if found is not None:
                for i, j in found:
                    partner[i] = j
                continue
        anchors_a, anchors_b = _anchors(ta, tb, a0, a1, b0, b1)
        if not anchors_a:
            continue
        for i, j in zip(anchors_a, anchors_b, strict=True):
            partner[i] = j
        stack.extend(_gaps(zip(anchors_a, anchors_b, strict=True), a0, a1, b0, b1))


def _gaps(
    pairs: Iterable[tuple[int, int]], a0: int, a1: int, b0: int, b1: int
) -> list[tuple[int, int, int, int]]:
    """The regions ``(a0, a1, b0, b1)`` left between ``pairs`` (increasing in both indices)
    inside the region ``[a0, a1) x [b0, b1)``, in order; only those with unpaired tokens on
    both sides (a one-sided gap has nothing left to match)."""
    gaps: list[tuple[int, int, int, int]] = []
    prev_a, prev_b = a0, b0
    for i, j in pairs:
        if i > prev_a and j > prev_b:
            gaps.append((prev_a, i, prev_b, j))
        prev_a, prev_b = i + 1, j + 1
    if a1 > prev_a and b1 > prev_b:
        gaps.append((prev_a, a1, prev_b, b1))
    return gaps


# -- rows ---------------------------------------------------------------------------------


#: tokens are 64-bit: ``_mix`` keeps them there
_MASK = (1 << 64) - 1
#: odd, so ``x -> x * _MIX`` is a bijection modulo 2**64 (the golden ratio's bits)
_MIX = 0x9E3779B97F4A7C15


def _tool_salt(tool: str) -> int:
    """64 bits of SHA-256 of a tool's name: a key's token is its digest's code xor this."""
    data = tool.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "little")


def _mix(tokens: array[int], values: Sequence[int]) -> array[int]:
    """Per entry, one 64-bit token for the pair ``(tokens[i], values[i])``: equal pairs
    give equal tokens; unequal ones, the same token with chance 2**-64."""
    mask, mul = _MASK, _MIX
    return array("Q", map(lambda t, v: (t * mul + v) & mask, tokens, values))


def _spooled(
    typecode: str, n: int, make: Callable[[int, int], array[int]], read: tuple[object, ...]
) -> array[int]:
    """The batches ``make(start, stop)`` over ``0..n`` (``_SIDE_BATCH`` items each) as one
    column: in memory, or for a long one while spilling, written to a temporary file as
    they are made (``spill.Spool``: never whole in memory, issue 31), the pages of the
    columns they ``read`` let go after each (``spill.drop_pages``)."""
    if not is_spilling() or n < spill.SPILL_MIN_ITEMS:
        return make(0, n)
    spool = Spool(typecode)
    for start in range(0, n, _SIDE_BATCH):
        spool.add(make(start, min(n, start + _SIDE_BATCH)))
        for column in read:
            drop_pages(column)
    return spool.view(array(typecode))


@dataclass(frozen=True)
class _Side:
    """One run as the key alignment reads it, in columns (8 bytes an entry each)."""

    cassette: Cassette
    #: per entry, its key ``(tool, args digest)`` as a 64-bit token: the digest's code
    #: (``Cassette.digest_codes``) xor 64 bits of SHA-256 of the tool's name. Equal keys
    #: give equal tokens; two different keys share one with chance 2**-64, as two args
    #: share a digest (the digest is 64 bits of SHA-256 too)
    keys: array[int]
    tools: array[int]  # tool id per entry (one id space across both sides)
    outcomes: Outcomes
    repeated: bytearray  # ``replay_key.repeated_flags``


#: entries of a side's tool ids and keys made at a time (``_sides``)
_SIDE_BATCH = 1 << 16


def _sides(a: Cassette, b: Cassette) -> tuple[_Side, _Side]:
    tool_ids: dict[str, int] = {}
    salts: list[int] = []

    def tool_id(tool: str) -> int:
        known = tool_ids.get(tool)
        if known is None:
            known = tool_ids[tool] = len(tool_ids)
            salts.append(_tool_salt(tool))
        return known

    def side(c: Cassette) -> _Side:
        # 4 bytes an entry: a tool id is below the number of tool names; the cassette's
        # own ids (``ToolColumn``) mapped to this one id space, no name read per entry
        column = c._tools
        local = [tool_id(name) for name in column.names]
        codes = c.digest_codes()
        n = len(codes)
        # both columns made a batch at a time into their place (a temporary file while
        # spilling: never whole in memory, issue 31)
        tools, keys = maybe_on_disk("i", n), maybe_on_disk("Q", n)
        for start in range(0, n, _SIDE_BATCH):
            stop = min(n, start + _SIDE_BATCH)
            batch = array("i", map(local.__getitem__, column.ids[start:stop]))
            tools[start:stop] = batch
            keys[start:stop] = array(
                "Q", map(lambda code, t: code ^ salts[t], codes[start:stop], batch)
            )
        repeated = repeated_flags(tools, codes)
        return _Side(c, keys, tools, outcome_index(c), repeated)

    return side(a), side(b)


def build_row(
    i: int | None,
    j: int | None,
    seq_a: int | None,
    seq_b: int | None,
    status: Status,
    tool: str,
    *,
    repeated_a: bool = False,
    repeated_b: bool = False,
    error_a: bool = False,
    error_b: bool = False,
) -> Row:
    """The one row builder of both alignments: entry ``i`` of A beside entry ``j`` of B
    (``None`` on a missing side). ``error_a``/``error_b`` are each side's
    ``Outcome.is_error``; the row keeps a side's flag only when the other side succeeded."""
    if j is None:
        return Row(i, None, seq_a, None, Status.ONLY_A, tool, repeated_a=repeated_a,
                   error_a=error_a)  # fmt: skip
    if i is None:
        return Row(None, j, None, seq_b, Status.ONLY_B, tool, repeated_b=repeated_b,
                   error_b=error_b)  # fmt: skip
    return Row(
        i, j, seq_a, seq_b, status, tool,
        repeated_a=repeated_a, repeated_b=repeated_b,
        error_a=error_a and not error_b, error_b=error_b and not error_a,
    )  # fmt: skip


def pair_status(
    tools: tuple[Hashable, Hashable], keys: tuple[Hashable, Hashable], same_outcome: bool
) -> Status:
    """The status of a pair: ``other_call`` (another tool), ``args_drift`` (same tool,
    another args digest), ``response_drift`` (same key, another outcome) or ``same``."""
    if tools[0] != tools[1]:
        return Status.OTHER_CALL
    if keys[0] != keys[1]:
        return Status.ARGS_DRIFT
    return Status.SAME if same_outcome else Status.RESPONSE_DRIFT


def _row(sa: _Side, sb: _Side, i: int | None, j: int | None) -> Row:
    a, b = sa.cassette, sb.cassette
    if j is None:
        assert i is not None
        return build_row(i, None, a.seq(i), None, Status.ONLY_A, a.tool(i),
                         repeated_a=sa.repeated[i] == 1,
                         error_a=sa.outcomes.errors[i])  # fmt: skip
    if i is None:
        return build_row(None, j, None, b.seq(j), Status.ONLY_B, b.tool(j),
                         repeated_b=sb.repeated[j] == 1,
                         error_b=sb.outcomes.errors[j])  # fmt: skip
    status = pair_status(
        (sa.tools[i], sb.tools[j]),
        (sa.keys[i], sb.keys[j]),
        sa.outcomes.fingerprints[i] == sb.outcomes.fingerprints[j],
    )
    return build_row(
        i, j, a.seq(i), b.seq(j), status, a.tool(i),
        repeated_a=sa.repeated[i] == 1, repeated_b=sb.repeated[j] == 1,
        error_a=sa.outcomes.errors[i], error_b=sb.outcomes.errors[j],
    )  # fmt: skip


def align_by_seq(a: Cassette, b: Cassette) -> list[Row]:
    """Rows pairing the *i*-th entry of A with the *i*-th of B (call order); the longer
    run's tail is ``only_a``/``only_b``. Status per pair: see ``pair_status``. The same
    rows as ``SeqRows(a, b)``, built by it."""
    return list(SeqRows(a, b))


#: past this many pairs whose responses need an exact comparison, one sequential pass over
#: each file (``outcome_index``) beats reading those lines one by one
_EXACT_BY_ENTRY_MAX = 2000


def seq_statuses(
    a: Cassette,
    b: Cassette,
    *,
    provisional: list[int] | None = None,
    bytes_only: bool = False,
) -> StatusColumn:
    """The status of each row of ``align_by_seq(a, b)``, without building the rows, one
    byte a row (``packed.StatusColumn``: reads as the list of statuses; issue 31).

    A pair with the same key whose responses are byte-identical in the files (see
    ``Cassette.response_hashes``) is ``same`` without parsing either; only the other
    same-key pairs compare outcome fingerprints. With a ``provisional`` list, when more than
    ``_EXACT_BY_ENTRY_MAX`` pairs need that comparison (two full parses), they are
    reported ``response_drift`` from their bytes alone and their rows appended to the list:
    a first answer that a second, exact call confirms (the app's first screen).
    ``bytes_only`` (with ``provisional``): so are they however few (no entry is parsed:
    the first look at two files' first lines)."""
    n, m = len(a), len(b)
    k = min(n, m)
    # the columns themselves: digest codes (equal exactly when the digests are) and
    # response hashes, no text or object made a row
    ta, tb, da, db = a._tools, b._tools, a.digest_codes(), b.digest_codes()
    ha, hb = a.response_hashes(), b.response_hashes()
    no_hash = NO_RESPONSE_HASH
    codes = bytearray()
    statuses = StatusColumn(codes)
    append = codes.append
    code = StatusColumn.code_of
    same, other, args_drift = code(Status.SAME), code(Status.OTHER_CALL), code(Status.ARGS_DRIFT)
    unsure: list[int] = []
    for i in range(k):
        if ta[i] != tb[i]:
            append(other)
        elif da[i] != db[i]:
            append(args_drift)
        else:
            h = ha[i]
            if h == no_hash or h != hb[i]:
                unsure.append(i)
            append(same)
    if unsure:
        if provisional is not None and (bytes_only or len(unsure) > _EXACT_BY_ENTRY_MAX):
            for i in unsure:
                statuses[i] = Status.RESPONSE_DRIFT
            provisional.extend(unsure)
        elif len(unsure) > _EXACT_BY_ENTRY_MAX:
            fa, fb = outcome_index(a).fingerprints, outcome_index(b).fingerprints
            for i in unsure:
                if fa[i] != fb[i]:
                    statuses[i] = Status.RESPONSE_DRIFT
        else:
            for i in unsure:
                if not same_outcome(a, i, b, i):
                    statuses[i] = Status.RESPONSE_DRIFT
    codes.extend(bytes([code(Status.ONLY_A)]) * (n - k))
    codes.extend(bytes([code(Status.ONLY_B)]) * (m - k))
    return statuses


class SeqRows(Sequence[Row]):
    """The rows of the by-seq alignment, built on access: row *i* is entry *i* of A beside
    entry *i* of B, so its status needs only the two keys and responses
    (``seq_statuses``, computed up front); its error and repeated-key flags come from
    per-entry columns (``replay_key.repeated_flags``, one byte an entry; the error flags
    of ``outcome_index`` once a whole pass has read them, else one entry each side).
    Rows are not kept (a few recent ones are): what stays per row is its status, so a
    pass over every row (``diff --json``, ``diff --limit 0``) runs in memory that does
    not grow with the rows. Equal to the list ``align_by_seq`` returns; thread-safe.
    ``exact=False``: statuses from the bytes where exact ones would parse every response
    (see ``seq_statuses``; ``bytes_only``: wherever the bytes differ); ``provisional``
    lists those rows."""

    #: rows kept for a caller that asks for the same rows again (the app's screen)
    _RECENT = 4096

    def __init__(
        self, a: Cassette, b: Cassette, *, exact: bool = True, bytes_only: bool = False
    ) -> None:
        self.a, self.b = a, b
        #: rows whose ``response_drift`` comes from the bytes alone (``exact=False``)
        self.provisional: list[int] = []
        self.statuses = seq_statuses(
            a, b, provisional=None if exact else self.provisional, bytes_only=bytes_only
        )
        self._repeated: tuple[bytearray, bytearray] | None = None
        self._recent: dict[int, Row] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.statuses)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"row {index} out of range")
        row = self._recent.get(index)
        if row is None:
            row = self._build(index, _known_errors(self.a, self.b))
            with self._lock:
                if len(self._recent) >= self._RECENT:
                    self._recent.clear()
                self._recent[index] = row
        return row

    def __iter__(self) -> Iterator[Row]:
        errors = (outcome_index(self.a).errors, outcome_index(self.b).errors)
        for i in range(len(self.statuses)):
            yield self._build(i, errors)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeqRows | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SeqRows({list(self)!r})"

    def repeated(self) -> tuple[bytearray, bytearray]:
        """Per entry of A and of B, 1 when its key occurs more than once in its own run
        (``replay_key.repeated_flags``), computed once."""
        if self._repeated is None:
            a, b = self.a, self.b
            flags = (
                repeated_flags(a._tools, a.digest_codes()),
                repeated_flags(b._tools, b.digest_codes()),
            )
            with self._lock:
                if self._repeated is None:
                    self._repeated = flags
        assert self._repeated is not None
        return self._repeated

    def _build(self, index: int, errors: tuple[Sequence[bool], Sequence[bool]] | None) -> Row:
        a, b = self.a, self.b
        ra, rb = self.repeated()
        status = self.statuses[index]
        i = index if index < len(a) else None
        j = index if index < len(b) else None

        def err(c: Cassette, k: int, side: int) -> bool:
            if errors is not None:
                return errors[side][k]
            return Outcome.of_entry(c[k]).is_error

        if j is None:
            assert i is not None
            return build_row(i, None, a.seq(i), None, Status.ONLY_A, a.tool(i),
                             repeated_a=ra[i] == 1, error_a=err(a, i, 0))  # fmt: skip
        if i is None:
            return build_row(None, j, None, b.seq(j), Status.ONLY_B, b.tool(j),
                             repeated_b=rb[j] == 1, error_b=err(b, j, 1))  # fmt: skip
        if status is Status.SAME:
            # the same outcome on both sides: neither is an error "while the other
            # succeeded", whatever the flags (and no entry is read for them)
            err_a = err_b = False
        else:
            err_a, err_b = err(a, i, 0), err(b, j, 1)
        return build_row(
            i, j, a.seq(i), b.seq(j), status, a.tool(i),
            repeated_a=ra[i] == 1, repeated_b=rb[j] == 1,
            error_a=err_a, error_b=err_b,
        )  # fmt: skip


def _known_errors(a: Cassette, b: Cassette) -> tuple[list[bool], list[bool]] | None:
    """Both sides' error flags when a whole pass has read them (``known_outcomes``)."""
    oa, ob = known_outcomes(a), known_outcomes(b)
    return (oa.errors, ob.errors) if oa is not None and ob is not None else None


def _pass_tokens(sa: _Side, sb: _Side, depth: int) -> tuple[array[int], array[int]]:
    """Both sides' tokens of pass ``depth`` (see the module docstring), a 64-bit column
    each, made when the pass runs: the key with the outcome's fingerprint, the key with
    the error flag, the key, the tool."""
    if depth in (0, 1):

        def mixed(side: _Side) -> array[int]:
            keys, o = side.keys, side.outcomes
            values: Sequence[int] = o.fingerprints if depth == 0 else o.errors
            return _spooled(
                "Q", len(keys), lambda s, e: _mix(keys[s:e], values[s:e]), (keys, values)
            )

        return mixed(sa), mixed(sb)
    if depth == 2:
        return sa.keys, sb.keys
    return sa.tools, sb.tools


def _paired(partner: Sequence[int], a0: int, a1: int) -> Iterator[tuple[int, int]]:
    """``(i, partner[i])`` for each ``i`` in ``[a0, a1)`` that has a partner, in order,
    read ``_SIDE_BATCH`` at a time with the pages of a spilled ``partner`` let go after
    each (issue 31)."""
    for start in range(a0, a1, _SIDE_BATCH):
        stop = min(a1, start + _SIDE_BATCH)
        batch = partner[start:stop]
        yield from ((i, j) for i, j in zip(range(start, stop), batch, strict=True) if j >= 0)
        del batch
        drop_pages(partner)


def _key_pairs(sa: _Side, sb: _Side, check: Check | None = None) -> array[int]:
    """The aligned pairs of the four key-alignment passes (see the module docstring), as
    a column: per entry of A, the entry of B it pairs with, or -1."""
    partner = maybe_on_disk("q", len(sa.keys), -1)
    regions = [(0, len(sa.keys), 0, len(sb.keys))]
    for depth in range(4):
        ta, tb = _pass_tokens(sa, sb, depth)
        last = depth == 3
        next_regions: list[tuple[int, int, int, int]] = []
        for a0, a1, b0, b1 in regions:
            # a region holds no pair of an earlier pass: its pairs are this pass's
            _match_region(ta, tb, a0, a1, b0, b1, partner, check)
            if not last:
                next_regions.extend(_gaps(_paired(partner, a0, a1), a0, a1, b0, b1))
        regions = next_regions
        del ta, tb
        give_back()  # the pass's tables, when spilling (``spill.py``)
    return partner


def align_by_key(a: Cassette, b: Cassette, check: Check | None = None) -> PackedRows:
    """Rows of the call-key alignment (see the module docstring). Unpaired entries become
    ``only_a``/``only_b`` rows placed where they occur; within one gap the A-side steps
    come before the B-side steps. Status per pair: ``same``, ``response_drift`` (same key)
    or ``args_drift`` (same tool, another key); never ``other_call``. ``check`` is called
    as the alignment goes (see ``match_tokens``) and every ``_CHECK_ROWS`` rows."""
    sa, sb = _sides(a, b)
    # 18 bytes a row (packed.py), to temporary files as they come while spilling
    rows = PackedRows(a, b, spool=True)
    i = j = 0
    partner = _key_pairs(sa, sb, check)
    for pi in range(len(partner)):
        pj = partner[pi]
        if pj < 0:
            continue
        if check is not None and pi % _CHECK_ROWS == 0:
            check()
        rows.extend(_row(sa, sb, x, None) for x in range(i, pi))
        rows.extend(_row(sa, sb, None, y) for y in range(j, pj))
        rows.append(_row(sa, sb, pi, pj))
        i, j = pi + 1, pj + 1
    rows.extend(_row(sa, sb, x, None) for x in range(i, len(a)))
    rows.extend(_row(sa, sb, None, y) for y in range(j, len(b)))
    rows.spill()
    # the findings read the flags (one byte an entry) after the rows: while spilling, in
    # temporary files too (issue 31: 2 MB at 1M entries, the only per-entry column left)
    rows.repeated = (_flags_spilled(sa.repeated), _flags_spilled(sb.repeated))
    return rows


def _flags_spilled(flags: bytearray) -> bytearray:
    """``spill.maybe_spilled`` of a ``bytearray`` of flags (typed as the ``bytearray`` it
    stands for: it reads the same, by index, slice, iteration and ``==``)."""
    return cast("bytearray", spill.maybe_spilled(cast("array[int]", flags)))


def align(
    a: Cassette, b: Cassette, how: str = "seq", check: Check | None = None
) -> list[Row] | PackedRows:
    """Align two cassettes: ``how`` is ``"seq"`` or ``"key"`` (see ``align_by_seq`` and
    ``align_by_key``). Every entry of each side appears in exactly one row, in order.
    ``check`` (by key) is called as the alignment goes; what it raises stops it.

    Raises:
        ValueError: an unknown alignment.
    """
    if how == "seq":
        return align_by_seq(a, b)
    if how == "key":
        return align_by_key(a, b, check)
    raise ValueError(f"unknown alignment {how!r}; expected one of {ALIGNMENTS}")
