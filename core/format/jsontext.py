"""The engine's one JSON parser (``parse_json``), and sorted JSON bytes for hashing.

Every cassette line, header or whole, is read by ``parse_json`` (the loader, entry access,
the outcome index, alignment, lint and the app through them). Its rules:

- integers are exact at any size (``2**64 + 1`` stays an ``int``; a 24-digit id is not
  rounded to a float);
- ``NaN``, ``Infinity`` and ``-Infinity`` (which Python's ``json`` writes) are read as the
  floats they name, never as ``null``, and numbers too large for a float read as infinity
  like the standard library does;
- one depth limit: nesting past ``depth.MAX_DEPTH`` (600 levels) raises ``JSONTooDeep``,
  never ``RecursionError``, and whatever the depth of the caller's stack;
- a key repeated in one object raises ``DuplicateKey`` naming the key and its path (the
  JSON spec leaves it undefined and every reader keeps another one);
- an integer longer than Python converts from text (``sys.get_int_max_str_digits()``,
  4300 digits) raises ``NumberTooLong`` (docs/format.md: the format's limit);
- every failure is a ``ValueError`` (``json.JSONDecodeError``, ``JSONTooDeep``,
  ``DuplicateKey``, ``NumberTooLong``, or a ``UnicodeDecodeError``), which the callers turn into a
  ``CassetteFormatError`` naming the file, the line and the field.

msgspec reads the common case (exact big integers, fast); the standard library reads what
msgspec refuses (non-finite numbers, lone surrogate escapes) and gives the error messages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from .depth import MAX_DEPTH, depth_of
from .jsonpath import Part, format_path

#: A UTF-8 byte order mark, which some editors write at the start of a text file.
UTF8_BOM = b"\xef\xbb\xbf"


class JSONTooDeep(ValueError):
    """JSON nested deeper than the parser can follow."""

    def __init__(self) -> None:
        super().__init__(f"nested too deeply (more than {MAX_DEPTH} levels of arrays/objects)")
        self.msg = str(self)


class NumberTooLong(ValueError):
    """An integer with more digits than Python converts from text (its
    ``int_max_str_digits``: 4300 unless changed), the format's limit (docs/format.md).
    Raised instead of the standard library's plain ``ValueError``, whose advice
    (``sys.set_int_max_str_digits()``) is the interpreter's, not the user's.

    Attributes:
        digits: how many digits the integer has, when the message said (else ``None``).
        limit: the limit in force.
    """

    def __init__(self, digits: int | None, limit: int) -> None:
        self.digits, self.limit = digits, limit
        has = f"of {digits} digits " if digits is not None else ""
        super().__init__(
            f"an integer {has}is too long: a number in a cassette has at most {limit} digits"
            " (write a longer one as a string)"
        )
        self.msg = str(self)


#: the standard library's error for an integer past ``int_max_str_digits``
_DIGITS_LIMIT = re.compile(r"^Exceeds the limit \((\d+) digits\) .*?value has (\d+) digits")


def _number_too_long(exc: ValueError) -> NumberTooLong | None:
    """``exc`` as a ``NumberTooLong`` when it is Python's digit-limit error, else ``None``."""
    if type(exc) is not ValueError:  # a JSONDecodeError, ours: not the digit limit
        return None
    m = _DIGITS_LIMIT.match(str(exc))
    if m is None:
        return None
    return NumberTooLong(int(m.group(2)), int(m.group(1)))


class DuplicateKey(ValueError):
    """An object in the JSON text holds the same key twice.

    Attributes:
        key: the repeated key.
        parts: the path of the object holding it, as keys and indexes (``()``: the top).
        path: that path formatted (``$.args``).
    """

    def __init__(self, key: str, parts: tuple[Part, ...]) -> None:
        self.key = key
        self.parts = parts
        self.path = format_path(parts)
        where = "the top-level object" if not parts else self.path
        super().__init__(f"duplicate key {key!r} in {where}")
        self.msg = str(self)


def sorted_json_bytes(value: Any, *, exact_floats: bool = True) -> bytes:
    """``value`` as compact JSON with sorted keys, as UTF-8 bytes: orjson's output, or the
    standard library's (``json.dumps(value, sort_keys=True)``) for what orjson cannot write
    exactly (integers past 64 bits, nesting past 254 levels, and ``NaN``/``Infinity``,
    which orjson writes as ``null``). For in-process equality and hashing only: it is not
    the canonical JSON of the args digest (see ``digest.canonical_json``).

    ``exact_floats=False`` promises that ``value`` holds no non-finite float (a value
    ``parse_json_checked`` read with msgspec), which skips the check for them.

    Raises:
        TypeError, ValueError: ``value`` is not JSON data.
    """
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers past 64 bits, too deep
        return json.dumps(value, sort_keys=True).encode("utf-8", "backslashreplace")
    if exact_floats and out.find(b"null") >= 0 and has_non_finite(value):
        return json.dumps(value, sort_keys=True).encode("utf-8", "backslashreplace")
    return out


