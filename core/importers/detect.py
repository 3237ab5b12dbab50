"""Which format a file is in, from its content (the name is never trusted).

Rules, in order:

1. ``sniff``: a file whose first non-blank line is a JSON object with ``seq``, ``tool``
   or ``args`` is a cassette (JSON Lines, format v1), and so is an empty file. Only that
   line is read, so the cassette path stays the fast lazy ``load``.
2. ``import_file``: a zip archive is an inspect_ai ``.eval`` log; a whole-file JSON
   document is tau-bench (a list of runs with ``task_id`` and ``traj``), an OpenAI chat
   log (a list of messages, or ``{"messages": [...]}``), an inspect_ai log (``version``,
   ``eval``, ``samples``) or a VCR cassette in JSON (``interactions``); JSON Lines whose
   first line is a message (``role``) is a chat log; then the agent frameworks' files
   (``_DOCUMENT_READERS``: Anthropic Messages, Responses items, pydantic-ai, LangChain,
   smolagents, OpenTelemetry spans, Agents SDK traces), also as a stream of JSON values
   (JSON Lines, objects back to back: ``_STREAM_FORMATS``); anything else is parsed as
   YAML and must be a VCR cassette (``interactions``). A format that matched but made no
   entry from bytes that show tool calls is an error (``_not_empty``).

A file that matches none raises ``CassetteFormatError`` listing every format tried and
why each failed. ``fmt`` forces one format and reports only its own error.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from ..format.foreign_text import encoding_problem, is_conflict_marker
from ..format.jsontext import UTF8_BOM, NumberTooLong, json_error_text
from ..format.readable import check_regular, open_regular, read_regular
from . import (
    SHAPE_ERRORS,
    Imported,
    _agents_trace,
    _anthropic,
    _inspect_ai,
    _langchain,
    _openai_chat,
    _otel,
    _pydantic_ai,
    _responses,
    _smolagents,
    _tau_bench,
    _vcr,
    canonical_format,
    loads_json,
    shape_error,
)

_ZIP_MAGIC = b"PK\x03\x04"
_CASSETTE_KEYS = ("seq", "tool", "args")
_FIRST_LINE_LIMIT = 64 * 1024 * 1024
#: a top-level ``interactions:`` key at the start of a line: YAML meant as a VCR cassette
_VCR_TOP_KEY = re.compile(rb"(?m)^interactions[ \t]*:")

#: the importers of a JSON document, in the order detection tries them (``vcr`` after them)
_DOCUMENT_READERS: tuple[tuple[str, Any], ...] = (
    ("tau-bench", _tau_bench),
    ("openai", _openai_chat),
    ("inspect", _inspect_ai),
    ("anthropic", _anthropic),
    ("openai-responses", _responses),
    ("pydantic-ai", _pydantic_ai),
    ("langchain", _langchain),
    ("smolagents", _smolagents),
    ("otel", _otel),
    ("openai-agents", _agents_trace),
)
#: the formats that also come as a stream of JSON values (JSON Lines, or objects one after
#: another as OpenTelemetry's ConsoleSpanExporter prints them), read as a list
_STREAM_FORMATS = ("openai", "openai-responses", "langchain", "otel", "openai-agents")
#: what tool calls look like in the bytes of any format this project knows: a file that
#: holds one never imports as 0 entries (issue 25, bugcase 50)
_CALL_MARKS = re.compile(
    rb'"tool_calls"\s*:\s*\[\s*\{|"type"\s*:\s*"(?:tool_use|function_call|tool_call)"'
    rb'|"(?:functionCall|toolUse)"\s*:\s*\{|"part_kind"\s*:\s*"tool-call"'
    rb'|"execute_tool"'
)

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
            if is_conflict_marker(line):
                # a conflicted file (`<<<<<<< HEAD` first): the loader names the marker and
                # the sides, not "not a known format"
                return "cassette"
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
        except NumberTooLong:
            # valid JSON but for an integer past the digit limit: its keys still say
            # whether it is a cassette, and the loader names the line and the field
            first = _read_long_integers(line)
        except ValueError:
            return None
        return "cassette" if isinstance(first, dict) and "seq" in first else None
    if isinstance(first, dict):
        if any(k in first for k in _CASSETTE_KEYS):
            return "cassette"
        if isinstance(first.get("role"), str) and not line.rstrip().endswith(b"]"):
            return "openai-jsonl"
    return None


def _read_long_integers(line: bytes) -> Any:
    """The first line read with every integer as a float (no digit limit), or ``None``."""
    try:
        return json.loads(line.removeprefix(UTF8_BOM), parse_int=float)
    except (UnicodeDecodeError, ValueError, RecursionError):
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
    try:
        imported = _read(p, forced)
    except SHAPE_ERRORS as exc:
        raise shape_error(p, forced, exc) from None
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
    return _read_document(doc, p, data)


def _read_document(doc: Any, p: Path, data: bytes) -> Imported:
    """A file holding one JSON document: the first importer it looks like reads it."""
    tried = [("cassette", "a JSON document, not JSON Lines with seq/tool/args")]
    for name, module in _DOCUMENT_READERS:
        why = module.looks_like(doc)
        if why is None:
            return _not_empty(module.read(doc, p), data, tried)
        tried.append((name, why))
    why = _vcr.looks_like(doc)
    if why is None:
        return _not_empty(_vcr.read(doc, p), data, tried)
    tried.append(("vcr", why))
    raise _none_fits(p, tried, data)


def _read_text(data: bytes, p: Path, json_error: str) -> Imported:
    """A file that is not one JSON document (``json_error`` says why): a stream of JSON
    values (JSON Lines of chat messages, Responses items, LangChain messages, spans),
    else a VCR cassette in YAML, else a cassette with a broken line."""
    kind = sniff(p)
    tried = [("cassette", "the first line is not a JSON object with seq/tool/args")]
    stream = _json_stream(data)
    if stream is not None:
        readers = dict(_DOCUMENT_READERS)
        for name in _STREAM_FORMATS:
            why = readers[name].looks_like(stream)
            if why is None:
                return _not_empty(readers[name].read(stream, p), data, tried)
            tried.append((name, f"as a stream of JSON values: {why}"))
        if kind == "openai-jsonl":
            return _openai_chat.read_jsonl(data, p)
    elif kind == "openai-jsonl":
        return _openai_chat.read_jsonl(data, p)  # names the line that is not JSON
    for name, _ in _DOCUMENT_READERS:
        if name not in _STREAM_FORMATS or stream is None:
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
    raise _none_fits(p, tried, data)


def _json_stream(data: bytes) -> list[Any] | None:
    """The JSON values of ``data`` one after another (JSON Lines, or pretty-printed
    objects back to back), or ``None`` when it is not such a stream (or holds one value)."""
    import json

    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at >= len(text):
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        values.append(value)
    return values if len(values) > 1 else None


def _not_empty(imported: Imported, data: bytes, tried: list[tuple[str, str]]) -> Imported:
    """``imported``, unless it made no entry from a file that holds tool calls (a format
    read as another one drops them: bugcase 50): then an error saying what was found and
    which formats were tried."""
    if any(run.calls for run in imported.runs) or imported.metadata.get("calls_not_entries"):
        return imported  # calls read (or, like smolagents' final_answer, read as no entry)
    found = _CALL_MARKS.search(data)
    if found is None:
        return imported
    mark = found.group(0).decode("utf-8", "replace")
    names = ", ".join([*(n for n, _ in tried), imported.fmt])
    raise CassetteFormatError(
        imported.path,
        None,
        None,
        f"read as {imported.fmt} it holds 0 tool calls, but the file has tool calls "
        f"({mark!s:.60} at byte {found.start()}) in a shape none of the importers reads "
        f"(tried {names}); pass --from FORMAT to force one",
    )


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
    module = dict(_DOCUMENT_READERS)[fmt]
    try:
        doc = loads_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        stream = _json_stream(data) if fmt in _STREAM_FORMATS else None
        if stream is not None:
            return _not_empty(module.read(stream, p), data, [])
        if fmt == "openai":
            return _openai_chat.read_jsonl(data, p)
        raise CassetteFormatError(
            p,
            None,
            None,
            f"read as {fmt}: not valid JSON ({json_error_text(exc, line=True)[:160]})",
        ) from None
    return _not_empty(module.read(doc, p), data, [])


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


def _none_fits(p: Path, tried: list[tuple[str, str]], data: bytes = b"") -> CassetteFormatError:
    """The error for a file no format reads: each format tried and why it failed, and
    the first tool call seen in ``data`` (so a file of calls in an unknown shape says so)."""
    found = _CALL_MARKS.search(data)
    seen = ""
    if found is not None:
        mark = found.group(0).decode("utf-8", "replace")
        seen = f"it holds tool calls ({mark:.60} at byte {found.start()}) but "
    grouped: dict[str, list[str]] = {}
    for name, why in tried:
        grouped.setdefault(why, []).append(name)
    listed = "; ".join(f"{', '.join(names)}: {why}" for why, names in grouped.items())
    return CassetteFormatError(
        p,
        None,
        None,
        f"{seen}not a known format (tried {', '.join(n for n, _ in tried)}) -- {listed}; "
        "pass --from FORMAT to force one",
    )
