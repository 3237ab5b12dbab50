"""The secrets of an MCP server-facts sidecar (``RUN.mcp.json``, written by ``mcp record``
beside its cassette): found by ``check``, replaced by ``redact`` and by ``mcp record``
under ``record = true``, the same way as a cassette's.

The sidecar is one JSON document (docs/mcp.md): ``{"format", "version", "cassette",
"server": {"command": [...]}, "exchanges": [{"method", "params", "result" | "error"}]}``,
or, while ``mcp record`` runs (and after a crash), its journal: one JSON object a line,
read here into that document (``sidecar_doc``).
Every string in it is scanned as a cassette's strings are (``secrets.scan_value``), and the
server's command line also by its flags: the argument after a secret-named flag
(``--api-key VALUE``) and the value of ``--token=VALUE`` are scanned as a value under that
key. The scan never imports the MCP layer: this module knows the document's shape only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from ..format.jsonpath import Part
from .redact import Redactor, _apply_hits, _replace_known
from .redact_config import SecretConfig
from .secrets import SecretHit, scan_value

__all__ = [
    "SIDECAR_SUFFIX",
    "is_sidecar",
    "read_sidecar",
    "redact_sidecar",
    "sidecar_doc",
    "sidecar_hits",
]

#: the name ``mcp record`` gives a cassette's server-facts file: ``RUN.jsonl`` -> ``RUN.mcp.json``
SIDECAR_SUFFIX = ".mcp.json"


def is_sidecar(path: str | Path) -> bool:
    """Whether ``path`` is named as a server-facts sidecar (``*.mcp.json``)."""
    return str(path).endswith(SIDECAR_SUFFIX)


def read_sidecar(path: str | Path) -> dict[str, Any]:
    """The sidecar's JSON document.

    Raises:
        CassetteFormatError: unreadable file, not UTF-8 JSON, or not a JSON object.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise CassetteFormatError.from_os_error(path, exc) from None
    doc = sidecar_doc(raw, path)
    if not isinstance(doc, dict):
        raise CassetteFormatError(path, None, None, "not a server-facts file: not a JSON object")
    return doc


#: the header member that marks a journal (docs/mcp.md, "The sidecar `RUN.mcp.json`")
JOURNAL = "journal"


