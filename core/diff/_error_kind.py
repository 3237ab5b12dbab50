"""What kind of failure a failed call is, from its recorded error or response: a transient
failure of the environment (a rate limit, a timeout, an outage: HTTP 408/429/5xx,
``TimeoutError``, ``RateLimited``, "try again"), or a refusal by the tool's own rules (a
business error: ``RefundDenied``, HTTP 400/403/404/409/422, "not allowed", "payment amount
does not add up"), which says something about what the agent asked, not about the
weather. Neither is "unknown", and the finding says so instead of guessing."""

from __future__ import annotations

import re
from typing import Any

TRANSIENT = "transient"
REFUSAL = "refusal"
UNKNOWN = "unknown"

_TRANSIENT_WORDS = re.compile(
    r"rate.?limit|too.?many.?requests|throttl|time.?d?.?out|timeout|temporar|unavailable|"
    r"overload|try again|retry.?after|connection (?:reset|refused|error|aborted)|"
    r"\bconnectionerror\b|server error|bad gateway|gateway|\boutage\b|quota exceeded",
    re.IGNORECASE,
)
_REFUSAL_WORDS = re.compile(
    r"denied|not allowed|forbidden|not permitted|policy|refus|invalid|not eligible|"
    r"ineligible|not found|does not|doesn't|cannot|can't|must|exceed(?!ed the rate)|"
    r"insufficient|unauthori[sz]ed|conflict|already|not add up|violat",
    re.IGNORECASE,
)
_STATUS_KEYS = ("status", "status_code", "statusCode", "http_status", "code")


def error_kind(value: Any, is_error: bool) -> str:
    """``TRANSIENT``, ``REFUSAL`` or ``UNKNOWN`` for a failed call whose recorded ``error``
    (``is_error``) or response is ``value``. A status code decides first (408, 429, 5xx:
    transient; another 4xx: refusal), then the words of the error's type and message."""
    status = _status(value) if not is_error else None
    if status is not None:
        if status in (408, 425, 429) or 500 <= status <= 599:
            return TRANSIENT
        if 400 <= status <= 499:
            return REFUSAL
    text = _text(value, is_error)
    if _TRANSIENT_WORDS.search(text):
        return TRANSIENT
    if _REFUSAL_WORDS.search(text):
        return REFUSAL
    if is_error and isinstance(value, dict):
        kind = str(value.get("type", ""))
        # a tool's own exception class (RefundDenied, PolicyViolation) is its rule speaking
        if kind and kind not in _GENERIC and not kind.endswith(("Warning",)):
            return REFUSAL if kind[:1].isupper() and kind not in _BUILTIN_ENV else UNKNOWN
    return UNKNOWN


#: exception names that say nothing of the cause
_GENERIC = frozenset({"Exception", "Error", "RuntimeError", "ToolError", "ValueError", "KeyError"})
#: builtin exceptions of the environment (files, processes, the OS)
_BUILTIN_ENV = frozenset({"OSError", "IOError", "BrokenPipeError", "MemoryError", "SystemError"})


def _status(value: Any) -> int | None:
    if not isinstance(value, dict):
        return None
    for name in _STATUS_KEYS:
        status = value.get(name)
        if isinstance(status, dict):
            status = status.get("code")
        if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
            return status
    return None


def _text(value: Any, is_error: bool) -> str:
    """The words of a failure: the error's type and message, or a response's error,
    message, text and MCP content texts."""
    if isinstance(value, str):
        return value[:2000]
    if not isinstance(value, dict):
        return ""
    parts = []
    keys = ("type", "message") if is_error else ("error", "message", "detail", "text", "reason")
    for key in keys:
        item = value.get(key)
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            parts.extend(str(v) for v in item.values() if isinstance(v, str))
    for block in value.get("content") or [] if isinstance(value.get("content"), list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    # a class name in CamelCase reads as words: RateLimited -> Rate Limited
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", " ".join(parts))[:2000]
