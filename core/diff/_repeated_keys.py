"""The ``repeated_key`` findings: keys called more than once within a run (retries, retry
storms) and cycles of keys repeating back to back (loops); see ``diagnose.py``."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from ..format.columns import digest_code
from ..format.plural import plural
from ..keys.replay_key import KeyIndex
from ._finding import MAX_SEQS, finding, key_text, seq_list

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.findings import Finding
    from .result import DiffResult

MAX_REPEATED = 5  # repeated_key findings per diagnosis
MAX_CYCLE = 6  # longest cycle of keys detected as a loop

Key = tuple[str, str]


def repeated_keys(result: DiffResult) -> list[Finding]:
    """The ``MAX_REPEATED`` repeated keys whose counts differ most between the runs, then
    up to two loops per run."""
    a, b = result.a, result.b
    repeated = result.repeated()
    pos_a, pos_b = _repeated_positions(a, b, repeated)
    errs_a, errs_b = (o.errors for o in result.outcomes())
    findings = []
    for key in _most_repeated(a, b, pos_a, pos_b)[:MAX_REPEATED]:
        pa, pb = pos_a.get(key, []), pos_b.get(key, [])
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


def _repeated_positions(
    a: Cassette, b: Cassette, repeated: tuple[bytearray, bytearray]
) -> tuple[KeyIndex[Key], KeyIndex[Key]]:
    """``KeyIndex.of`` of A and of B kept to the keys either run holds more than once
    (``repeated``: per entry flags), with all their positions: what the findings read,
    without a key and a list for every entry of a run."""
    wanted = {c.key(i) for c, flags in zip((a, b), repeated, strict=True)
              for i in range(len(c)) if flags[i]}  # fmt: skip
    codes = {digest_code(d) for _, d in wanted}  # compared first, no text made an entry

    def index(c: Cassette) -> KeyIndex[Key]:
        all_codes = c.digest_codes()
        hits = [i for i in range(len(c)) if all_codes[i] in codes and c.key(i) in wanted]
        return KeyIndex.from_keys((c.key(i) for i in hits), hits)

    return index(a), index(b)


def _most_repeated(
    a: Cassette, b: Cassette, pos_a: dict[Key, list[int]], pos_b: dict[Key, list[int]]
) -> list[Key]:
    """The keys either run calls more than once: the counts that differ most first, then
    the most calls, then the key seen first."""
    repeated = [
        k
        for k in pos_a.keys() | pos_b.keys()
        if len(pos_a.get(k, ())) > 1 or len(pos_b.get(k, ())) > 1
    ]
    repeated.sort(
        key=lambda k: (
            -abs(len(pos_a.get(k, ())) - len(pos_b.get(k, ()))),
            -max(len(pos_a.get(k, ())), len(pos_b.get(k, ()))),
            # ties: the key seen first, then the key itself (the set above iterates in
            # hash order, which changes with PYTHONHASHSEED)
            min(pos_a.get(k, [len(a)])[0], pos_b.get(k, [len(b)])[0]),
            k,
        ),
    )
    return repeated


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
        while i + period < n:
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
