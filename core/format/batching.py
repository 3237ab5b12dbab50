"""How many entries a pass over every entry takes at a time (lint, the secret scan).

A pass parses a batch of entries, then runs each step over all of them before the next
step (the secret prefilter's rebuild, RE2's set, lint): each step's tables then stay in
the CPU's caches. Interleaved with the parse, RE2's automaton fell out of them (measured
on the 100k text cassette: its match took 26 us a line between parses, 12 us in a row).
A batch also holds its entries and their lines in memory at once, so it is bounded in
bytes too: a cassette of 100 KB web pages must not hold 256 of them (a tester measured
752 MB against 58 MB before batches).
"""

from __future__ import annotations

#: at most this many entries in a batch (issue 31: 1024 instead of 256 took 1.5 us less an
#: entry of ``check``'s pass on the 100k text cassette, whose lines of 1.7 KB then end a
#: batch by their bytes at about 600 entries; fewer steps of each loop per entry)
BATCH_ENTRIES = 1024
#: a batch ends once its lines hold this many bytes (300 lines of a typical 1.7 KB: a
#: batch of small entries is bounded by the count). Issue 31's sixth round: 512 KB instead
#: of 1 MB, about 1 us an entry less in ``check``'s pass on the 100k text cassette (its
#: lines and parsed entries then stay in a core's 2 MB L2 cache; measured 256 KB-2 MB)
BATCH_BYTES = 1 << 19


def batch_full(entries: int, size: int) -> bool:
    """Whether a batch of ``entries`` entries whose lines hold ``size`` bytes is complete:
    ``BATCH_ENTRIES`` entries, or ``BATCH_BYTES`` bytes, whichever comes first."""
    return entries >= BATCH_ENTRIES or size >= BATCH_BYTES
