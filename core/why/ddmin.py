"""Delta debugging (``ddmin``, Zeller and Hildebrandt, "Simplifying and Isolating
Failure-Inducing Input", IEEE TSE 28(2), 2002): the smallest subset of a failure-inducing
set that still makes the test fail, 1-minimal (removing any one item makes it not fail).

The test has three outcomes, as in the paper: ``FAIL`` (the failure is there), ``PASS``
and ``UNRESOLVED`` (neither: here a flaky oracle, or an agent that left the recording).
Only ``FAIL`` narrows the set; an unresolved candidate is never counted as pass or fail.
Results are cached by subset, so no subset is tested twice. The test is a job (a
generator that yields progress and returns an outcome), so a long search can be
cancelled between replays and keeps what it learned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..format.jobs import JobGenerator, Progress

FAIL = "fail"
PASS = "pass"
UNRESOLVED = "unresolved"

T = TypeVar("T", bound=Hashable)


@dataclass
class Search(Generic[T]):
    """What a ddmin search learned: every subset tested with its outcome, in order.

    Attributes:
        tested: ``(subset, outcome)`` pairs, each subset once.
        minimal: the smallest failing subset found so far (the whole set until a smaller
            one fails).
        done: the search ended (``minimal`` is 1-minimal, as far as the outcomes resolved).
    """

    tested: list[tuple[frozenset[T], str]] = field(default_factory=list)
    minimal: list[T] = field(default_factory=list)
    done: bool = False

    def outcome(self, subset: frozenset[T]) -> str | None:
        for s, o in self.tested:
            if s == subset:
                return o
        return None


def _split(items: Sequence[T], n: int) -> list[list[T]]:
    """``items`` in ``n`` contiguous chunks whose sizes differ by at most one."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return [c for c in out if c]


def ddmin(
    items: Sequence[T],
    test: Callable[[list[T]], JobGenerator[str]],
    search: Search[T] | None = None,
) -> JobGenerator[Search[T]]:
    """Narrow ``items`` (which must make ``test`` fail) to a 1-minimal failing subset.

    Args:
        items: the failure-inducing set, in a stable order (chunks are contiguous in it).
        test: a job returning ``FAIL``, ``PASS`` or ``UNRESOLVED`` for a subset.
        search: a search to go on with (its ``tested`` outcomes are reused), e.g. the one
            a cancelled run left.

    Yields ``Progress(stage="ddmin", unit="candidates")`` after each test; returns the
    ``Search`` (``minimal``: the subset found; ``done``: True). ``Cancelled`` raised by a
    test leaves ``search`` holding what was learned.
    """
    search = search if search is not None else Search()
    current = list(items)
    search.minimal = current

    def run(subset: list[T]) -> JobGenerator[str]:
        key = frozenset(subset)
        known = search.outcome(key)
        if known is not None:
            return known
        outcome = yield from test(subset)
        search.tested.append((key, outcome))
        yield Progress("ddmin", len(search.tested), None, "candidates", f"{len(current)} left")
        return outcome

    n = 2
    while len(current) >= 2:
        chunks = _split(current, n)
        narrowed = False
        for chunk in chunks:  # reduce to a subset
            if (yield from run(chunk)) == FAIL:
                current, n, narrowed = chunk, 2, True
                break
        if not narrowed and len(chunks) > 2:
            for i in range(len(chunks)):  # reduce to a complement
                rest = [x for j, c in enumerate(chunks) if j != i for x in c]
                if (yield from run(rest)) == FAIL:
                    current, n, narrowed = rest, max(n - 1, 2), True
                    break
        search.minimal = current
        if narrowed:
            continue
        if n >= len(current):
            break
        n = min(len(current), 2 * n)
    search.minimal = current
    search.done = True
    return search
