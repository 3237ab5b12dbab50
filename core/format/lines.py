"""One cassette line: read (whole, or without its response), checked against format v1,
and what is wrong with it put in words (docs/format.md, "The cassette format,
version 1").

The loader and the lazy view read lines through these; ``importers.detect`` reads a first
line whose response may be broken with ``parse_header``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .depth import MAX_DEPTH
from .entry import KNOWN_FIELDS, Entry
from .errors import CassetteFormatError
from .foreign_text import legacy_encoding_hint
from .jsontext import (
    DuplicateKey,
    JSONTooDeep,
    NumberTooLong,
    json_error_text,
    loads_std,
    parse_json_checked,
)

#: the largest seq (the index keeps seqs as 64-bit integers)
MAX_SEQ = 2**63 - 1

_RESPONSE_KEY = b'"response":'
_SEQ_KEY = b'"seq":'


def parse_header(raw: bytes) -> tuple[Any, bool]:
    """Parse one line without parsing its response, when that is safe (format detection
    reads a first line whose response may be broken this way; the loader reads headers
    with a msgspec struct first).

    The response value is cut out and replaced by ``null`` before parsing, for the two
    layouts writers produce: sorted keys (``..."response": R, "seq": N, "tool": T}``) and
    response last (``..."response": R}``). The cut is used only when the rest parses as an
    object whose ``response`` is that ``null``, the cut text holds no ``"error":`` key and
    the line ends with a newline (a last line cut mid-write is always parsed in full).
    The response itself is parsed, and checked, when the entry is read (a bad one raises
    ``CassetteFormatError`` then, naming the line and the field ``response``). Otherwise
    the whole line is parsed. Returns ``(record, finite)``: ``finite`` when the record
    certainly holds no ``NaN``/``Infinity`` (see ``jsontext.parse_json_checked``).
    """
    start = raw.find(_RESPONSE_KEY)
    if start > 0 and raw[-1:] == b"\n":
        vs = start + len(_RESPONSE_KEY)
        close = len(raw) - 1
        while close > vs and raw[close] in b" \t\r\n":
            close -= 1
        if raw[close] == 0x7D:  # "}"
            for end in _response_ends(raw, vs, close):
                # a cut that would hide another key (error, args_digest, ...) after the
                # response: parse the whole line instead
                cut = raw[vs:end]
                if b'"error":' in cut or b'"args_digest":' in cut:
                    break
                try:
                    record, exotic = parse_json_checked(raw[:vs] + b"null" + raw[end : close + 1])
                except DuplicateKey:
                    break  # named by the full parse below
                except ValueError:
                    continue
                if _is_header(record):
                    return record, not exotic
    record, exotic = parse_json_checked(raw)
    return record, not exotic


def _response_ends(raw: bytes, vs: int, close: int) -> list[int]:
    """Where the response that starts at ``vs`` may end, in the order to try: before the
    ``, "seq":`` that follows it (sorted keys), then at the line's closing brace
    ``close`` (response last)."""
    ends = []
    j = raw.rfind(_SEQ_KEY, vs, close)
    if j > vs:
        k = raw.rfind(b",", vs, j)
        if k > vs and not raw[k + 1 : j].strip():
            ends.append(k)
    ends.append(close)
    return ends


def _is_header(record: Any) -> bool:
    """Whether ``record`` is a line with its response cut out: an object with ``seq``,
    ``tool``, ``args`` and the ``null`` put in the response's place."""
    return (
        isinstance(record, dict)
        and record.get("response", 0) is None
        and "seq" in record
        and "tool" in record
        and "args" in record
    )


