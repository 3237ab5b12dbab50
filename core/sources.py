"""Open any supported recording as a ``Cassette``: a cassette file (JSONL, format v1) or,
through the importers, another format detected from the content.

Every command and the app open their inputs through ``open_cassette`` so that they all
accept the same formats.
"""

from __future__ import annotations

from pathlib import Path

from .cassette import Cassette, load
from .normalize import NormalizationRules


def open_cassette(
    path: str | Path,
    *,
    fmt: str | None = None,
    task: str | None = None,
    trial: int | None = None,
    lenient: bool = False,
    rules: NormalizationRules | None = None,
) -> Cassette:
    """Open ``path`` as a cassette.

    Args:
        path: the file to open.
        fmt: force a format (``"cassette"`` or an importer's name); ``None`` detects it.
        task, trial: pick one run from a file that holds many (tau-bench).
        lenient: see ``cassette.load``.
        rules: normalization rules for the replay keys.

    Raises:
        CassetteFormatError: unreadable input, naming the file, line and field.
    """
    return load(path, lenient=lenient, rules=rules)
