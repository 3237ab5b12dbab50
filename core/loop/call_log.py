"""A replayed run's call log as a cassette, so any two runs of a gate open side by side.

The replay report (``Replayer.report()``, written by the agent to ``CASSETTE_REPORT``) lists
the calls in order: ``{"n", "tool", "digest", "seq", "outcome"}`` with outcome ``hit``,
``error`` (a recorded error served), ``miss`` or ``exhausted``. ``call_log_entries`` turns
that into entries numbered by call (``seq`` = ``n``):

- a ``hit``/``error`` call is the recorded entry that served it (its args and outcome),
  with ``replayed_seq`` naming that recorded seq;
- a ``miss`` takes its args from the report's ``misses`` (in order) and is written as an
  error entry ``{"type": "CassetteMiss", ...}``;
- an ``exhausted`` call takes the args of a recording of its key (same key, so the same
  normalized args) and is an error entry ``{"type": "ReplayExhausted", ...}``.

Each entry also carries ``outcome`` (the report's word). Only the report's documented
fields are read; unknown ones are ignored. A process that wrapped several dispatchers
writes ``{"mode", "wrappers": [report, ...]}``: ``flatten_report`` joins their calls,
misses and repeats in that order first.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..format.cassette import Cassette, dump_line
from ..format.entry import Entry
from ..keys.replay_key import KeyIndex


def flatten_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """One report from a report of several wrappers (calls renumbered in order, misses,
    repeats and unused seqs joined); a one-wrapper report unchanged."""
    wrappers = report.get("wrappers")
    if not isinstance(wrappers, list):
        return dict(report)
    flat: dict[str, Any] = {"mode": report.get("mode"), "calls": [], "misses": []}
    flat["repeats"], flat["unused_seqs"] = [], []
    for sub in wrappers:
        if not isinstance(sub, Mapping):
            continue
        for call in sub.get("calls") or []:
            flat["calls"].append({**call, "n": len(flat["calls"]) + 1})
        flat["misses"].extend(sub.get("misses") or [])
        flat["repeats"].extend(sub.get("repeats") or [])
        flat["unused_seqs"].extend(sub.get("unused_seqs") or [])
        for key in ("cassette", "entries", "used"):
            flat.setdefault(key, sub.get(key))
    return flat


def call_log_entries(report: Mapping[str, Any], cassette: Cassette) -> list[Entry]:
    """The run's calls as entries (see the module docstring); ``[]`` when the report has
    no ``calls``."""
    calls = report.get("calls") or []
    misses = list(report.get("misses") or [])
    by_key = KeyIndex.of(cassette)
    entries: list[Entry] = []
    miss_no = 0
    for position, call in enumerate(calls, 1):
        n = int(call.get("n") or position)
        tool = str(call.get("tool", ""))
        dig = str(call.get("digest", ""))
        outcome = str(call.get("outcome", ""))
        seq = call.get("seq")
        extra: dict[str, Any] = {"outcome": outcome}
        index = cassette.index_of_seq(seq) if isinstance(seq, int) else None
        if index is not None:
            recorded = cassette[index]
            extra["replayed_seq"] = seq
            entries.append(
                Entry(n, tool, recorded.args, recorded.response, recorded.error, extra=extra)
            )
            continue
        if outcome == "miss":
            miss = misses[miss_no] if miss_no < len(misses) else {}
            miss_no += 1
            args = miss.get("args")
            error = {"type": "CassetteMiss", "message": f"{tool} {dig} was not recorded"}
        else:
            known = by_key.first((tool, dig))
            args = cassette[known].args if known is not None else None
            error = {
                "type": "ReplayExhausted" if outcome == "exhausted" else "ReplayError",
                "message": f"{tool} {dig}: {outcome or 'not served'}",
            }
        entries.append(Entry(n, tool, args, None, error, extra=extra))
    return entries


def write_call_log(
    report: Mapping[str, Any], cassette: Cassette, path: str | Path
) -> tuple[Path, Cassette]:
    """Write the call log of ``report`` as a cassette at ``path`` and return the path and
    the in-memory call-log cassette.

    Atomic (a temporary file hard-linked into place, so the name never shows a partial
    file and an existing file is never replaced) but not fsync'ed: a call log is scratch
    output in a runs folder, and a gate writes one per run (an fsync costs 5-10 ms each).

    Raises:
        FileExistsError: ``path`` exists.
    """
    entries = call_log_entries(report, cassette)
    log = Cassette.from_entries(entries, path=path, rules=cassette.rules)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(dump_line(entry, cassette.rules) for entry in entries)
        os.link(tmp, target)  # FileExistsError when the name is taken: never replaced
    finally:
        os.unlink(tmp)
    return target, log
