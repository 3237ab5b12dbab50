"""Which format a file is in, from its content (the name is never trusted).

Rules, in order:

1. ``sniff``: a file whose first non-blank line is a JSON object with ``seq``, ``tool``
   or ``args`` is a cassette (JSON Lines, format v1), and so is an empty file. Only that
   line is read, so the cassette path stays the fast lazy ``load``.
2. ``import_file``: a zip archive is an inspect_ai ``.eval`` log; a whole-file JSON
   document is tau-bench (a list of runs with ``task_id`` and ``traj``), an OpenAI chat
   log (a list of messages, or ``{"messages": [...]}``), an inspect_ai log (``version``,
   ``eval``, ``samples``) or a VCR cassette in JSON (``interactions``); JSON Lines whose
   first line is a message (``role``) is a chat log; anything else is parsed as YAML and
   must be a VCR cassette (``interactions``).

A file that matches none raises ``CassetteFormatError`` listing every format tried and
why each failed. ``fmt`` forces one format and reports only its own error.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from ..format.foreign_text import encoding_problem
from ..format.jsontext import UTF8_BOM, json_error_text
from ..format.readable import check_regular, open_regular, read_regular
from . import Imported, _inspect_ai, _openai_chat, _tau_bench, _vcr, canonical_format, loads_json

_ZIP_MAGIC = b"PK\x03\x04"
_CASSETTE_KEYS = ("seq", "tool", "args")
_FIRST_LINE_LIMIT = 64 * 1024 * 1024
#: a top-level ``interactions:`` key at the start of a line: YAML meant as a VCR cassette
_VCR_TOP_KEY = re.compile(rb"(?m)^interactions[ \t]*:")

_cache: OrderedDict[tuple[str, int, int, str | None], Imported] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 4


def sniff(path: str | Path) -> str | None:
    """``"cassette"`` when ``path`` is a cassette file (or empty), ``"openai-jsonl"`` for
    chat messages as JSON Lines, else ``None`` (another format: see ``import_file``).
    Reads the first non-blank line only.

    Raises:
        CassetteFormatError: the file is missing, a directory or unreadable.
    """
    p = Path(path)
    try:
        with open_regular(p) as fh:
            head = fh.read(64)
            if head.startswith(_ZIP_MAGIC):
                return None
            other_encoding = encoding_problem(head)
            if other_encoding is not None:  # UTF-16 from PowerShell: say so, not "no format"
                raise CassetteFormatError(p, 1, None, other_encoding)
            fh.seek(0)
            while True:
                line = fh.readline(_FIRST_LINE_LIMIT)
                if not line:
                    return "cassette"  # empty or only blank lines: an empty cassette
                if line.strip():
                    break
            if len(line) == _FIRST_LINE_LIMIT and not line.endswith(b"\n"):
                # a first line longer than the limit (a 100 MB response): when it is a
                # JSON object, read it whole, as the loader will; else it is no cassette
                if line.lstrip().removeprefix(UTF8_BOM)[:1] != b"{":
                    return None
                line += fh.readline()
    except OSError as exc:
        raise CassetteFormatError.from_os_error(p, exc) from None
    try:
        if len(line) >= _FIRST_LINE_LIMIT:
            raise ValueError("a long line: read its keys without its response")
        first = loads_json(line)
    except (ValueError, UnicodeDecodeError):
        # A cassette line whose response is broken (bad JSON or UTF-8 there) is still a
        # cassette: the loader then names the line and the field.
        from ..format.lines import parse_header

        try:
            first, _ = parse_header(line.removeprefix(UTF8_BOM))
        except UnicodeDecodeError:
            # a cassette saved in Windows-1252: the loader names the line and the byte
            first = _read_as_cp1252(line)
        except ValueError:
            return None
        return "cassette" if isinstance(first, dict) and "seq" in first else None
    if isinstance(first, dict):
        if any(k in first for k in _CASSETTE_KEYS):
            return "cassette"
        if isinstance(first.get("role"), str) and not line.rstrip().endswith(b"]"):
            return "openai-jsonl"
    return None


def _read_as_cp1252(line: bytes) -> Any:
    """The first line read as Windows-1252 JSON, or ``None``."""
    try:
        return loads_json(line.decode("cp1252"))
    except (UnicodeDecodeError, ValueError):
        return None


def import_file(path: str | Path, fmt: str | None = None) -> Imported:
    """Read ``path`` (not a cassette: see ``sniff``) with an importer.

    Parsed files are cached by path, size and modification time (the last four), so the
    app switching between runs of one tau-bench file parses it once.

    Args:
        path: the file.
        fmt: a format name (see ``importers.FORMATS``) to force; ``None`` detects it.

    Raises:
        CassetteFormatError: unreadable, or none of the formats fits (the reason lists
            each format tried and why it failed), or the forced format does not fit.
        ValueError: ``fmt`` is not a known format name.
    """
    p = Path(path)
    forced = canonical_format(fmt) if fmt is not None else None
    st = check_regular(p)
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size, forced)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    imported = _read(p, forced)
    with _cache_lock:
        _cache[key] = imported
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return imported


def _read_bytes(p: Path) -> bytes:
    return read_regular(p)


def _read(p: Path, forced: str | None) -> Imported:
    data = _read_bytes(p)
    if forced is not None:
        return _read_as(forced, data, p)
    if data.startswith(_ZIP_MAGIC):
        try:
            return _inspect_ai.read_eval(data, p)
        except CassetteFormatError as exc:
            raise _none_fits(p, [("inspect", exc.reason)]) from None
    try:
        doc = loads_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return _read_text(data, p, f"not one JSON document ({_short(exc)})")
    return _read_document(doc, p)


def _read_document(doc: Any, p: Path) -> Imported:
    """A file holding one JSON document: the first importer it looks like reads it."""
    tried = [("cassette", "a JSON document, not JSON Lines with seq/tool/args")]
    for name, module in (
        ("tau-bench", _tau_bench),
        ("openai", _openai_chat),
        ("inspect", _inspect_ai),
    ):
        why = module.looks_like(doc)
        if why is None:
            return module.read(doc, p)
        tried.append((name, why))
    why = _vcr.looks_like(doc)
    if why is None:
        return _vcr.read(doc, p)
    tried.append(("vcr", why))
    raise _none_fits(p, tried)


def _read_text(data: bytes, p: Path, json_error: str) -> Imported:
    """A file that is not one JSON document (``json_error`` says why): chat JSON Lines,
    else a VCR cassette in YAML, else a cassette with a broken line."""
    kind = sniff(p)
    if kind == "openai-jsonl":
        return _openai_chat.read_jsonl(data, p)
    tried = [("cassette", "the first line is not a JSON object with seq/tool/args")]
    for name in ("tau-bench", "openai", "inspect"):
        tried.append((name, json_error))
    try:
        return _vcr.read_file(data, p)
    except CassetteFormatError as exc:
        if _VCR_TOP_KEY.search(data):
            raise  # YAML with a top-level `interactions:`: a VCR cassette with a problem
        where = f"line {exc.line}: " if exc.line else ""
        tried.append(("vcr", where + exc.reason))
    if data.lstrip()[:1] == b"{":
        _refuse_as_cassette(p, tried)
    raise _none_fits(p, tried)


def _refuse_as_cassette(p: Path, tried: list[tuple[str, str]]) -> None:
    """JSON Lines with a broken line: raise the cassette loader's error (it names the
    line), with what else was tried. Returns when the file loads as a cassette."""
    from ..format.cassette import load

    try:
        load(p)
    except CassetteFormatError as exc:
        others = "; ".join(f"{n}: {w}" for n, w in tried if n != "cassette")
        raise CassetteFormatError(
            p,
            exc.line,
            exc.field,
            f"{exc.reason} (read as a cassette; also tried {others})",
            truncated=exc.truncated,
        ) from None


def _read_as(fmt: str, data: bytes, p: Path) -> Imported:
    if fmt == "vcr":
        if data.lstrip()[:1] in (b"{", b"["):
            try:
                return _vcr.read(loads_json(data), p)
            except ValueError:
                pass
        return _vcr.read_file(data, p)
    if fmt == "inspect" and data.startswith(_ZIP_MAGIC):
        return _inspect_ai.read_eval(data, p)
    if fmt == "cassette":  # callers load cassettes themselves; kept for completeness
        raise CassetteFormatError(p, None, None, "a cassette is opened with load(), not imported")
    try:
        doc = loads_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        if fmt == "openai":
            return _openai_chat.read_jsonl(data, p)
        raise CassetteFormatError(
            p,
            None,
            None,
            f"read as {fmt}: not valid JSON ({json_error_text(exc, line=True)[:160]})",
        ) from None
    module = {"tau-bench": _tau_bench, "openai": _openai_chat, "inspect": _inspect_ai}[fmt]
    return module.read(doc, p)


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


def _none_fits(p: Path, tried: list[tuple[str, str]]) -> CassetteFormatError:
    grouped: dict[str, list[str]] = {}
    for name, why in tried:
        grouped.setdefault(why, []).append(name)
    listed = "; ".join(f"{', '.join(names)}: {why}" for why, names in grouped.items())
    return CassetteFormatError(
        p,
        None,
        None,
        f"not a known format (tried {', '.join(n for n, _ in tried)}) -- {listed}; "
        "pass --from FORMAT to force one",
    )