def json_type_name(value: Any) -> str:
    """The JSON name of `value`'s type (`object`, `integer`, `number`, `null`, ...)."""
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def validate_record(record: Any, path: str | Path | None, line: int | None) -> None:
    """Check one parsed line against format v1; raise ``CassetteFormatError`` naming the
    file, the line and the field. Rules: an object; ``seq`` a positive integer (at most
    ``MAX_SEQ``); ``tool`` a non-empty string; ``args`` present; exactly one of
    ``response``/``error``; ``error`` an object with string ``type`` and ``message``;
    ``args_digest`` a string when present."""

    def bad(field: str | None, reason: str) -> CassetteFormatError:
        return CassetteFormatError(path, line, field, reason)

    if not isinstance(record, dict):
        raise bad(None, f"not a JSON object (got {json_type_name(record)})")
    for name in ("seq", "tool", "args"):
        if name not in record:
            raise bad(name, "missing")
    seq = record["seq"]
    if type(seq) is not int or seq < 1:
        raise bad("seq", f"expected a positive integer, got {json_type_name(seq)} {seq!r:.40}")
    if seq > MAX_SEQ:
        raise bad("seq", f"{seq!r:.40} is too large: a seq is at most {MAX_SEQ} (2**63 - 1)")
    tool = record["tool"]
    if not isinstance(tool, str) or not tool:
        raise bad("tool", f"expected a non-empty string, got {json_type_name(tool)} {tool!r:.40}")
    has_response, has_error = "response" in record, "error" in record
    if has_response and has_error:
        raise bad("response", "both 'response' and 'error' are present; keep exactly one")
    if not has_response and not has_error:
        raise bad("response", "neither 'response' nor 'error' is present; one is required")
    if has_error:
        err = record["error"]
        if not isinstance(err, dict):
            raise bad("error", f"expected an object {{type, message}}, got {json_type_name(err)}")
        for key in ("type", "message"):
            if not isinstance(err.get(key), str):
                raise bad("error", f"'{key}' must be a string")
    if "args_digest" in record and not isinstance(record["args_digest"], str):
        raise bad("args_digest", f"expected a string, got {json_type_name(record['args_digest'])}")


