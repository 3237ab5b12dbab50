"""Hybrid cassettes: the passing run with some of its responses taken from the failing
run, the material of ``bisect`` and ``swap``.

The steps that can be swapped are the aligned rows whose two calls have the same key and
different responses (``response_drift``; a row that differs only in volatile metadata is
left as it is). A hybrid keeps the passing run's entries in their order, answers each
chosen step with the failing run's response (or error), and appends, after them, the
failing run's calls whose key the passing run never made, so an agent that follows the
failing path still finds its answers instead of missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..diff.model import DriftItem, Status
from ..diff.result import DiffResult
from ..format.cassette import Cassette, save
from ..format.entry import Entry

#: drift paths named per step in a report
PATHS_SHOWN = 3


@dataclass(frozen=True)
class DifferingStep:
    """One aligned step whose responses differ (same key in both runs).

    Attributes:
        row: the row's 0-based index in the diff.
        a, b: the entry indices in the failing (A) and passing (B) cassette.
        a_seq, b_seq: their seqs.
        tool: the tool called.
        paths: the first drift paths of the response (``$.results[0]``; ``response`` for
            the whole response, ``error`` / ``error.message`` for the error), for a person.
    """

    row: int
    a: int
    b: int
    a_seq: int
    b_seq: int
    tool: str
    paths: tuple[str, ...] = ()

    def label(self) -> str:
        """``A seq 3 search_docs $.results[0]``: the step as a report names it."""
        where = " ".join(self.paths)
        return f"A seq {self.a_seq} {self.tool}" + (f" {where}" if where else "")


def differing_steps(result: DiffResult) -> list[DifferingStep]:
    """Every ``response_drift`` row of ``result`` (A failing, B passing), in row order."""
    steps = []
    for i, row in enumerate(result.rows):
        if row.status is not Status.RESPONSE_DRIFT or row.a is None or row.b is None:
            continue
        assert row.a_seq is not None and row.b_seq is not None
        paths = tuple(_where(d) for d in result.drift(i)[:PATHS_SHOWN])
        steps.append(DifferingStep(i, row.a, row.b, row.a_seq, row.b_seq, row.tool, paths))
    return steps


def _where(item: DriftItem) -> str:
    """A drift path as a person reads it: ``$.results[0]`` for the response's inside; the
    whole response or error by its part's name, and an error's inside under ``error``
    (an error in A where B was answered reads ``error response``, never ``$ $``)."""
    if item.part == "response":
        return "response" if item.path == "$" else item.path
    return item.part + item.path[1:]


def hybrid_entries(
    failing: Cassette, passing: Cassette, chosen: Iterable[DifferingStep]
) -> list[Entry]:
    """The passing run's entries with each ``chosen`` step answered as the failing run
    was answered, then the failing run's calls whose key the passing run never made
    (seqs continue after the passing run's last)."""
    answers = {s.b: failing[s.a] for s in chosen}
    entries: list[Entry] = []
    for i in range(len(passing)):
        entry = passing[i]
        theirs = answers.get(i)
        if theirs is not None:
            entry = replace(entry, response=theirs.response, error=theirs.error)
        entries.append(entry.fresh())
    known = {passing.key(i) for i in range(len(passing))}
    seq = max((e.seq for e in entries), default=0)
    for i in range(len(failing)):
        if failing.key(i) not in known:
            seq += 1
            entries.append(replace(failing[i], seq=seq).fresh())
    return entries


def write_hybrid(
    path: Path, failing: Cassette, passing: Cassette, chosen: Iterable[DifferingStep]
) -> Path:
    """``hybrid_entries`` written as a new cassette at ``path`` (atomically; an existing
    file raises ``FileExistsError``), its digests under the passing run's rules."""
    return save(hybrid_entries(failing, passing, chosen), path, rules=passing.rules)
