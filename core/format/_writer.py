"""The cassette writer: one entry as one line (compact JSON in the design's field order,
UTF-8, ``args_digest`` recomputed under the rules), and a whole cassette written atomically."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import write_atomic
from .digest import NO_RULES, KeyRules, digest
from .entry import Entry
from .jsonvalue import encode_nonfinite

if TYPE_CHECKING:
    from ._view import Cassette


#: the order of a line's known fields (docs/format.md): the design's example line
_FIELD_ORDER = ("seq", "tool", "args", "args_digest", "response", "error")


def dump_record(record: dict[str, Any]) -> bytes:
    """One cassette line (UTF-8, newline-terminated) for a record (see ``Entry.to_record``).

    Compact JSON, the known fields first in the design's order (``seq``, ``tool``,
    ``args``, ``args_digest``, ``response`` or ``error``), then the others
    (``recorded_at``, ``duration_ms``, ...) in their own order. Nested objects keep their
    keys in the order the tool returned them, so a replay hands back the same JSON text;
    only the args digest is canonical (sorted). The load reads this layout on its fast path
    (``_loader``). UTF-8 text kept readable. A lone surrogate (which ``json.loads`` accepts
    from ``"\\ud800"``) cannot be UTF-8: it is written back as its JSON escape, which only
    ever occurs inside a JSON string, so it reads back the same. Strict JSON: a NaN or an
    infinity is written as ``{"$numberDouble": "NaN"}`` (see ``jsonvalue``), never as the
    bare NaN that strict parsers refuse."""
    ordered = {k: record[k] for k in _FIELD_ORDER if k in record}
    for k, v in record.items():
        ordered.setdefault(k, v)
    try:
        text = _encode_strict(ordered)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        text = json.dumps(encode_nonfinite(ordered), separators=_COMPACT, ensure_ascii=False)
    return (text + "\n").encode("utf-8", "backslashreplace")


_COMPACT = (",", ":")
#: ``json.dumps(value, separators=_COMPACT, ensure_ascii=False, allow_nan=False)``, the
#: same text, without a new encoder made at each line (a quarter of a small line's time;
#: issue 31). Safe from any thread: an encoding keeps its state in its own call.
_encode_strict = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=_COMPACT).encode


def dump_line(entry: Entry, rules: KeyRules | None = None) -> bytes:
    """One cassette line (UTF-8, newline-terminated) for ``entry``, its ``args_digest``
    recomputed under ``rules`` (default: none)."""
    rules = rules or NO_RULES
    return dump_record(entry.to_record(digest(rules.apply(entry.tool, entry.args))))


def save(
    cassette: Iterable[Entry] | Cassette,
    path: str | Path,
    *,
    overwrite: bool = False,
    rules: KeyRules | None = None,
) -> Path:
    """Write entries as a cassette file, atomically (temporary file + rename).

    Each line is one entry as ``dump_record`` writes it, with ``args_digest`` recomputed under
    ``rules`` (default: the cassette's own rules, else none). Unknown fields are written
    back unchanged.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
    """
    line_rules: KeyRules = rules if rules is not None else getattr(cassette, "rules", NO_RULES)

    def chunks() -> Iterator[bytes]:
        for entry in cassette:
            yield dump_line(entry, line_rules)

    return write_atomic(path, chunks(), overwrite=overwrite)
