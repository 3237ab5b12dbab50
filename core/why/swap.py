"""``--swap SEQ=OTHER.jsonl:SEQ``: replay a cassette with one step answered as another
run answered it, to ask "with B's answer here, does the agent pass?" of one step (``bisect``
asks it of every subset).

The swapped cassette is the base cassette with the entry at ``SEQ`` given the response
(or error) of ``OTHER``'s entry at its ``SEQ``; its args stay, so the agent's call still
finds it. The two entries must be calls of the same tool. After the base's entries come
``OTHER``'s calls whose key the base never made (as ``hybrid.py`` does for ``bisect``):
the other answer usually steers the agent onto the other run's next calls (a search
ranked otherwise: the agent reads another document), and without them every such swap
would end in a miss, "unresolved", never a pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..format.cassette import Cassette, save
from ..format.entry import Entry
from ..format.errors import CassetteError
from ..importers.sources import open_cassette

_SPEC = re.compile(r"^(\d+)=(.+):(\d+)$")


class SwapError(CassetteError, ValueError):
    """A ``--swap`` that cannot be made: a malformed spec, a seq that is not in its
    cassette, or two steps of different tools. The message names which."""


@dataclass(frozen=True)
class Swap:
    """One swap: the base cassette's ``seq`` answered as ``other`` answered ``other_seq``."""

    seq: int
    other: Path
    other_seq: int

    @staticmethod
    def parse(spec: str) -> Swap:
        """``"3=fix.jsonl:2"`` as a ``Swap``.

        Raises:
            SwapError: not ``SEQ=FILE:SEQ``.
        """
        m = _SPEC.match(spec.strip())
        if m is None:
            raise SwapError(f"--swap {spec!r}: expected SEQ=OTHER.jsonl:SEQ (e.g. 3=fix.jsonl:2)")
        return Swap(int(m.group(1)), Path(m.group(2)), int(m.group(3)))

    def __str__(self) -> str:
        return f"seq {self.seq} answered as {self.other.name} seq {self.other_seq}"


def swapped_entries(base: Cassette, swaps: list[Swap]) -> list[Entry]:
    """``base``'s entries with each swap made, then each other cassette's calls whose key
    ``base`` never made (seqs continue after ``base``'s last), so an agent the swapped
    answer steers onto the other run's path still finds its answers.

    Raises:
        SwapError: a seq is not in its cassette, the two steps call different tools, or
            one seq is swapped twice.
        CassetteFormatError: an other cassette cannot be read.
    """
    others: dict[Path, Cassette] = {}
    answers: dict[int, Entry] = {}
    seen: dict[int, Swap] = {}
    for swap in swaps:
        first = seen.setdefault(swap.seq, swap)
        if first is not swap:  # the last would win silently, while both read as made
            raise SwapError(
                f"--swap: seq {swap.seq} is swapped twice ({first.other.name} seq "
                f"{first.other_seq}, {swap.other.name} seq {swap.other_seq}): give a step "
                "one answer"
            )
        other = others.get(swap.other)
        if other is None:
            other = others[swap.other] = open_cassette(str(swap.other))
        i, j = base.index_of_seq(swap.seq), other.index_of_seq(swap.other_seq)
        if i is None:
            raise SwapError(f"--swap: seq {swap.seq} is not in {base.path or 'the cassette'}")
        if j is None:
            raise SwapError(f"--swap: seq {swap.other_seq} is not in {swap.other}")
        if base.tool(i) != other.tool(j):
            raise SwapError(
                f"--swap: seq {swap.seq} calls {base.tool(i)!r} but {swap.other.name} seq "
                f"{swap.other_seq} calls {other.tool(j)!r}: swap an answer of the same tool"
            )
        answers[i] = other[j]
    out = []
    for i in range(len(base)):
        entry = base[i]
        theirs = answers.get(i)
        if theirs is not None:
            entry = replace(entry, response=theirs.response, error=theirs.error)
        out.append(entry.fresh())
    known = {base.key(i) for i in range(len(base))}
    seq = max((e.seq for e in out), default=0)
    for other in others.values():
        for j in range(len(other)):
            if other.key(j) not in known:
                known.add(other.key(j))
                seq += 1
                out.append(replace(other[j], seq=seq).fresh())
    return out


def write_swapped(base: str | Path, swaps: list[Swap], path: Path) -> Path:
    """The base cassette with ``swaps`` made, written as a new cassette at ``path``."""
    cassette = open_cassette(str(base))
    return save(swapped_entries(cassette, swaps), path, rules=cassette.rules)
