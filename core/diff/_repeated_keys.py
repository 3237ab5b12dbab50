"""The ``repeated_key`` findings: keys called more than once within a run (retries, retry
storms) and cycles of keys repeating back to back (loops); see ``diagnose.py``."""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..format.plural import plural
from ..format.spill import drop_pages
from ._finding import MAX_SEQS, finding, key_text, seq_list
from ._run_keys import SCAN_STEP, CompactKey, RunKeys

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from .result import DiffResult

MAX_REPEATED = 5  # repeated_key findings per diagnosis
MAX_CYCLE = 6  # longest cycle of keys detected as a loop
#: flagged entries (``DiffResult.repeated``) one partition of the repeated keys counts at
#: most, about: the keys of a partition and their counts are what is held at once
#: (issue 31: a table of every repeated key was 5.5 MB at 1M entries)
PART_FLAGGED = 1 << 13

Key = tuple[str, str]


def repeated_keys(result: DiffResult) -> list[Finding]:
    """The ``MAX_REPEATED`` repeated keys whose counts differ most between the runs, then
    up to two loops per run."""
    a, b = result.a, result.b
    repeated = result.repeated()
    keys = RunKeys(a, b)
    top = _top_repeated(keys, repeated)
    pos_a, pos_b = (_positions(keys, side, top) for side in ("a", "b"))
    errs_a, errs_b = (o.errors for o in result.outcomes())
    findings = []
    for k in top:
        pa, pb = pos_a.get(k, []), pos_b.get(k, [])
        key = a.key(pa[0]) if pa else b.key(pb[0])
        patterns: dict[str, Any] = {}
        notes = []
        for side, pos, c, errs in (("A", pa, a, errs_a), ("B", pb, b, errs_b)):
            found = _run_pattern(c, pos, errs)
            if found is not None:
                notes.append(f"{side} {found[0]}")
                patterns[side.lower()] = found[1]
        findings.append(
            _key_finding(key, [a.seq(i) for i in pa], [b.seq(i) for i in pb], notes, patterns)
        )
    findings.extend(_loops(a, b, repeated))
    return findings


class _Counts:
    """Per key either run holds more than once (``wanted``: its compact key, ``RunKeys``,
    to its place in the columns), how many entries of A and of B hold it and the first
    of each (-1 when none): four integers of 8 bytes a key, not a list of positions."""

    __slots__ = ("count", "first", "wanted")

    def __init__(self) -> None:
        self.wanted: dict[CompactKey, int] = {}
        self.count = {"a": array("q"), "b": array("q")}
        self.first = {"a": array("q"), "b": array("q")}


