"""Classify values that change between two runs of the same task (volatile values).

A tool argument that holds a UUID, a timestamp, a request id or an absolute path is the
usual cause of a replay miss: the agent builds it fresh on every run. ``value_kind`` says
what kind of volatile value one JSON value looks like; ``difference_kind`` names the kind
of a difference between a recorded and a live value, for miss messages, lint findings
and drift reports. Both are heuristics on the value alone (no context), kept
conservative so that ordinary strings and small numbers are never called volatile.
"""

from __future__ import annotations

import itertools
import math
import re
from datetime import datetime
from typing import Any

from ..format.jsonpath import iter_leaves
from .urls import is_url_spelling

#: value kinds returned by ``value_kind``
KINDS = ("uuid", "timestamp", "epoch", "request_id", "temp_path", "abs_path")

#: Unix epoch bounds accepted as plausible timestamps: 2000-01-01 .. 2100-01-01 UTC.
EPOCH_MIN_S = 946_684_800
EPOCH_MAX_S = 4_102_444_800

UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: ISO-8601 date or date-time (``2024-05-15``, ``2024-05-15T15:00:03Z``,
#: ``2024-05-15 15:00:03.123+02:00``).
ISO_TIMESTAMP_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
#: Request-id style tokens: ``req_8f3a9c01``, ``request-1234abcd``, ``x-request-id-...``,
#: ``trace_...``; the token part holds at least one digit and is 6+ characters long.
REQUEST_ID_RE = re.compile(
    r"(?:x-)?(?:req|request|rid|trace|span|correlation|corr)(?:[-_]?id)?[-_:]"
    r"(?=[0-9A-Za-z-]*\d)[0-9A-Za-z][0-9A-Za-z-]{5,}",
    re.IGNORECASE,
)
#: Temporary folders: POSIX /tmp, /var/tmp, macOS /var/folders, Windows %TEMP%.
TEMP_PATH_RE = re.compile(
    r"(?:/tmp|/var/tmp|/private/tmp|(?:/private)?/var/folders)(?:/[^\s\"'<>|]*)?"
    r"|%TEMP%(?:[\\/][^\s\"'<>|]*)?"
    r"|[A-Za-z]:\\(?:Users\\[^\\\s]+\\AppData\\Local\\Temp|Windows\\Temp)(?:\\[^\"'<>|\r\n]*)?",
    re.IGNORECASE,
)
#: Absolute paths: POSIX with two or more components, Windows drive or UNC paths.
ABS_PATH_RE = re.compile(
    r"/[^\s/\"'<>|?#:]+(?:/[^\s/\"'<>|?#]*)+"
    r"|[A-Za-z]:[\\/][^\"'<>|?*\r\n]*"
    r"|\\\\[^\\\s]+\\[^\"'<>|?*\r\n]+"
)
_EPOCH_STR_RE = re.compile(r"\d{10}(?:\d{3})?(?:\.\d+)?")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_epoch(value: Any) -> bool:
    """True for a number (or a string of digits) that is a plausible Unix time between the
    years 2000 and 2100, in seconds or in milliseconds."""
    if isinstance(value, str):
        if not _EPOCH_STR_RE.fullmatch(value):
            return False
        value = float(value)
    if not _is_number(value) or math.isnan(value):
        return False
    return EPOCH_MIN_S <= value < EPOCH_MAX_S or EPOCH_MIN_S * 1000 <= value < EPOCH_MAX_S * 1000


def is_iso_timestamp(text: str) -> bool:
    """True for an ISO-8601 date or date-time string that names a real calendar date."""
    if not ISO_TIMESTAMP_RE.fullmatch(text):
        return False
    try:
        datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return False
    return True


def value_kind(value: Any) -> str | None:
    """The kind of volatile value ``value`` looks like, or ``None``.

    Returns one of ``"uuid"``, ``"timestamp"`` (ISO-8601 date or date-time string),
    ``"epoch"`` (int, float or digit string in Unix seconds or milliseconds, years
    2000-2100), ``"request_id"`` (``req_8f3a...``, ``request-1234abcd``), ``"temp_path"``
    (under /tmp, /var/tmp, /var/folders or %TEMP%), ``"abs_path"`` (other absolute POSIX
    or Windows paths), or ``None`` for anything else (containers, booleans, short numbers,
    ordinary text). The whole value must match: a sentence that mentions a UUID is not one.
    """
    if _is_number(value):
        return "epoch" if is_epoch(value) else None
    if not isinstance(value, str) or not value or len(value) > 4096:
        return None
    if UUID_RE.fullmatch(value) or (
        value[:9].lower() == "urn:uuid:" and UUID_RE.fullmatch(value[9:])
    ):
        return "uuid"
    if is_iso_timestamp(value):
        return "timestamp"
    if is_epoch(value):
        return "epoch"
    if REQUEST_ID_RE.fullmatch(value):
        return "request_id"
    if TEMP_PATH_RE.fullmatch(value):
        return "temp_path"
    if ABS_PATH_RE.fullmatch(value):
        return "abs_path"
    return None


#: value kind -> the name of a difference of that kind (the words a miss uses)
_DIFFERENCE_NAMES = {
    "uuid": "uuid",
    "timestamp": "timestamp",
    "epoch": "timestamp",
    "request_id": "request id",
    "temp_path": "absolute path",
    "abs_path": "absolute path",
}


def difference_kind(a: Any, b: Any) -> str:
    """Name the kind of a difference between two values at the same path.

    Returns ``"number type"`` (the same number as int and float, ``1`` vs ``1.0``),
    ``"url spelling"`` (two spellings of one URL, see ``urls.py``),
    ``"uuid"``, ``"timestamp"`` (ISO-8601 or epoch on both sides), ``"request id"``,
    ``"absolute path"`` (both absolute or temp paths, or one path and one other string),
    or ``"other"``. Equal values also give ``"other"``: call it on differences only.
    """
    if _is_number(a) and _is_number(b) and type(a) is not type(b) and a == b:
        return "number type"
    if is_url_spelling(a, b):
        return "url spelling"  # one URL written two ways (the url preset)
    ka, kb = value_kind(a), value_kind(b)
    na, nb = _DIFFERENCE_NAMES.get(ka or ""), _DIFFERENCE_NAMES.get(kb or "")
    if na is not None and na == nb:
        return na
    if "absolute path" in (na, nb) and isinstance(a, str) and isinstance(b, str):
        other = b if na == "absolute path" else a
        if (na is None or nb is None) and ("/" in other or "\\" in other):
            return "absolute path"
    return "other"


# -- response metadata ----------------------------------------------------------------------
#: top-level keys of an LLM response envelope that change on every call of the same
#: conversation (OpenAI's ``id``/``created``/``system_fingerprint``, Anthropic's ``id``)
LLM_METADATA_KEYS = frozenset({"id", "created", "system_fingerprint"})
#: HTTP response headers (lower case) that change on every request: dates, request and
#: trace ids, timing
HTTP_METADATA_HEADERS = frozenset(
    {
        "date",
        "age",
        "expires",
        "x-request-id",
        "request-id",
        "x-amz-request-id",
        "x-amzn-requestid",
        "x-amzn-trace-id",
        "x-amz-id-2",
        "cf-ray",
        "x-runtime",
        "server-timing",
        "x-trace-id",
        "traceparent",
        "x-correlation-id",
        "openai-processing-ms",
        "x-ratelimit-reset-requests",
        "x-ratelimit-reset-tokens",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-remaining-tokens",
    }
)
#: value kinds that are volatile in a response too (an absolute path is left out: a file a
#: tool names is the answer, not metadata)
RESPONSE_VOLATILE_KINDS = frozenset({"uuid", "epoch", "request_id"})
#: object keys (lower case, ``_`` read as ``-``) whose value is a request or trace id, at any
#: depth and whatever it looks like (``"request_id": "req_abc"``, ``"x-request-id": ...``)
ID_KEYS = frozenset(
    {
        "request-id",
        "requestid",
        "x-request-id",
        "trace-id",
        "traceid",
        "x-trace-id",
        "span-id",
        "correlation-id",
        "x-correlation-id",
        "x-amz-request-id",
        "x-amzn-requestid",
        "x-amzn-trace-id",
        "x-amz-id-2",
        "cf-ray",
        "traceparent",
    }
)


def is_llm_envelope(response: Any) -> bool:
    """A chat-completion style response: an object with ``choices`` (OpenAI) or a
    ``content`` list with ``role``/``type`` (Anthropic), and a ``model``."""
    if not isinstance(response, dict) or "model" not in response:
        return False
    return isinstance(response.get("choices"), list) or (
        isinstance(response.get("content"), list) and ("role" in response or "type" in response)
    )


def is_date_time(value: Any) -> bool:
    """An ISO-8601 date-time with a time of day (``2024-05-15T10:00:03Z``); a bare date
    (``2024-06-01``, a flight or birth date) is domain data, not a volatile timestamp."""
    return isinstance(value, str) and is_iso_timestamp(value) and len(value) > 10


def _is_id_key(part: Any) -> bool:
    return isinstance(part, str) and part.lower().replace("_", "-") in ID_KEYS


def metadata_place_reason(parts: tuple[Any, ...], envelope: bool) -> str | None:
    """Why the value at path ``parts`` (keys and indexes from a response's root) is
    volatile metadata by its place alone, whatever it holds, or ``None``: the one table of
    metadata places, applied to two responses by ``response_metadata_reason`` and to one
    value by ``comparable``.

    - ``"LLM response <key>"``: a top-level ``id``/``created``/``system_fingerprint``
      (``LLM_METADATA_KEYS``) when ``envelope`` is true (the response is an LLM envelope,
      ``is_llm_envelope``; for two responses, both are);
    - ``"HTTP header <name>"``: a header in ``HTTP_METADATA_HEADERS`` (any case) under a
      ``headers`` object at any depth (``{"headers": {"Date": ...}}``, and an HTTP
      response a tool wraps: ``{"response": {"headers": {"Date": ...}}}``), and anything
      inside it;
    - ``"id key <key>"``: anything under a key that names a request or trace id
      (``ID_KEYS``: ``request_id``, ``x-request-id``, ``trace_id``, ...), at any depth.
    """
    if envelope and len(parts) == 1 and parts[0] in LLM_METADATA_KEYS:
        return f"LLM response {parts[0]}"
    for here, name in itertools.pairwise(parts):
        if here == "headers" and isinstance(name, str) and name.lower() in HTTP_METADATA_HEADERS:
            return f"HTTP header {name}"
    for part in parts:
        if _is_id_key(part):
            return f"id key {part}"
    return None


def response_metadata_reason(response_a: Any, response_b: Any, parts: tuple[Any, ...],
                             a: Any, b: Any) -> str | None:  # fmt: skip
    """Why a response difference at path ``parts`` (keys and indexes from the response
    root) with values ``a``/``b`` is volatile metadata, or ``None`` when it is the answer.

    Metadata: a place in ``metadata_place_reason`` (an LLM envelope's ``id``/``created``/
    ``system_fingerprint`` when both responses are envelopes; a volatile HTTP header under
    a ``headers`` object at any depth; a request or trace id key); two values of the same
    volatile kind (uuid, epoch, request id, date-time with a time of day; a bare date is
    domain data).
    """
    envelope = (
        len(parts) == 1
        and parts[0] in LLM_METADATA_KEYS
        and is_llm_envelope(response_a)
        and is_llm_envelope(response_b)
    )
    reason = metadata_place_reason(parts, envelope)
    if reason is not None:
        return reason
    if a is None or b is None:
        return None
    ka, kb = value_kind(a), value_kind(b)
    if ka is not None and ka == kb and ka in RESPONSE_VOLATILE_KINDS:
        return ka.replace("_", " ")
    if is_date_time(a) and is_date_time(b):
        return "timestamp"
    return None


def volatile_kind(value: Any) -> str | None:
    """``value_kind(value)``, except that a bare ISO date (``2024-06-01``: a flight date,
    a birth date) is domain data, not a volatile timestamp: ``None``. A date-time with a
    time of day, an epoch, a uuid... keep their kind. Used where a kind is taken as a
    sign that the value changes on every run (lint, the diagnosis' proposed presets)."""
    kind = value_kind(value)
    if kind == "timestamp" and not is_date_time(value):
        return None
    return kind


# -- a value with its volatile parts set aside ----------------------------------------------
#: an ISO-8601 date-time with a time of day, inside text (a bare date is domain data)
DATE_TIME_IN_TEXT_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
#: what stands for a value set aside (by ``comparable``)
_ASIDE = "<volatile>"


def _set_aside_leaf(value: Any) -> Any:
    """One leaf with its volatile part set aside: a whole uuid, request id, epoch or
    date-time becomes its kind; inside text, each uuid, request id and date-time does."""
    if isinstance(value, str):
        if not value or len(value) > 65536:
            return value
        text = UUID_RE.sub("<uuid>", value)
        text = DATE_TIME_IN_TEXT_RE.sub("<timestamp>", text)
        return REQUEST_ID_RE.sub("<request_id>", text)
    if _is_number(value) and is_epoch(value):
        return "<epoch>"
    return value


def comparable(value: Any) -> tuple[tuple[str, str], ...]:
    """A hashable form of the JSON value ``value`` with its volatile parts set aside, so
    two values that differ only there have the same form (the same error answered to a
    retry with a fresh request id and time). Set aside:

    - whatever is at a metadata place (``metadata_place_reason``, the table
      ``response_metadata_reason`` reads too): a request or trace id key (``ID_KEYS``) at
      any depth; a volatile HTTP header (``HTTP_METADATA_HEADERS``: ``date``,
      ``x-ratelimit-reset-*``, ...) under a ``headers`` object at any depth; the top-level
      ``id``, ``created`` and ``system_fingerprint`` of an LLM response envelope
      (``is_llm_envelope``);
    - a uuid, a request id (``REQUEST_ID_RE``) or a date-time with a time of day, whole or
      inside text (``"Rate limit reached (request req_8f3a9c01)"``), and a number that is a
      plausible epoch (``is_epoch``). A bare date, a path and ordinary numbers stay.

    Returns ``((path, leaf), ...)`` sorted by path (``repr`` of the key parts and of the
    leaf: key order ignored; ``1`` and ``1.0``, ``null`` and ``NaN`` kept apart). Walks
    without recursion (``jsonpath.iter_leaves``): any depth is safe.
    """
    envelope = is_llm_envelope(value)
    form: list[tuple[str, str]] = []
    for parts, leaf in iter_leaves(value):
        aside = metadata_place_reason(parts, envelope) is not None
        shown = _ASIDE if aside else _set_aside_leaf(leaf)
        form.append((repr(parts), repr(shown)))
    form.sort()
    return tuple(form)
