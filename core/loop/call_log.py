"""A replayed run's call log as a cassette, so any two runs of a gate open side by side.

The replay report (``replay.report.ReplayReport``, written by the agent to
``CASSETTE_REPORT``) lists the calls in order (``CallRecord``: ``n``, ``tool``, ``digest``,
``seq``, ``outcome``) with outcome ``hit``, ``error`` (a recorded error served), ``miss`` or
``exhausted``. ``call_log_entries`` turns
that into entries numbered by call (``seq`` = ``n``):

- a ``hit``/``error`` call is the recorded entry that served it (its args and outcome),
  with ``replayed_seq`` naming that recorded seq, and its ``batch`` mark when it was a
  parallel call (so the diff of two logs pairs parallel calls served in another order);
- a ``miss`` takes its args from the report's ``misses`` (in order) and is written as an
  error entry ``{"type": "CassetteMiss", ...}``;
- an ``exhausted`` call takes the args of a recording of its key (same key, so the same
  normalized args) and is an error entry ``{"type": "ReplayExhausted", ...}``;
- a ``new`` call (answered live under a new-calls policy) takes its args from the report's
  ``new_calls`` and a ``pinned`` one (answered by a pinned fixture) those of its key's
  recording, when there is one; both have no response (the answer is not in the report).

Each entry is written redacted (``scan.redact.Redactor``, no config: every secret the scan
finds becomes its placeholder, the same in every run's log, so the logs still compare): a
call log is a file in a runs folder, never a second plaintext copy of the cassette's
secrets (issue 26). Each entry also carries ``outcome`` (the report's word). A process
that wrapped several dispatchers wrote their reports combined: ``ReplayReport.from_json``
joins their calls, misses and repeats in that order.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..format.atomic import default_mode
from ..format.cassette import Cassette, dump_line
from ..format.constants import BATCH_FIELD
from ..format.entry import Entry
from ..keys.replay_key import KeyIndex
from ..replay.report import ReplayReport


def call_log_entries(report: ReplayReport, cassette: Cassette) -> list[Entry]:
    """The run's calls as entries (see the module docstring); ``[]`` when the report has
    no calls."""
    by_key = KeyIndex.of(cassette)
    redacted = _redacted_entries(cassette)
    misses = iter(report.misses)
    new_calls = iter(report.new_calls or ())
    entries: list[Entry] = []
    for call in report.calls or ():
        extra: dict[str, Any] = {"outcome": call.outcome}
        index = cassette.index_of_seq(call.seq) if call.seq is not None else None
        if index is not None:
            recorded = redacted(index)
            extra["replayed_seq"] = call.seq
            batch = recorded.extra.get(BATCH_FIELD)
            if batch is not None:
                extra[BATCH_FIELD] = batch
            entries.append(
                Entry(
                    call.n, call.tool, recorded.args, recorded.response, recorded.error, extra=extra
                )
            )
            continue
        if call.outcome in ("new", "pinned"):
            # answered outside the cassette (live, or by a pinned fixture): the args,
            # no response (the answer is not in the report)
            new = next(new_calls, None) if call.outcome == "new" else None
            known = by_key.first((call.tool, call.digest))
            args = (
                new.args if new is not None else redacted(known).args if known is not None else None
            )
            entries.append(Entry(call.n, call.tool, args, None, None, extra=extra))
            continue
        if call.outcome == "miss":
            miss = next(misses, None)
            args = miss.args if miss is not None else None
            error = {
                "type": "CassetteMiss",
                "message": f"{call.tool} {call.digest} was not recorded",
            }
        else:
            known = by_key.first((call.tool, call.digest))
            args = redacted(known).args if known is not None else None
            error = {
                "type": "ReplayExhausted" if call.outcome == "exhausted" else "ReplayError",
                "message": f"{call.tool} {call.digest}: {call.outcome or 'not served'}",
            }
        entries.append(Entry(call.n, call.tool, args, None, error, extra=extra))
    return entries


#: each cassette's entries as redacted for the call logs, each redacted once for all runs
_REDACTED: weakref.WeakKeyDictionary[Cassette, dict[int, Entry]] = weakref.WeakKeyDictionary()


def _redacted_entries(cassette: Cassette) -> Callable[[int], Entry]:
    """``index -> entry`` of ``cassette`` with its secrets replaced by their placeholders,
    each entry scanned once per cassette (a gate writes one log per run)."""
    from ..scan.redact import Redactor

    try:
        done = _REDACTED.setdefault(cassette, {})
    except TypeError:  # a cassette that cannot be weakly referenced: no cache
        done = {}
    redactor = Redactor()

    def at(index: int) -> Entry:
        entry = done.get(index)
        if entry is None:
            entry = done[index] = redactor.redact_entry(cassette[index])[0]
        return entry

    return at


def write_call_log(
    report: ReplayReport, cassette: Cassette, path: str | Path
) -> tuple[Path, Cassette]:
    """Write the call log of ``report`` as a cassette at ``path`` and return the path and
    the call-log cassette in memory, as ``load(path)`` reads the file back (no rules:
    strict keys; the gate compares runs with it, never reading the file again).

    Made with the mode of any new file (0666 less the umask). Atomic (a temporary file
    hard-linked into place, so the name never shows a partial file and an existing file
    is never replaced) but not fsync'ed: a call log is scratch output in a runs folder, and
    a gate writes one per run (an fsync costs 5-10 ms each).

    Raises:
        FileExistsError: ``path`` exists.
    """
    entries = call_log_entries(report, cassette)
    log = Cassette.from_entries(entries, path=path)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        os.fchmod(fd, default_mode())  # mkstemp's 0600: a call log is made like other files
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(dump_line(entry, cassette.rules) for entry in entries)
        os.link(tmp, target)  # FileExistsError when the name is taken: never replaced
    finally:
        os.unlink(tmp)
    return target, log