def _top_repeated(keys: RunKeys, repeated: tuple[bytearray, bytearray]) -> dict[CompactKey, int]:
    """The ``MAX_REPEATED`` keys either run calls more than once (``repeated``: per entry
    flags), each with its digest code, in the order of ``_ranked``. The keys are counted
    a hash partition of their digest codes at a time (about ``PART_FLAGGED`` flagged
    entries each) and the best of each partition and of those before kept, so memory
    holds one partition's keys, not every repeated key: the same keys in the same order
    as one count of them all (``_ranked`` tells any two keys apart)."""
    flagged = sum(_flag_count(flags) for flags in repeated)
    parts = max(1, -(-flagged // PART_FLAGGED))
    best: list[tuple[tuple[int, int, int, tuple[str, str]], CompactKey, int]] = []
    for part in range(parts):
        counts = _repeated_counts(keys, repeated, part, parts)
        best = heapq.nsmallest(MAX_REPEATED, itertools.chain(best, _ranked(keys, counts)))
    return {key: code for _, key, code in best}


def _flag_count(flags: bytearray) -> int:
    """How many entries ``flags`` (one byte each; in memory or a temporary file) marks
    (not 0), read ``SCAN_STEP`` at a time (a spilled column's pages let go after each)."""
    total = 0
    for start in range(0, len(flags), SCAN_STEP):
        part = bytes(flags[start : start + SCAN_STEP])
        total += len(part) - part.count(0)
        drop_pages(flags)
    return total


def _repeated_counts(
    keys: RunKeys, repeated: tuple[bytearray, bytearray], part: int = 0, parts: int = 1
) -> _Counts:
    """The ``_Counts`` of the keys held more than once by A or by B (``repeated``: per
    entry flags) whose digest code is ``part`` modulo ``parts``: the flagged entries give
    the keys, then one scan of each run's digest codes (at C speed) finds every entry of
    those keys."""
    out = _Counts()
    codes: set[int] = set()
    for side, flags in zip(("a", "b"), repeated, strict=True):
        key_of = keys.of(side)
        for start in range(0, len(flags), SCAN_STEP):
            stop = min(len(flags), start + SCAN_STEP)
            for i in itertools.compress(range(start, stop), flags[start:stop]):
                code = keys.code(side, i)
                if code % parts != part:
                    continue
                k = key_of(i)
                if k not in out.wanted:
                    out.wanted[k] = len(out.wanted)
                    codes.add(code)
            keys.drop(side)  # the pages read, let go (issue 31)
            drop_pages(flags)
    n = len(out.wanted)
    for side in ("a", "b"):
        count = out.count[side] = array("q", bytes(8 * n))
        first = out.first[side] = array("q", [-1]) * n
        key_of, wanted = keys.of(side), out.wanted
        for i in keys.positions(side, codes):
            k = wanted.get(key_of(i))
            if k is not None:
                if not count[k]:
                    first[k] = i
                count[k] += 1
    return out


def _ranked(
    keys: RunKeys, counts: _Counts
) -> Iterator[tuple[tuple[int, int, int, tuple[str, str]], CompactKey, int]]:
    """The keys of ``counts`` that may be among the ``MAX_REPEATED`` first, each as
    ``(order, key, digest code)``, ``order`` its rank among the repeated keys: the counts
    that differ most first, then the most calls, then the key seen first, then the key
    itself (no two keys rank the same). The key's text and code are read only for the
    keys whose first three ranks are within the ``MAX_REPEATED`` smallest of ``counts``
    (ties included): the others rank after those whatever their text, and reading every
    key's text and code reads the columns at random (issue 31: their pages count in
    ``VmRSS`` until the pager's turn, 8 MB more at 1M entries)."""
    a, b = keys.cassettes["a"], keys.cassettes["b"]
    ca, cb = counts.count["a"], counts.count["b"]
    fa, fb = counts.first["a"], counts.first["b"]
    len_a, len_b = len(a), len(b)

    def rank(k: int) -> tuple[int, int, int]:
        # ties: the key seen first (an entry of one run against one of the other, as
        # positions), then the key's text (hash order changes with PYTHONHASHSEED)
        return (
            -abs(ca[k] - cb[k]),
            -max(ca[k], cb[k]),
            min(fa[k] if ca[k] else len_a, fb[k] if cb[k] else len_b),
        )

    cut = heapq.nsmallest(MAX_REPEATED, map(rank, counts.wanted.values()))
    if not cut:
        return
    for key, k in counts.wanted.items():
        first = rank(k)
        if first <= cut[-1]:
            text = a.key(fa[k]) if ca[k] else b.key(fb[k])
            yield (*first, text), key, keys.code("a", fa[k]) if ca[k] else keys.code("b", fb[k])


def _positions(
    keys: RunKeys, side: str, wanted: dict[CompactKey, int]
) -> dict[CompactKey, list[int]]:
    """Every position of run ``side`` holding one of the keys ``wanted`` (a few, each
    with its digest code), by key, in order."""
    key_of = keys.of(side)
    found: dict[CompactKey, list[int]] = {}
    for i in keys.positions(side, set(wanted.values())):
        k = key_of(i)
        if k in wanted:
            found.setdefault(k, []).append(i)
    return found


def _longest_run(positions: list[int]) -> tuple[int, int]:
    """(length, start position) of the longest run of consecutive positions."""
    best_len, best_start = 1, positions[0]
    cur_len, cur_start = 1, positions[0]
    for prev, cur in itertools.pairwise(positions):
        if cur == prev + 1:
            cur_len += 1
        else:
            cur_len, cur_start = 1, cur
        if cur_len > best_len:
            best_len, best_start = cur_len, cur_start
    return best_len, best_start


def _run_pattern(
    c: Cassette, pos: list[int], errs: list[bool]
) -> tuple[str, dict[str, Any]] | None:
    """For one run's positions of a key, its longest stretch of calls in a row as words
    (after the side's name) and as evidence; ``None`` when it never calls it twice in a
    row."""
    if len(pos) < 2:
        return None
    length, start = _longest_run(pos)
    if length < 2:
        return None
    n_err = sum(errs[i] for i in range(start, start + length))
    if n_err and length >= 3:
        pattern, name = "retry_storm", f"a retry storm: {n_err} errors"
    elif n_err:
        pattern, name = "retry", "one retry after an error"
    else:
        pattern, name = "consecutive", "no error between them"
    words = (
        f"calls it {length} times in a row at seqs "
        f"{c.seq(start)}-{c.seq(start + length - 1)} ({name})"
    )
    evidence = {"pattern": pattern, "run": length, "start_seq": c.seq(start), "errors": n_err}
    return words, evidence


def _key_finding(
    key: Key, sa: list[int], sb: list[int], notes: list[str], patterns: dict[str, Any]
) -> Finding:
    """The finding of one repeated key, called at seqs ``sa`` in A and ``sb`` in B."""
    message = (
        f"{key_text(key)} is called {plural(len(sa), 'time')} in A (seqs {seq_list(sa) or '-'}) "
        f"and {plural(len(sb), 'time')} in B (seqs {seq_list(sb) or '-'})."
    )
    if notes:
        message += " " + "; ".join(notes) + "."
    action = (
        "Check the agent's retry policy for this call (a cap, backoff, Retry-After); "
        "the repeat count differs between the runs but repeats alone are not the cause: "
        "confirm with the first divergence."
        if len(sa) != len(sb)
        else "Both runs repeat this call as often: it is not what tells them apart."
    )
    return finding(
        "repeated_key",
        {"a": sa[:MAX_SEQS], "b": sb[:MAX_SEQS]},
        message,
        action,
        {"key": list(key), "count_a": len(sa), "count_b": len(sb), "patterns": patterns},
    )


def _cycles(c: Cassette, repeated: bytearray) -> list[tuple[int, int, int]]:
    """Loops: ``(start, period, repetitions)`` for each stretch where a cycle of 2 to
    ``MAX_CYCLE`` distinct keys repeats back to back at least twice; most steps first.
    O(n * MAX_CYCLE). ``repeated``: per entry, 1 when its key occurs again in the run
    (``replay_key.repeated_flags``): a key held once starts no cycle. The keys are
    compared in the cassette's columns, not built a tuple an entry."""
    tools, digests = c._tools, c.digest_codes()
    n = len(digests)

    def same(i: int, j: int) -> bool:
        return repeated[i] == 1 and digests[i] == digests[j] and tools[i] == tools[j]

    found: list[tuple[int, int, int]] = []
    covered = bytearray(n)
    for period in range(2, MAX_CYCLE + 1):
        i = 0
        dropped_at = 0
        while i + period < n:
            if i - dropped_at >= SCAN_STEP:
                # the columns' pages read, let go (issue 31: the whole columns' would
                # count in VmRSS until the pager's turn)
                dropped_at = i
                drop_pages(digests)
                drop_pages(getattr(tools, "ids", None))
            if not same(i, i + period):
                i += 1
                continue
            run = 0  # key i + k equals key i + period + k for k < run
            while i + period + run < n and same(i + run, i + period + run):
                run += 1
            span = run + period
            if (
                span >= 2 * period
                and not covered[i]
                and len({c.key(k) for k in range(i, i + period)}) == period
            ):
                found.append((i, period, span // period))
                covered[i : i + span] = b"\x01" * span
            i += run + 1
    found.sort(key=lambda f: -f[1] * f[2])
    return found


def _loops(a: Cassette, b: Cassette, repeated: tuple[bytearray, bytearray]) -> list[Finding]:
    """The two longest loops of each run, with how often the other run repeats each."""
    cycles = {"a": _cycles(a, repeated[0]), "b": _cycles(b, repeated[1])}
    findings = []
    for side, c in (("a", a), ("b", b)):
        other_side = "b" if side == "a" else "a"
        other = b if side == "a" else a
        for start, period, reps in cycles[side][:2]:
            keys = [c.key(start + k) for k in range(period)]
            other_reps = max(
                (
                    r
                    for s, p, r in cycles[other_side]
                    if p == period and {other.key(s + k) for k in range(p)} == set(keys)
                ),
                default=0,
            )
            findings.append(_loop_finding(c, side, start, period, reps, keys, other_reps))
    return findings


def _loop_finding(
    c: Cassette, side: str, start: int, period: int, reps: int, keys: list[Key], other_reps: int
) -> Finding:
    """The finding of one loop of run ``side`` (``"a"``/``"b"``): ``period`` keys from
    ``start``, ``reps`` times; the other run repeats it ``other_reps`` times."""
    other_side = "b" if side == "a" else "a"
    end = start + period * reps - 1
    tools = ", ".join(k[0] for k in keys)
    message = (
        f"{side.upper()} loops: a cycle of {period} keys ({tools}) repeats {reps} "
        f"times back to back at seqs {c.seq(start)}-{c.seq(end)}; "
        + (
            f"{other_side.upper()} repeats it {other_reps} times."
            if other_reps
            else f"{other_side.upper()} does not loop over it."
        )
    )
    seqs = {side: [c.seq(i) for i in range(start, end + 1)][:MAX_SEQS], other_side: []}
    return finding(
        "repeated_key",
        seqs,
        message,
        "Look at the response the loop keeps reading: the agent does not see the "
        "progress it waits for, or a stop condition is missing.",
        {
            "pattern": "loop",
            "side": side,
            "keys": [list(k) for k in keys],
            "repetitions": reps,
            "other_repetitions": other_reps,
        },
    )
