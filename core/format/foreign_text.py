"""Text that is not a cassette's lines, named by its cause: another encoding (UTF-16 or
UTF-32 from PowerShell's ``>``, Windows-1252 from an ANSI editor) or a known foreign line
(git merge-conflict markers, a pasted diff, a Git LFS pointer, an HTML error page).

A load error that says "not valid JSON at column 1" or "not valid UTF-8 at byte 0" is
true but leaves the user to guess; these say what the file is and how to mend it. Only
error paths call them: a clean load never does.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from .readable import open_regular

#: byte order marks, the longer first (UTF-32 LE starts with UTF-16 LE's mark)
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "UTF-32 BE"),
    (codecs.BOM_UTF16_LE, "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "UTF-16 BE"),
)

#: git's conflict markers (``git merge-file``): seven characters at the start of a line
_CONFLICT_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")

#: first bytes of lines that belong to other kinds of files, and what they are
_FOREIGN_STARTS = (
    (
        b"version https://git-lfs.github.com/spec/",
        "a Git LFS pointer, not the cassette (run `git lfs pull`)",
    ),
    (b"diff --git ", "a diff (a patch pasted into the file?)"),
    (b"@@ -", "a diff hunk header (a patch pasted into the file?)"),
    (b"<!doctype html", "an HTML page (an error page saved as the file?)"),
    (b"<html", "an HTML page (an error page saved as the file?)"),
)

#: the advice for a merged cassette (docs/format.md, "The cassette format, version 1")
_GITATTRIBUTES = "a `*.jsonl -merge` line in .gitattributes makes git keep one side whole"


def encoding_problem(head: bytes) -> str | None:
    """What is wrong with a file whose first bytes are ``head`` (at least 4 when the file
    has them) when it is UTF-16 or UTF-32, by its byte order mark or, without one, by the
    NUL bytes beside ASCII that UTF-16 puts there; ``None`` for anything else.

    Cassettes are UTF-8 (docs/format.md); PowerShell 5's ``>`` writes UTF-16 LE with a
    BOM (jqlang/jq#2351, anchore/grype#3505)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            shown = " ".join(f"{b:02X}" for b in bom)
            return _reencode(f"{name} (byte order mark {shown})")
    stripped = head.lstrip(b" \t\r\n")[:4]
    if len(stripped) == 4 and stripped[1] == 0 and stripped[3] == 0 and stripped[0] != 0:
        return _reencode("UTF-16 LE (no byte order mark: a NUL byte after each character)")
    if len(stripped) == 4 and stripped[0] == 0 and stripped[2] == 0 and stripped[1] != 0:
        return _reencode("UTF-16 BE (no byte order mark: a NUL byte before each character)")
    return None


def _reencode(what: str) -> str:
    return (
        f"the file is {what}; cassettes are UTF-8: save it again as UTF-8 "
        "(PowerShell: `Out-File -Encoding utf8`, or `iconv -f UTF-16 -t UTF-8`)"
    )


def legacy_encoding_hint(raw: bytes) -> str:
    """A clause to add to "not valid UTF-8 at byte N" when the line ``raw`` reads as JSON
    in Windows-1252 (a superset of Latin-1's printable characters): the first byte that is
    not UTF-8, the character it would be, and how to mend the file. ``""`` when the line
    is UTF-8 or does not read so, so a line of binary garbage gets no false hint."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
    else:
        return ""
    try:
        json.loads(raw.decode("cp1252"))
    except (UnicodeDecodeError, ValueError):
        return ""
    char = bytes([byte]).decode("cp1252")
    return (
        f" (0x{byte:02X}, {char!r} in Windows-1252): the file looks like Windows-1252 or "
        "Latin-1; save it again as UTF-8 (`iconv -f CP1252 -t UTF-8`)"
    )


def is_conflict_marker(raw: bytes) -> bool:
    """Whether the line ``raw`` is a git merge-conflict marker line."""
    line = raw.rstrip(b"\r\n")
    for marker in _CONFLICT_MARKERS:
        if line.startswith(marker):
            rest = line[len(marker) :]
            # "=======" stands alone; the others may name a side ("<<<<<<< HEAD")
            if marker == b"=======":
                return not rest.strip()
            return not rest or rest[:1] in (b" ", b"\t")
    return False


def foreign_line(raw: bytes) -> str | None:
    """What the line ``raw`` is when it belongs to another kind of file (a pasted diff,
    a Git LFS pointer, an HTML page), else ``None``. Conflict markers are
    ``is_conflict_marker``'s (their message needs the whole conflict)."""
    low = raw.lstrip()[:64].lower()
    for start, what in _FOREIGN_STARTS:
        if low.startswith(start):
            return what
    return None


def conflict_reason(path: Path, lineno: int) -> str:
    """The load error for a file whose line ``lineno`` (1-based) is a conflict marker:
    the marker, the sides and the seqs each side holds, and how to resolve it. Reads the
    file again from the start (an error path only)::

        git merge conflict marker (`<<<<<<< HEAD`): the file holds two versions of seq 2
        (lines 3 and 5); resolve it (keep one side, or re-record) ...
    """
    marker = ""
    sides: list[list[tuple[int, object]]] = [[]]  # per side: (line, seq)
    in_conflict = False
    try:
        with open_regular(path) as fh:
            for n, raw in enumerate(fh, 1):
                if n < lineno:
                    continue
                if is_conflict_marker(raw):
                    text = raw.rstrip(b"\r\n").decode("utf-8", "replace")
                    if n == lineno:
                        marker, in_conflict = text, True
                        continue
                    if text.startswith(">>>>>>>"):
                        break
                    sides.append([])  # ||||||| (the base) or =======
                    continue
                if in_conflict and raw.strip():
                    sides[-1].append((n, _seq_of(raw)))
    except OSError:
        pass
    where = f"git merge conflict marker (`{marker or 'conflict marker'}`)"
    return (
        f"{where}: {_sides_text(sides)}; resolve it (keep one side, or re-record); {_GITATTRIBUTES}"
    )


def _seq_of(raw: bytes) -> object:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record.get("seq") if isinstance(record, dict) else None


def _sides_text(sides: list[list[tuple[int, object]]]) -> str:
    """ "the file holds two versions of seq 2 (lines 3 and 5)", or a count of lines when
    the sides do not hold the same seqs."""
    seqs = [[s for _, s in side if s is not None] for side in sides]
    if len(sides) >= 2 and all(seqs) and all(s == seqs[0] for s in seqs):
        count = {2: "two", 3: "three"}.get(len(sides), str(len(sides)))
        lines = [str(n) for side in sides for n, _ in side]
        listed = ", ".join(map(str, seqs[0]))
        joined = ", ".join(lines[:-1]) + f" and {lines[-1]}" if len(lines) > 1 else lines[0]
        word = "seq" if len(seqs[0]) == 1 else "seqs"
        return f"the file holds {count} versions of {word} {listed} (lines {joined})"
    parts = []
    for i, side in enumerate(sides, 1):
        found = [s for _, s in side if s is not None]
        shown = f"seq {', '.join(map(str, found))}" if found else "no entry"
        parts.append(f"side {i}: {len(side)} line(s), {shown}")
    return "the file holds two sides of a merge (" + "; ".join(parts) + ")"
