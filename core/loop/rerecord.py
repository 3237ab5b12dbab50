"""Where a re-recording goes: a fresh file name next to the cassette it re-records.

The debug loop's last step (re-record after the fix, diff old against new, keep both)
never touches the old cassette: the new run goes to ``<stem>.rerecord-<UTC time>.jsonl``
in the old one's folder (``fail.rerecord-20261201T024800Z.jsonl`` beside ``fail.jsonl``),
a name no file holds yet. ``record_job`` refuses an existing file again when it starts, so
a file that appears between the choice of the name and the run is never overwritten.

A run imported from another format (``gpt-4o-airline.json#task=31,trial=2``, a VCR
cassette) is not a cassette of the user's to re-record beside: the folder of such a
source is often someone else's data (read-only, or shared), so its re-recording goes to
the current folder, named after the run
(``gpt-4o-airline.task-31_trial-2.rerecord-<UTC time>.jsonl``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

#: the tag between the old stem and the time
TAG = "rerecord"
#: a re-recording's own tag, dropped from its stem when it is re-recorded in turn
_OWN_TAG = re.compile(rf"\.{TAG}-\d{{8}}T\d{{6}}Z(?:-\d+)?$")


def is_imported(old: str | Path) -> bool:
    """Whether ``old`` names a run of another format by its path spec (a ``#task=``,
    ``trial=`` or ``from=`` selector); the file's content is not read."""
    from ..importers.sources import parse_path_spec

    spec = parse_path_spec(old)
    return spec.task is not None or spec.trial is not None or spec.fmt not in (None, "cassette")


def rerecord_path(
    old: str | Path | None, now: datetime | None = None, *, imported: bool | None = None
) -> Path:
    """A path no file holds yet, next to ``old``, for its re-recording.

    Args:
        old: the cassette re-recorded (a path spec); ``None`` (a cassette with no file of
            its own) puts ``rerecord-<time>.jsonl`` in the current folder.
        now: the time in the name (default: now), converted to UTC, to the second.
        imported: ``old`` is a run imported from another format (the caller knows it
            from the opened cassette's ``metadata["format"]``); ``None``: when its path
            spec has a selector (``is_imported``). An imported run's re-recording goes to
            the current folder, named ``<source stem>.<run label>.rerecord-<time>.jsonl``
            (``gpt-4o-airline.task-31_trial-2.rerecord-...``), never beside the source.

    Returns:
        ``<folder>/<stem>.rerecord-YYYYMMDDTHHMMSSZ.jsonl``, with ``-2``, ``-3``... before
        ``.jsonl`` when that name is taken (two re-recordings within one second). The stem
        of a re-recording loses its own tag (``fail.rerecord-...`` re-recorded is
        ``fail.rerecord-<new time>.jsonl``).
    """
    when = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    if old is None:
        folder, stem = Path.cwd(), ""
    elif imported or (imported is None and is_imported(old)):
        from ..format.multi_run import RunInfo
        from ..importers.sources import parse_path_spec

        spec = parse_path_spec(old)
        folder, stem = Path.cwd(), spec.path.stem
        if spec.task is not None or spec.trial is not None:
            stem += "." + RunInfo(spec.task, spec.trial, None, 0).label
    else:
        path = Path(old)
        folder = path.parent
        name = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
        stem = _OWN_TAG.sub("", name)
    base = f"{stem}.{TAG}-{when}" if stem else f"{TAG}-{when}"
    candidate = folder / f"{base}.jsonl"
    n = 1
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = folder / f"{base}-{n}.jsonl"
    return candidate