def has_non_finite(value: Any) -> bool:
    """Whether ``value`` holds a ``NaN`` or an infinity anywhere (any depth)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    isfinite = math.isfinite
    while stack:
        node = pop()
        kind = type(node)
        if kind is float:
            if not isfinite(node):
                return True
        elif kind is dict:
            extend(node.values())
        elif kind is list:
            extend(node)
        elif isinstance(node, float):
            if not isfinite(node):
                return True
        elif isinstance(node, dict):
            extend(node.values())
        elif isinstance(node, list | tuple):
            extend(node)
    return False


_decode: Callable[[bytes | str], Any] = msgspec.json.decode
_encode: Callable[[Any], bytes] = msgspec.json.encode
_orjson_encode: Callable[[Any], bytes] = orjson.dumps


def parse_json(raw: bytes | str) -> Any:
    """Parse one JSON text (a cassette line, a header, a response) by the engine's rules
    (see the module docstring).

    Raises:
        ValueError: not valid JSON (``json.JSONDecodeError``), nested too deeply
            (``JSONTooDeep``), a repeated key (``DuplicateKey``), not UTF-8
            (``UnicodeDecodeError``), or an integer past Python's 4300-digit limit.
    """
    return parse_json_checked(raw)[0]


def parse_json_checked(raw: bytes | str) -> tuple[Any, bool]:
    """``(parse_json(raw), may_hold_non_finite)``: the second is ``False`` when the value
    certainly holds no ``NaN``/``Infinity`` (msgspec read it), so hashing it can skip the
    check (``sorted_json_bytes(value, exact_floats=False)``)."""
    try:
        value = _decode(raw)
    except msgspec.DecodeError:
        value = _parse_std(raw)
        _check_depth(raw, value)
        return value, True
    except RecursionError:
        raise JSONTooDeep() from None
    if isinstance(raw, bytes):
        try:
            # orjson writes at most 254 levels: what it writes needs no depth check
            # (``MAX_DEPTH`` is 600), and its output is the re-encoding the repeated-key
            # check compares or counts
            encoded: bytes | None = _orjson_encode(value)
        except TypeError:  # deeper than orjson goes, or an integer past 64 bits
            encoded = None
            if len(raw) > _SHALLOW_LEN:  # else too short to nest past the limit
                _check_depth(raw, value)
        if encoded is not None and raw.startswith(encoded):
            # the line is the re-encoding (then its end of line): each of its objects is
            # written from a dict, whose keys are distinct, so none is repeated; the
            # writer's compact layout gives this for most lines (99.4% of the 100k text
            # cassette's: the others write a float otherwise), and one compare costs less
            # than counting the colons of both
            return value, False
        colons = raw.count(b":")
        if colons:
            if encoded is not None and 0x5C not in raw:
                # may_have_duplicates' test inline (a call per line): no backslash, no
                # escaped colon, so the counts alone tell
                if encoded.count(b":") != colons:
                    _parse_std(raw)  # raises DuplicateKey naming the key and its path
            elif may_have_duplicates(raw, value, encoded, colons):
                _parse_std(raw)  # raises DuplicateKey naming the key and its path
        return value, False
    _check_depth(raw, value)
    if ":" in raw and may_have_duplicates(raw, value):
        _parse_std(raw)  # raises DuplicateKey naming the key and its path
    return value, False


#: the longest text that cannot nest deeper than ``MAX_DEPTH``: each level takes an
#: opening and a closing bracket, two bytes
_SHALLOW_LEN = 2 * MAX_DEPTH + 1


_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])


def check_top_level_keys(raw: bytes | memoryview) -> None:
    """Raise ``DuplicateKey`` when the top-level object of the JSON text ``raw`` holds a
    key twice (exact; nested objects are not looked at, except when a top-level key is
    written with an escaped colon, which sends the line to the full check).

    Cheap: the top level is read with its values left as raw bytes, written back, and the
    colons counted; a key that parsing dropped takes its ``:`` with it. Only then is the
    text parsed by the standard library to name the key. Not an object, or not JSON:
    nothing is raised here (the caller's parse reports it).

    Raises:
        DuplicateKey: a key repeated (see above).
        UnicodeDecodeError: the exact check met invalid UTF-8 (the caller names the file
            and the line).
    """
    try:
        top = _TOP_LEVEL.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return
    data = bytes(raw)
    try:
        encoded = _encode(top)  # its values are ``msgspec.Raw``: msgspec writes them
    except (TypeError, ValueError, UnicodeEncodeError):
        encoded = None
    if not may_have_duplicates(data, top, encoded):
        return
    _parse_std(data)  # raises DuplicateKey naming the key (top level first)


def _check_depth(raw: bytes | str, value: Any) -> None:
    """Raise ``JSONTooDeep`` past ``MAX_DEPTH`` levels: one fixed limit, below Python's
    recursion limit, so that every later stage (drift, ``--json``, the app) can walk any
    value the parser returns, whatever the depth of the caller's own stack. Only texts
    with that many brackets are measured (a count of bytes, then an iterative walk)."""
    opened = (
        raw.count(b"[") + raw.count(b"{")
        if isinstance(raw, bytes)
        else raw.count("[") + raw.count("{")
    )
    if opened > MAX_DEPTH and depth_of(value) > MAX_DEPTH:
        raise JSONTooDeep()


def may_have_duplicates(
    raw: bytes | str, value: Any, encoded: bytes | None = None, colons: int | None = None
) -> bool:
    """Whether ``raw`` (JSON text that msgspec parsed into ``value``) may hold a repeated
    key that parsing dropped: every key costs one ``:`` outside strings, and re-encoding
    keeps every ``:`` inside strings, so a dropped key shows as fewer colons. A
    ``\\u003a`` escape (a colon written escaped) could hide one: then the answer is
    ``True`` and the caller runs the exact check (``parse_json``).

    ``encoded``: ``value`` already written as compact JSON (any key order; the sorted
    bytes a caller hashes, say), counted instead of encoding ``value`` again; ``colons``:
    the ``:`` bytes of ``raw``, when already counted. The one
    colon-count pre-test of the engine (``parse_json``, ``check_top_level_keys``, the
    cassette's key pass); a false ``True`` only costs the exact check.
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if b"\\" in raw and b"\\u003" in raw and (b"\\u003a" in raw or b"\\u003A" in raw):
        return True
    if encoded is None:
        try:
            # orjson writes about twice as fast as msgspec (the same colons: neither
            # escapes one); msgspec for what orjson refuses (integers past 64 bits,
            # nesting past 254 levels)
            encoded = _orjson_encode(value)
        except TypeError:
            try:
                encoded = _encode(value)
            except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
                return True
    return encoded.count(b":") != (raw.count(b":") if colons is None else colons)


def _parse_std(raw: bytes | str) -> Any:
    """The standard library's parser, with repeated keys rejected (``DuplicateKey``)."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    try:
        value = json.loads(raw, object_pairs_hook=_pairs)
    except RecursionError:
        raise JSONTooDeep() from None
    except ValueError as exc:
        raise _number_too_long(exc) or exc from None
    if _has_pairs_with_duplicates(value):
        _raise_duplicate(raw)
    return _unpair(value)


class _Pairs(list):  # type: ignore[type-arg]
    """An object as parsed, before duplicates are checked: its ``(key, value)`` pairs."""

    __slots__ = ("duplicate",)
    duplicate: bool


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    pairs = _Pairs(items)
    pairs.duplicate = len({k for k, _ in items}) != len(items)
    return pairs


def _has_pairs_with_duplicates(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, _Pairs):
            if node.duplicate:
                return True
            stack.extend(v for _, v in node)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _raise_duplicate(raw: str) -> None:
    value = json.loads(raw, object_pairs_hook=_pairs)
    stack: list[tuple[tuple[Part, ...], Any]] = [((), value)]
    while stack:
        parts, node = stack.pop(0)
        if isinstance(node, _Pairs):
            seen: set[str] = set()
            for key, _ in node:
                if key in seen:
                    raise DuplicateKey(key, parts)
                seen.add(key)
            stack.extend((parts + (k,), v) for k, v in node)
        elif isinstance(node, list):
            stack.extend((parts + (i,), v) for i, v in enumerate(node))


def _unpair(value: Any) -> Any:
    """Turn the ``_Pairs`` of a checked parse into dicts, without recursion."""
    if not isinstance(value, list):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, slot, node = stack.pop()
        if isinstance(node, _Pairs):
            out: dict[str, Any] = {}
            parent[slot] = out
            for k, v in node:
                out[k] = v
                if isinstance(v, list):
                    stack.append((out, k, v))
        elif isinstance(node, list):
            items = list(node)
            parent[slot] = items
            for i, v in enumerate(items):
                if isinstance(v, list):
                    stack.append((items, i, v))
        else:
            parent[slot] = node
    return root[0]


def loads_std(text: str | bytes) -> Any:
    """``json.loads(text)`` (bytes are decoded as UTF-8), raising ``JSONTooDeep`` instead
    of ``RecursionError`` and ``NumberTooLong`` for an integer past the digit limit."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeep() from None
    except ValueError as exc:
        raise _number_too_long(exc) or exc from None


def json_error_text(exc: Exception, *, line: bool = False) -> str:
    """What a JSON parse error says, in words, with its position: ``unterminated string
    starting at column 51``, ``expecting ',' delimiter at line 3, column 7``
    (``line=True``: the text has several lines, so the line is named too; a cassette line
    is one line, and its error names the file's line itself). The standard library's
    ``JSONDecodeError.msg`` is a phrase that its ``str()`` completes with ``: line 1
    column 51 (char 50)``; some phrases end in ``at`` (``Invalid control character at``),
    others do not (``Expecting value``). Any other error: its ``str()``."""
    if not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    phrase = exc.msg[:1].lower() + exc.msg[1:]
    where = f"line {exc.lineno}, column {exc.colno}" if line else f"column {exc.colno}"
    return f"{phrase} {where}" if phrase.endswith(" at") else f"{phrase} at {where}"
