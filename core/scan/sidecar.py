"""The secrets of an MCP server-facts sidecar (``RUN.mcp.json``, written by ``mcp record``
beside its cassette): found by ``check``, replaced by ``redact`` and by ``mcp record``
under ``record = true``, the same way as a cassette's.

The sidecar is one JSON document (docs/mcp.md): ``{"format", "version", "cassette",
"server": {"command": [...]}, "exchanges": [{"method", "params", "result" | "error"}]}``.
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

__all__ = ["SIDECAR_SUFFIX", "is_sidecar", "read_sidecar", "redact_sidecar", "sidecar_hits"]

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
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CassetteFormatError(path, None, None, f"not a server-facts file: {exc}") from None
    if not isinstance(doc, dict):
        raise CassetteFormatError(path, None, None, "not a server-facts file: not a JSON object")
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