def entry_from_record(record: dict[str, Any], line: int | None = None) -> Entry:
    """Build an ``Entry`` from a validated record (see ``validate_record``)."""
    # the frozen dataclass's __init__ sets each field through object.__setattr__ (~3 us an
    # entry, on every replayed call): its fields set in one step instead, the same object
    entry = _new_entry(Entry)
    entry.__dict__.update(
        seq=record["seq"],
        tool=record["tool"],
        args=record["args"],
        response=record.get("response"),
        error=record.get("error"),
        args_digest=record.get("args_digest"),
        # most lines hold the known fields only: a set test in C, no loop over them
        extra=(
            {}
            if record.keys() <= KNOWN_FIELDS
            else {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
        ),
        line=line,
    )
    return entry


_new_entry = object.__new__


def error_field(exc: Exception, raw: bytes = b"") -> str | None:
    """The field a parse error of the line ``raw`` is in, when it can be told: the
    top-level key holding a repeated key (or the repeated key itself, at the top level),
    the one holding the nesting past the limit or the integer past the digit limit, or the
    one whose key or value holds bytes that are not UTF-8 (``_bad_utf8_field``)."""
    if isinstance(exc, DuplicateKey):
        return str(exc.parts[0]) if exc.parts else exc.key
    if raw and isinstance(exc, JSONTooDeep):
        return _too_deep_field(raw)
    if raw and isinstance(exc, NumberTooLong):
        return _long_number_field(raw, exc.limit)
    if raw and not raw.isascii():
        return _bad_utf8_field(raw)
    return None


#: a JSON text's strings (a key, with the colon after it, in group 1) and its brackets
_TOKENS = re.compile(rb'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:|"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def _too_deep_field(raw: bytes) -> str | None:
    """The top-level key of the line ``raw`` under which it nests past ``MAX_DEPTH``
    levels, else ``None``. An error path only: one regex pass over the line."""
    return _top_key_of(raw, _TOKENS, MAX_DEPTH)


def _key_text(key: bytes | None) -> str | None:
    """A key as ``_TOKENS`` found it (its text between the quotes), unescaped."""
    if key is None:
        return None
    try:
        return str(json.loads(b'"' + key + b'"'))
    except ValueError:
        return key.decode("utf-8", "replace")


def _long_number_field(raw: bytes, limit: int) -> str | None:
    """The top-level key of the line ``raw`` whose value holds an integer of more than
    ``limit`` digits (``NumberTooLong``), else ``None`` (the line itself is one). An
    error path only: one regex pass over the line, strings skipped as ``_TOKENS`` does."""
    # an integer, not a fraction's or an exponent's digits (floats have no digit limit)
    tokens = re.compile(_TOKENS.pattern + rb"|(?<![.eE+\-\d])-?\d{%d,}(?![.eE\d])" % (limit + 1))
    return _top_key_of(raw, tokens, None)


def _top_key_of(raw: bytes, tokens: re.Pattern[bytes], max_depth: int | None) -> str | None:
    """The top-level key of the line ``raw`` holding the first place nested past
    ``max_depth`` levels, or the first match of ``tokens`` that is not one of
    ``_TOKENS``' (strings and brackets); ``None`` when there is none, or no key."""
    depth = 0
    key: bytes | None = None
    for m in tokens.finditer(raw):
        first = m.group(0)[0]
        if first == 0x22:  # a string: a key of the top-level object when depth is 1
            if depth == 1 and m.group(1) is not None:
                key = m.group(1)
        elif first in (0x5B, 0x7B):  # [ {
            depth += 1
            if max_depth is not None and depth > max_depth:
                return _key_text(key)
        elif first in (0x5D, 0x7D):  # ] }
            depth -= 1
        else:  # the token looked for
            return _key_text(key) if depth >= 1 else None
    return None


#: the characters ``surrogateescape`` decodes bytes that are not UTF-8 to
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _bad_utf8_field(raw: bytes) -> str | None:
    """The first top-level key of the line ``raw`` whose key or value holds bytes that
    are not UTF-8, when the line is otherwise a JSON object; else ``None``. An error path
    only: the line is decoded and parsed once more."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return None
    try:
        doc = json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    for key, value in doc.items():
        text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        if _ESCAPED_BYTE.search(key) or _ESCAPED_BYTE.search(text):
            return _ESCAPED_BYTE.sub("\ufffd", key)
    return None


def cut_mid_write(raw: bytes) -> bool:
    """Whether a bad line is a last line cut mid-write: no line end, and the JSON runs out
    before it is complete (an unterminated string, a missing close, a value expected at
    the end). A whole last line with a bad value inside is not cut (a tester saw it so
    called)."""
    if raw.endswith(b"\n"):
        return False
    text = raw.rstrip(b"\r\n")
    try:
        loads_std(text)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
    except (ValueError, UnicodeDecodeError):
        return False
    return False


def json_reason(exc: Exception, raw: bytes) -> str:
    """What is wrong with the line ``raw`` that raised ``exc`` when parsed, in words: the
    standard library's message (with its column) for bad JSON, the byte of bad UTF-8."""
    if isinstance(exc, DuplicateKey):
        return f"not valid JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 at byte {exc.start}{legacy_encoding_hint(raw)}"
    if isinstance(exc, JSONTooDeep):
        return f"not valid JSON: {exc}"
    if isinstance(exc, NumberTooLong):
        return f"not readable JSON: {exc}"
    try:
        # without its line end: a line cut inside a string is an unterminated string,
        # not a control character (the newline) inside one
        loads_std(raw.rstrip(b"\r\n"))
    except JSONTooDeep as deep:
        return f"not valid JSON: {deep}"
    except json.JSONDecodeError as std:
        return f"not valid JSON: {json_error_text(std)}"
    except UnicodeDecodeError as ude:
        return f"not valid UTF-8 at byte {ude.start}{legacy_encoding_hint(raw)}"
    except ValueError as other:  # NumberTooLong, when ``exc`` came from elsewhere
        return f"not readable JSON: {other}"
    return f"not valid JSON: {exc}"