def sidecar_doc(raw: bytes, path: str | Path) -> Any:
    """The JSON document of a sidecar's bytes: the document itself, or the one a journal
    makes. A journal (what ``mcp record`` appends to while it runs, made the document when
    it ends; a recording cut short leaves it) is one JSON object a line: the header
    (``{"format", "version", "journal": true, "cassette", "server"}``), then one event a
    line, applied in order:

    - ``{"exchange": {...}}``, ``{"kept_aside": {...}}``, ``{"server_message": {...}}``:
      appended to that list;
    - ``{"placed": ANCHOR}``: the ``before`` of every server message since the last
      ``placed`` (the answer forwarded right after them);
    - ``{"host_answer": {"index": i, "result" | "error": ...}}``: the host's answer to
      ``server_messages[i]``.

    A last line cut short (no newline: the recorder was killed while writing it) is left
    out; nothing before it is lost.

    Raises:
        CassetteFormatError: not UTF-8 JSON (``line`` set for a journal's line), an event
            of no known kind.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteFormatError(path, None, None, f"not a server-facts file: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        head, newline, _ = text.partition("\n")
        try:
            doc = json.loads(head) if newline else None
        except json.JSONDecodeError:
            doc = None
        if not (isinstance(doc, dict) and doc.get(JOURNAL) is True):
            raise CassetteFormatError(path, None, None, f"not a server-facts file: {exc}") from None
    if isinstance(doc, dict) and doc.get(JOURNAL) is True:
        return _fold_journal(text, path)
    return doc


def _fold_journal(text: str, path: str | Path) -> dict[str, Any]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    elif len(lines) > 1:
        lines.pop()  # cut short by a crash: its event was never whole
    doc: dict[str, Any] = {k: v for k, v in json.loads(lines[0]).items() if k != JOURNAL}
    doc.setdefault("exchanges", [])
    messages: list[Any] = []
    aside: list[Any] = []
    unplaced = 0  # server_messages from here have no ``before`` yet
    for number, line in enumerate(lines[1:], start=2):
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CassetteFormatError(path, number, None, f"not JSON: {exc}") from None
        kind = next(iter(event), None) if isinstance(event, dict) and len(event) == 1 else None
        value = event[kind] if kind is not None else None
        if kind == "exchange":
            doc["exchanges"].append(value)
        elif kind == "server_message":
            messages.append(value)
        elif kind == "kept_aside":
            aside.append(value)
        elif kind == "placed":
            for message in messages[unplaced:]:
                if isinstance(message, dict):
                    message["before"] = value
            unplaced = len(messages)
        elif kind == "host_answer" and isinstance(value, dict):
            index = value.get("index")
            if not (isinstance(index, int) and 0 <= index < len(messages)):
                raise CassetteFormatError(path, number, "host_answer.index", "no such message")
            if isinstance(messages[index], dict):
                messages[index]["host_answer"] = {k: v for k, v in value.items() if k != "index"}
        else:
            raise CassetteFormatError(
                path,
                number,
                None,
                "expected one of exchange, server_message, kept_aside, placed, host_answer",
            )
    if messages:
        doc["server_messages"] = messages
    if aside:
        doc["kept_aside"] = aside
    return doc


def sidecar_hits(doc: Any, config: SecretConfig | None = None) -> list[SecretHit]:
    """Every secret in a sidecar document (``parts`` from the document's root, such as
    ``("server", "command", 3)`` or ``("exchanges", 1, "result", "contents", 0, "text")``),
    in document order, allowed ones left out."""
    hits = scan_value(doc, (), config)
    seen = {(h.parts, h.secret) for h in hits}
    server = doc.get("server") if isinstance(doc, dict) else None
    command = server.get("command") if isinstance(server, dict) else None
    if not isinstance(command, list):
        return hits
    for i, arg in enumerate(command):
        if not isinstance(arg, str):
            continue
        key, value = _flag_value(command, i)
        if key is None:
            continue
        parts: tuple[Part, ...] = ("server", "command", i)
        for hit in scan_value({key: value}, (), config):
            if (parts, hit.secret) not in seen:
                seen.add((parts, hit.secret))
                hits.append(SecretHit(parts, hit.secret, hit.detector, hit.inner))
    return hits


def _flag_value(command: list[Any], i: int) -> tuple[str | None, str]:
    """The flag a command-line argument is the value of (``--api-key VALUE``: ``api-key``;
    ``--token=VALUE``: ``token``), and the value; ``(None, arg)`` for any other."""
    arg = command[i]
    if arg.startswith("-") and "=" in arg:
        flag, _, value = arg.partition("=")
        return flag.lstrip("-") or None, value
    prev = command[i - 1] if i > 0 else None
    if (
        isinstance(prev, str)
        and prev.startswith("-")
        and "=" not in prev
        and not arg.startswith("-")
    ):
        return str(prev).lstrip("-") or None, arg
    return None, arg


def redact_sidecar(
    doc: Any, redactor: Redactor | None = None, known: frozenset[str] = frozenset()
) -> tuple[Any, int]:
    """``doc`` with every secret (``sidecar_hits`` under the redactor's config, and the
    ``known`` secrets of its cassette) replaced by its placeholder, and how many hits were
    replaced; ``doc`` itself when nothing was. Never changes ``doc`` in place."""
    redactor = redactor or Redactor()
    hits = sidecar_hits(doc, redactor.config)
    out = _apply_hits(doc, 0, hits) if hits else doc
    every = known | {h.secret for h in hits if h.secret}
    if every:
        out = _replace_known(out, frozenset(every))
    return out, len(hits)
