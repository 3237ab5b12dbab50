"""The secrets of the files a runs folder holds beside its call logs: what an agent printed
(``run-01.stdout``, ``run-01.stderr``, captured as it wrote it) and the replay reports and
run results the loop writes (``*.report.json``, its ``.journal``, ``*.end.json``, written
masked). ``check`` finds secrets in them, ``redact`` replaces them and the pre-commit hook
matches them, as for a cassette, so a ``--runs-dir`` committed by mistake holds none.

A run file is read as UTF-8 text (bytes that are not UTF-8 kept as escapes), each line
scanned as a string under the key ``"line N"``: a finding's path names its line.
"""

from __future__ import annotations

from pathlib import Path

from ..format.errors import CassetteFormatError
from .redact import Redactor, _apply_hits, _replace_known
from .redact_config import SecretConfig
from .secrets import SecretHit, scan_value

__all__ = ["RUN_FILE_SUFFIXES", "is_run_file", "read_run_file", "redact_run_file", "run_file_hits"]

#: the names the loop gives a run's files besides its call log (``run-01.jsonl``)
RUN_FILE_SUFFIXES = (".stdout", ".stderr", ".report.json", ".report.json.journal", ".end.json")


def is_run_file(path: str | Path) -> bool:
    """Whether ``path`` is named as a run's output, report or result file."""
    return str(path).endswith(RUN_FILE_SUFFIXES)


def read_run_file(path: str | Path) -> dict[str, str]:
    """The file's lines as ``{"line 1": text, ...}`` (the document the scan reads).

    Raises:
        CassetteFormatError: the file cannot be read (``line`` ``None``).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    text = raw.decode("utf-8", "surrogateescape")
    return {f"line {n}": line for n, line in enumerate(text.split("\n"), 1)}


def run_file_hits(doc: dict[str, str], config: SecretConfig | None = None) -> list[SecretHit]:
    """Every secret in a run file's lines (``read_run_file``), in line order, allowed ones
    left out."""
    return scan_value(doc, (), config)


def redact_run_file(
    doc: dict[str, str], redactor: Redactor | None = None, path: str | Path | None = None
) -> tuple[bytes, int]:
    """The file's bytes with every secret replaced by its placeholder
    (``<redacted:KIND:HASH8>``, as in a cassette), and how many hits were replaced; the
    same bytes as read when there were none. ``path``: the file, for the error's words.

    Raises:
        CassetteFormatError: a secret the scan finds is still there after the replacement
            (written with JSON escapes): nothing is written, the message names its lines.
    """
    redactor = redactor or Redactor()
    hits = run_file_hits(doc, redactor.config)
    out = _apply_hits(doc, 0, hits) if hits else doc
    known = frozenset(h.secret for h in hits if h.secret)
    if known:
        out = _replace_known(out, known)
    left = run_file_hits(out, redactor.config) if hits else []
    if left:
        # a secret written escaped (``\\u0067hp_...`` in a JSON string): found decoded, not
        # as the bytes on the line; never claim a replacement that was not made
        lines = sorted({hit.parts[0] for hit in left if hit.parts}, key=_line_number)
        raise CassetteFormatError(
            path,
            _line_number(lines[0]) if lines else None,
            None,
            "a secret is written in an escaped form that redact cannot replace on "
            + ", ".join(str(n) for n in lines)
            + "; edit it by hand",
        )
    text = "\n".join(out.values())
    return text.encode("utf-8", "surrogateescape"), len(hits)


def _line_number(key: object) -> int:
    """``"line 12"`` -> 12."""
    return int(str(key).rpartition(" ")[2] or 0)
