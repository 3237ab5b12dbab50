"""Which alignment tells the story of two runs: the default of ``diff`` and the app
(``--align auto``).

By seq, row *i* holds the *i*-th call of each run: when the runs part by choosing
different calls at one step, that row shows the two calls side by side (``other_call``
or ``args_drift``), which is the story. When one run makes extra calls first (a second
lookup, a retry, a question asked before acting) and then makes the other run's call,
every row after the inserted step is shifted: the first divergence by seq reads "same
tool, different args" or "another tool", and the diagnosis blames how the args were
built. The key alignment shows that step as one-sided (``only_a``/``only_b``) and pairs
the calls that follow.

``choose_alignment(a, b)`` picks ``key`` exactly then: at the first step whose call
differs (tool or args digest), the call one run makes there is made by the other run
within ``LOOKAHEAD`` steps (the same key; or, when the two tools differ, the same tool).
Otherwise it picks ``seq``. On the tau-bench airline pass/fail pairs this puts the right
first divergence on screen for every pair (see README, "Alignment").

The choice reads the calls (tools and args keys) alone, never the answers. An answer that
differs before any call does used to settle it for ``seq`` ("both alignments put the first
divergence there"), but that is not so when the runs then part at an inserted step: on the
sample pair (A retries a rate-limited search three times more, then reads another
document) ``seq`` put the retries beside B's reads as ``other_call`` rows and lost the
``downstream_drift`` that traces A's wrong ``read_file`` to the search ranking, and on
two runs whose every answer differs (a re-recording against a changed service) one
inserted step shifted every row after it. By key the extra steps are one-sided rows
where the runs part, and the rows after them pair up. The answers decide the statuses of
the rows, not which entries stand side by side.

Cost: one pass over both runs' keys up to the first differing call (the keys a diff
computes anyway); no response is read, no alignment, no deepdiff.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..format.plural import plural

if TYPE_CHECKING:
    from ..format.cassette import Cassette

__all__ = ["ALIGN_CHOICES", "LOOKAHEAD", "AlignChoice", "choose_alignment", "resolve_alignment"]

#: what ``diff --align`` and the app accept: ``auto`` resolves to ``seq`` or ``key``
ALIGN_CHOICES = ("auto", "seq", "key")
#: how many steps ahead the other run may make a call for it to count as inserted steps
LOOKAHEAD = 20


@dataclass(frozen=True)
class AlignChoice:
    """The alignment ``choose_alignment`` picked and why.

    Attributes:
        align: ``"seq"`` or ``"key"``.
        reason: one sentence for people (the ``diff`` summary, ``--json`` ``align_reason``).
        index: the 0-based position (in both runs) of the first differing call, or ``None``.
    """

    align: str
    reason: str
    index: int | None = None


def resolve_alignment(a: Cassette, b: Cassette, align: str) -> tuple[str, str | None]:
    """``(align, reason)`` for a diff asked for with ``align`` (one of ``ALIGN_CHOICES``):
    ``"seq"`` or ``"key"`` as asked, with no reason, or for ``"auto"`` the alignment
    ``choose_alignment`` picks and its reason (computing both cassettes' keys). The one
    place ``auto`` is resolved for a diff (``diff_cassettes``, ``diff_job``)."""
    if align != "auto":
        return align, None
    choice = choose_alignment(a, b)
    return choice.align, choice.reason


def _find(keys: list[tuple[str, str]] | list[str], start: int, wanted: object) -> int | None:
    for j in range(start, min(len(keys), start + LOOKAHEAD)):
        if keys[j] == wanted:
            return j
    return None


def choose_alignment(a: Cassette, b: Cassette) -> AlignChoice:
    """``key`` when the runs part at an inserted step (see the module docstring), else
    ``seq``. Computes both cassettes' keys (``Cassette.digests``) if not done yet."""
    ta, tb = a._tools, b._tools
    da, db = a.digest_codes(), b.digest_codes()  # equal exactly when the digests are
    n = min(len(a), len(b))
    k = next((i for i in range(n) if ta[i] != tb[i] or da[i] != db[i]), None)
    if k is None:
        return _no_call_differs(a, b, n)
    later_a, later_b, by_tool = _made_later(a, b, k)
    if later_a is None and later_b is None:
        what = "different tools" if ta[k] != tb[k] else "the same tool with different args"
        return AlignChoice(
            "seq",
            f"the runs part at seq {a.seq(k)} / {b.seq(k)} by calling {what}, and neither "
            "makes the other's call later: the two calls side by side",
            k,
        )
    if later_a is not None and later_b is not None:
        return _reordered(a, b, k, later_a, later_b, by_tool)
    return _inserted(a, b, k, later_a, later_b, by_tool)


def _no_call_differs(a: Cassette, b: Cassette, n: int) -> AlignChoice:
    """The runs make the same first ``n`` calls (``n``: the shorter run's length)."""
    if len(a) == len(b):
        return AlignChoice("seq", "the runs make the same calls in the same order")
    longer = "A" if len(a) > len(b) else "B"
    if n == 0:
        return AlignChoice("seq", f"only {longer} makes calls")
    return AlignChoice(
        "seq", f"the runs make the same first {plural(n, 'call')}, then only {longer} goes on"
    )


def _made_later(a: Cassette, b: Cassette, k: int) -> tuple[int | None, int | None, bool]:
    """Where, within ``LOOKAHEAD`` steps after ``k``, A makes B's call at ``k`` and B makes
    A's (offsets from ``k + 1``, or ``None``), and whether that is by tool only: when
    neither makes the other's call (the same key) and the two tools differ, the same tool
    counts."""
    ta, tb = a._tools, b._tools
    da, db = a.digests(), b.digests()
    end = k + 1 + LOOKAHEAD
    keys_a = list(zip(ta[k + 1 : end], da[k + 1 : end], strict=True))
    keys_b = list(zip(tb[k + 1 : end], db[k + 1 : end], strict=True))
    later_a = _find(keys_a, 0, (tb[k], db[k]))  # B's call, made later by A
    later_b = _find(keys_b, 0, (ta[k], da[k]))  # A's call, made later by B
    if later_a is None and later_b is None and ta[k] != tb[k]:
        return _find(list(ta[k + 1 : end]), 0, tb[k]), _find(list(tb[k + 1 : end]), 0, ta[k]), True
    return later_a, later_b, False


def _reordered(
    a: Cassette, b: Cassette, k: int, later_a: int, later_b: int, by_tool: bool
) -> AlignChoice:
    """Each run makes the other's call later: the same calls (or tools) in another order,
    not extra calls (the key alignment shows them as moved rows)."""
    same = "tools" if by_tool else "calls"
    where = f"seq {a.seq(k)}" if a.seq(k) == b.seq(k) else f"A seq {a.seq(k)} / B seq {b.seq(k)}"
    return AlignChoice(
        "key",
        f"the runs make the same {same} in another order from {where}: A's call there "
        f"({a._tools[k]}) is B's seq {b.seq(k + 1 + later_b)}, B's ({b._tools[k]}) is A's seq "
        f"{a.seq(k + 1 + later_a)}: aligned by call key so each call pairs with its match",
        k,
    )


def _inserted(
    a: Cassette, b: Cassette, k: int, later_a: int | None, later_b: int | None, by_tool: bool
) -> AlignChoice:
    """One run makes extra calls from ``k`` on, then the other run's call there."""
    if later_a is not None:
        side, other, extra, c, o, tool = "A", "B", later_a + 1, a, b, b._tools[k]
    else:
        assert later_b is not None
        side, other, extra, c, o, tool = "B", "A", later_b + 1, b, a, a._tools[k]
    first, at = c.seq(k), c.seq(k + extra)
    span = f"seq {first}" if extra == 1 else f"seq {first}-{c.seq(k + extra - 1)}"
    if by_tool:
        what = (
            f"calling {tool}, the tool {other} calls at seq {o.seq(k)} ({side} calls it at "
            f"seq {at}, with other args)"
        )
    else:
        what = f"the call {other} makes at seq {o.seq(k)} ({tool}), made by {side} at seq {at}"
    return AlignChoice(
        "key",
        f"{side} makes {plural(extra, 'extra call')} ({span}) before {what}: aligned by call key "
        "so the steps after it pair up",
        k,
    )
