"""Tool names cut to a column's width so that names that differ stay different.

At 80 columns the step list gives a tool name about 12 cells. Cutting every name at its
end makes ``update_reservation_flights`` and ``update_reservation_baggages`` both
``update_rese…`` (three tools of tau-bench's airline task 5 read the same). ``shorten``
cuts at the end when that keeps every name distinct, else keeps a short head and the
distinguishing end (``upd…_flights``, ``upd…baggages``), trying the split points in order
until every name of the set reads differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

ELLIPSIS = "…"


def _cut(name: str, width: int, head: int) -> str:
    if len(name) <= width:
        return name
    tail = width - 1 - head
    return name[:head] + ELLIPSIS + (name[-tail:] if tail > 0 else "")


@lru_cache(maxsize=64)
def _shortened(names: frozenset[str], width: int) -> dict[str, str]:
    if width < 4:
        return {name: name[:width] for name in names}
    plain = width - 1  # the head of the plain cut at the end
    heads = {name: plain for name in names}
    forms = {name: _cut(name, width, plain) for name in names}
    # names whose plain cuts collide keep a short head and their distinguishing end; the
    # head grows, for the names that still collide only, until they read differently
    for _ in range(width):
        groups: dict[str, list[str]] = {}
        for name, form in forms.items():
            groups.setdefault(form, []).append(name)
        clashing = [n for group in groups.values() if len(group) > 1 for n in group]
        if not clashing:
            break
        for name in clashing:
            heads[name] = 3 if heads[name] == plain else min(heads[name] + 1, width - 2)
            forms[name] = _cut(name, width, heads[name])
    return forms


def shorten(names: Iterable[str], width: int) -> dict[str, str]:
    """Each of ``names`` in at most ``width`` characters, distinct whenever that can be
    done by keeping a head and a tail around ``…`` (names that fit stay whole)."""
    return _shortened(frozenset(names), width)
