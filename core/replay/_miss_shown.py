"""What a miss shows of the live call: its nearest recorded calls with no secret in them.

A miss is printed (``CassetteMiss``), saved (the replay report) and shown again by the
``replay`` and ``gate`` commands, so its values are masked once, here, before any of those
see them (issue 26):

- a path differs only when it differs both raw and redacted (``keys.nearest`` with the
  replay's redactor): a secret the cassette holds as a placeholder is not a difference
  once the live value is redacted the same way;
- a live value whose hash is that of a placeholder in the recorded args is named
  ``"the redacted value at $.path"``, never printed;
- every other value (recorded or live) goes through ``masking.mask_value``, and each
  secret found on either side of a difference is masked on both
  (``pair_masking.mask_pair``).

The scan is imported when a miss happens, not when replay is imported (an agent pays
that import on every run).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..format.jsonpath import format_path, iter_leaves
from ..keys.nearest import nearest

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.digest import KeyRules
    from ..scan.redact import Redactor

_PLACEHOLDER = re.compile(r"<redacted:[a-z0-9_]+:([0-9a-f]{8})>")


def shown_miss(
    cassette: Cassette,
    rules: KeyRules,
    redactor: Redactor,
    tool: str,
    args: Any,
) -> tuple[Any, list[dict[str, Any]]]:
    """``(args, candidates)`` of a missed call as every message and report shows them.

    ``args``: the live args redacted (``redactor.redact_args``) then masked.
    ``candidates``: ``Candidate.to_dict()`` of the nearest recorded calls (at most 3,
    nearest first), each difference's ``recorded`` and ``live`` masked as above.
    """
    from ..scan.masking import hash8, key_at, mask_at, mask_value
    from ..scan.pair_masking import mask_pair, mask_pieces_in

    redacted = redactor.redact_args(tool, args)
    # a path differs only when it differs raw and redacted (keys.nearest with the redactor)
    ordered = nearest(cassette, tool, args, rules=rules, redactor=redactor)
    by_seq = {cassette.seq(i): i for i in range(len(cassette)) if cassette.tool(i) == tool}
    out = []
    carried: set[str] = set()  # secrets one side of a difference found, the other not
    for cand in ordered:
        recorded_args = cassette[by_seq[cand.seq]].args if cand.seq in by_seq else None
        placeholders = _placeholder_paths(recorded_args)
        data = cand.to_dict()
        for diff in data["differences"]:
            path = diff["path"]
            live = diff["live"]
            if isinstance(live, str) and diff["absent"] != "live" and live:
                at = placeholders.get(hash8(live))
                if at is not None:
                    diff["live"] = f"the redacted value at {at}"
                    diff["recorded"] = mask_at(diff["recorded"], path)
                    continue
            # a secret either side's scan finds masked on both (``pair_masking``): a
            # recorded token the live call sends cut or split is not shown by the live side
            diff["recorded"], diff["live"], secrets = mask_pair(
                diff["recorded"], live, key_at(path)
            )
            carried.update(secrets)
        out.append(data)
    # the live call as the message prints it: a recorded secret its own scan misses
    # (sent cut, or split) masked there too
    return mask_pieces_in(mask_value(redacted), sorted(carried)), out


def _placeholder_paths(args: Any) -> dict[str, str]:
    """hash8 -> the path (``$.api_key``) of the first placeholder carrying it in ``args``."""
    found: dict[str, str] = {}
    for parts, leaf in iter_leaves(args, (), only=(str,)):
        for m in _PLACEHOLDER.finditer(leaf):
            found.setdefault(m.group(1), format_path(parts))
    return found
