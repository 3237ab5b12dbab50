"""What a key recorded several times is: a retry, a loop, or not a repeat at all.

The article reads "the same key hit many times" as a retry storm or a loop. Two other
cases share a key and are neither, and calling them a storm sends the user the wrong way:

``header_variants``
    Imported HTTP calls that differ only in a request header that changes the answer
    (``Accept``, ``Range``, ``Accept-Language``, an API-version header) and got different
    responses: replay serves them by position, so a caller asking in another order gets
    the other answer (a CSV request answered with the JSON body).
``distinct_errors``
    Every recording of the key failed, each with another error (Inspect's
    ``log_tool_call_error``, a tool that fails differently each time): the agent is not
    retrying one failure, the tool fails in several ways.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .entry import Entry
from .outcome import is_error_outcome

#: request headers whose value changes what the server answers (content negotiation,
#: partial content, API versions); lower case
IDENTITY_HEADERS = frozenset({"accept", "accept-language", "range", "if-range"})
_VERSION_HEADER = re.compile(r"(?:^|-)(?:api-)?version$|^api-version$", re.IGNORECASE)


def is_identity_header(name: str) -> bool:
    """A request header that is part of an HTTP call's identity (see the module doc)."""
    low = name.lower()
    return low in IDENTITY_HEADERS or bool(_VERSION_HEADER.search(low))


def identity_headers(headers: Any) -> dict[str, Any]:
    """The identity headers of a request-headers mapping (other headers left out)."""
    if not isinstance(headers, dict):
        return {}
    return {k: v for k, v in headers.items() if isinstance(k, str) and is_identity_header(k)}


def _outcome(entry: Entry) -> Any:
    return ("error", entry.error) if entry.is_error else ("response", entry.response)


def classify(entries: Sequence[Entry]) -> tuple[str, str]:
    """``(kind, sentence)`` for the recordings of one key: ``header_variants``,
    ``distinct_errors``, or ``repeated_key`` (a retry or a loop)."""
    outcomes = [_outcome(e) for e in entries]
    distinct_outcomes = len({repr(o) for o in outcomes}) > 1
    headers = [identity_headers(e.extra.get("request_headers")) for e in entries]
    if distinct_outcomes and len({repr(sorted(h.items())) for h in headers}) > 1:
        names = sorted({k for h in headers for k in h})
        shown = "; ".join(
            f"seq {e.seq}: " + ", ".join(f"{k}={h[k]!r}" for k in sorted(h)) for e, h in
            zip(entries, headers, strict=True)
        )  # fmt: skip
        return "header_variants", (
            f"share a key although the request header {', '.join(names)} differs ({shown}) "
            "and so do the responses: replay serves them by position, so a caller asking "
            "in another order gets the other answer; these headers belong to the call's "
            "identity (re-import the recording)"
        )
    errors = [e.is_error or is_error_outcome(False, e.response) for e in entries]
    if all(errors) and len({repr(o) for o in outcomes}) == len(outcomes):
        return "distinct_errors", (
            "every recording failed, each with another error: the tool fails in several "
            "ways (not a retry storm of one failure)"
        )
    return (
        "repeated_key",
        "replay serves them in recorded order; many repeats mean a retry storm or a loop",
    )
