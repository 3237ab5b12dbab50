"""What a key recorded several times is: a retry, a loop, or not a repeat at all.

The article reads "the same key hit many times" as a retry storm or a loop. Two other
cases share a key and are neither, and calling them a storm sends the user the wrong way:

``header_variants``
    Imported HTTP calls that differ only in a request header that changes the answer
    (``Accept``, ``Range``, ``Accept-Language``, an API-version header) and got different
    responses: replay serves them by position, so a caller asking in another order gets
    the other answer (a CSV request answered with the JSON body).
``distinct_errors``
    Most recordings of the key failed, and in different ways (Inspect's
    ``log_tool_call_error``: 11 calls, 10 error types): the agent is not retrying one
    failure, the tool fails in several ways.

The rule (``classify``): a retry storm is the same failure over and over, a loop the same
answer over and over; either way one outcome dominates. So the group is a ``repeated_key``
when its most common outcome (the error object, or the response; compared as JSON values)
repeats (at least 2 recordings) and makes up at least half of them. When no outcome
dominates and more than half of the recordings failed (an ``error`` entry, or a response
that is an error by ``outcome.is_error_outcome``: MCP ``isError``, an HTTP 4xx/5xx
status, ``Error: ...`` text), it is ``distinct_errors``. A storm with one odd error (5
timeouts and one 500) stays a storm; a group of different answers that did not fail
(polling a clock) stays a ``repeated_key``.

Outcomes are compared as ``outcome.py`` compares them (their fingerprints), and where that
could change the kind, again with their volatile parts set aside (``volatile.comparable``:
request and trace ids, uuids, date-times and epochs, HTTP ``Date``/``x-request-id`` headers): a
429 answered three times with a fresh ``request_id`` each time is one failure repeated, a
retry storm, not three ways to fail. The same holds for ``header_variants``: responses that
differ only there are one answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..format.entry import Entry
from ..format.outcome import is_error_outcome, outcome_fingerprint
from .volatile import comparable

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


#: what ``classify`` says of a ``repeated_key``; recordings that all have the same outcome
#: always are one (the rule: one outcome dominates), which a caller may know from their
#: bytes alone (``outcome.same_stored_outcomes``) without reading the entries
REPEATED_SENTENCE = (
    "replay serves them in recorded order; many repeats mean a retry storm or a loop"
)


def headers_form(entry: Entry) -> str:
    """The identity request headers of one recording as ``classify`` compares them
    (``"[]"`` for none)."""
    return _form(identity_headers(entry.extra.get("request_headers")))


def _form(identity: dict[str, Any]) -> str:
    return repr(sorted(identity.items()))


#: ``headers_form`` of a recording with no identity request headers
NO_HEADERS_FORM = "[]"


def plainly_repeated(failed: int, count: int, header_forms: set[str]) -> bool:
    """Whether ``count`` recordings of one key, ``failed`` of them failed, whose identity
    headers take the forms ``header_forms``, are a ``repeated_key`` whatever their
    outcomes: no header variants and no majority of failures leave no other kind. What a
    caller knows of each recording without keeping it (lint's pass) is enough."""
    return len(header_forms) <= 1 and 2 * failed <= count


def classify(entries: Sequence[Entry]) -> tuple[str, str]:
    """``(kind, sentence)`` for the recordings of one key (in recorded order):
    ``header_variants``, ``distinct_errors``, or ``repeated_key`` (a retry or a loop); the
    rule is in the module doc."""
    fails = [recording_failed(e) for e in entries]
    failed = sum(fails)
    headers = [identity_headers(e.extra.get("request_headers")) for e in entries]
    forms_of_headers = {_form(h) for h in headers}
    header_variants = len(forms_of_headers) > 1
    if plainly_repeated(failed, len(entries), forms_of_headers):
        # the outcomes are not compared (a repr of every large response cost a quarter
        # of check's serial part on 1M entries)
        return "repeated_key", REPEATED_SENTENCE
    outcomes = [_outcome(e) for e in entries]
    forms: list[Any] = [outcome_fingerprint(tag, value) for tag, value in outcomes]
    if (header_variants or 2 * failed > len(outcomes)) and len(set(forms)) > 1:
        # outcomes that differ where that could change the kind: compare them again with
        # the volatile values set aside (only then: a loop of different answers that did
        # not fail is a repeat either way, and identical recordings stay cheap)
        forms = [(tag, comparable(value)) for tag, value in outcomes]
    distinct_outcomes = len(set(forms)) > 1
    if distinct_outcomes and header_variants:
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
    counts = Counter(forms)
    top = max(counts.values(), default=0)
    if not (top >= 2 and 2 * top >= len(outcomes)) and 2 * failed > len(outcomes):
        ways = len({f for bad, f in zip(fails, forms, strict=True) if bad})
        return "distinct_errors", (
            f"{failed} of {len(outcomes)} recordings failed, in {ways} different ways (no "
            f"outcome repeats in half of them): the tool fails in several ways, not a retry "
            f"storm of one failure"
        )
    return "repeated_key", REPEATED_SENTENCE


def recording_failed(entry: Entry) -> bool:
    """Whether one recording failed, as ``classify`` counts it: an ``error`` entry, or a
    response that is an error (``outcome.is_error_outcome``)."""
    return entry.is_error or is_error_outcome(False, entry.response)
