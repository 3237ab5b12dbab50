"""The nearest recorded calls for a miss: which recorded call of the same tool the agent
probably meant, and which argument paths differ (with both values and the kind of value).

Paths are in the engine's one JSON-path syntax (``jsonpath.py``), rooted at the args:
``$.metadata.request_id``, ``$.items[0].id``, ``$["key with spaces"]``; a normalization
rule accepts them as printed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..format.digest import digest
from ..format.jsonpath import child_path
from .replay_key import redacted_name
from .volatile import difference_kind

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.digest import KeyRules
    from .replay_key import ArgsRedactor


class _Missing:
    """The value on the side where a path does not exist."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class ArgDifference:
    """One argument path that differs between a recorded call and a live one.

    Attributes:
        path: JSON path (``$.since``).
        recorded: the recorded value, or ``MISSING`` when the path is only in the live args.
        live: the live value, or ``MISSING`` when the path is only in the recorded args.
        kind: ``difference_kind(recorded, live)`` (``"uuid"``, ``"timestamp"``,
            ``"request id"``, ``"absolute path"``, ``"number type"``, ``"other"``), or
            ``"missing"`` when the path exists on one side only.
    """

    path: str
    recorded: Any
    live: Any
    kind: str

    def to_dict(self) -> dict[str, Any]:
        """``{"path", "recorded", "live", "absent", "kind"}``: a missing side's value is
        ``None`` and ``absent`` names it (``"recorded"``, ``"live"``), else ``absent`` is
        ``None`` and a ``None`` value is a real ``null``."""
        return {
            "path": self.path,
            "recorded": None if self.recorded is MISSING else self.recorded,
            "live": None if self.live is MISSING else self.live,
            # null above may be a real null or an absent path: this says which side is absent
            "absent": "recorded"
            if self.recorded is MISSING
            else ("live" if self.live is MISSING else None),
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Candidate:
    """A recorded call of the same tool, near a missed call.

    Attributes:
        seq: the recorded entry's seq (the first one when its key was recorded repeatedly).
        args_digest: its args digest under the rules in use.
        differences: the differing leaf paths, in path order.
    """

    seq: int
    args_digest: str
    differences: tuple[ArgDifference, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"seq", "args_digest", "differences": [...]}`` (the shape ``CassetteMiss`` and
        the replay report use)."""
        return {
            "seq": self.seq,
            "args_digest": self.args_digest,
            "differences": [d.to_dict() for d in self.differences],
        }


def _same(a: Any, b: Any) -> bool:
    # JSON equality: 1 and 1.0 differ (another JSON type), as do True and 1
    # NaN equals NaN here (the same recorded value); null, NaN and infinities stay apart
    return type(a) is type(b) and (a == b or (type(a) is float and math.isnan(a) and math.isnan(b)))


def leaf_differences(recorded: Any, live: Any, path: str = "$") -> Iterator[ArgDifference]:
    """Every leaf path where ``recorded`` and ``live`` differ (objects by key, arrays by
    index); a path present on one side only is one difference of kind ``"missing"``."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in sorted(recorded.keys() | live.keys()):
            sub = child_path(path, key)
            if key not in live:
                yield ArgDifference(sub, recorded[key], MISSING, "missing")
            elif key not in recorded:
                yield ArgDifference(sub, MISSING, live[key], "missing")
            else:
                yield from leaf_differences(recorded[key], live[key], sub)
        return
    if isinstance(recorded, list) and isinstance(live, list):
        for i in range(max(len(recorded), len(live))):
            sub = child_path(path, i)
            if i >= len(live):
                yield ArgDifference(sub, recorded[i], MISSING, "missing")
            elif i >= len(recorded):
                yield ArgDifference(sub, MISSING, live[i], "missing")
            else:
                yield from leaf_differences(recorded[i], live[i], sub)
        return
    if not _same(recorded, live):
        yield ArgDifference(path, recorded, live, difference_kind(recorded, live))


def _differing_both_ways(
    raw: tuple[ArgDifference, ...], redacted: tuple[ArgDifference, ...]
) -> tuple[ArgDifference, ...]:
    """The differences at the paths where the raw live args and the redacted ones both
    differ from the recorded args, each as the redacted comparison has it (the live
    value redacted)."""
    raw_paths = {d.path for d in raw}
    return tuple(d for d in redacted if d.path in raw_paths)


#: the most distinct recordings of a tool a miss is compared with: a replay's misses (a
#: minimise candidate of a large cassette has thousands) cost linear time, not misses x
#: recordings; a nearer recording past them goes unnamed
NEAREST_SCAN = 256


def nearest(
    cassette: Cassette,
    tool: str,
    args: Any,
    *,
    rules: KeyRules | None = None,
    limit: int = 3,
    redactor: ArgsRedactor | None = None,
) -> list[Candidate]:
    """The recorded calls of ``tool`` nearest to ``args``, nearest first.

    Distance is the number of differing leaf paths between the normalized recorded args
    and the normalized live args (``rules``, default: the cassette's rules); ties go to the
    earlier seq. Each distinct key appears once (at its first seq). Returns at most
    ``limit`` candidates; an empty list when the tool was never recorded. Only the first
    ``NEAREST_SCAN`` distinct recordings of the tool are compared.

    ``redactor`` (replay's, for a cassette that may be redacted): the live call is also
    compared redacted (its tool name and args), and a path differs only when it differs
    both ways, so a secret that matches once redacted is not blamed; where redaction
    changed the live value, the difference shows the redacted one.
    """
    rules = rules if rules is not None else cassette.rules
    live = rules.apply(tool, args)
    live_redacted = None
    tools = {tool}
    if redactor is not None:
        redacted = redactor.redact_args(tool, args)
        redacted_tool = redacted_name(redactor, tool)
        tools.add(redacted_tool)
        if redacted is not args:
            live_redacted = rules.apply(redacted_tool, redacted)
    seen: set[str] = set()
    scored: list[tuple[int, int, Candidate]] = []
    for i in range(len(cassette)):
        if cassette.tool(i) not in tools:
            continue
        dig = cassette.digest(i) if rules is cassette.rules else None
        entry = cassette[i]
        recorded = rules.apply(tool, entry.args)
        if dig is None:
            dig = digest(recorded)
        if dig in seen:
            continue
        if len(seen) >= NEAREST_SCAN:
            break
        seen.add(dig)
        diffs = tuple(leaf_differences(recorded, live))
        if live_redacted is not None:
            diffs = _differing_both_ways(diffs, tuple(leaf_differences(recorded, live_redacted)))
        scored.append((len(diffs), i, Candidate(entry.seq, dig, diffs)))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in scored[:limit]]
