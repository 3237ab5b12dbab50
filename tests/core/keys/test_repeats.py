"""Repeats of one key (core/keys/repeats.py): a retry storm is one failure over and over;
calls that failed in different ways (Inspect's ``log_tool_call_error``) are
``distinct_errors``; volatile values are set aside before comparing failures."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.keys.repeats import classify
from cassette_tui.core.keys.volatile import EPOCH_MAX_S, EPOCH_MIN_S, comparable
from cassette_tui.core.scan.lint import lint
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cases import HEX, rate_limited
from support.factory import entry, write_cassette


def _kinds(tmp_path: Path, *outcomes: dict) -> tuple[str, str]:
    entries = [entry(i, "bash", {"cmd": "x"}, **o) for i, o in enumerate(outcomes, 1)]
    (finding,) = lint(load(write_cassette(tmp_path / "c.jsonl", *entries)))
    return finding.kind, finding.message


def _err(message: str) -> dict:
    return {"error": {"type": "ToolError", "message": message}}


def test_the_same_error_every_time_is_a_retry_storm(tmp_path: Path) -> None:
    kind, message = _kinds(tmp_path, *[_err("429 Too Many Requests")] * 4)
    assert kind == "repeated_key" and "retry storm" in message


def test_mostly_different_errors_are_distinct_errors(tmp_path: Path) -> None:
    errors = ["timeout", "permission denied", "timeout", "no such file", "disk full"]
    kind, message = _kinds(tmp_path, *map(_err, errors))
    assert kind == "distinct_errors"
    assert "5 of 5 recordings failed, in 4 different ways" in message


def test_a_storm_with_one_odd_error_is_still_a_storm(tmp_path: Path) -> None:
    kind, _ = _kinds(tmp_path, *map(_err, ["timeout"] * 4 + ["500 Internal Server Error"]))
    assert kind == "repeated_key"


def test_http_error_responses_count_as_failures(tmp_path: Path) -> None:
    statuses = [{"response": {"status": s, "body": "x"}} for s in (500, 502, 503, 404)]
    kind, message = _kinds(tmp_path, *statuses)
    assert kind == "distinct_errors" and "4 of 4 recordings failed" in message
    same = [{"response": {"status": 429, "body": "slow down"}}] * 3
    assert _kinds(tmp_path, *same)[0] == "repeated_key"


def test_different_answers_that_did_not_fail_stay_a_repeat(tmp_path: Path) -> None:
    answers = [{"response": {"now": t}} for t in (1, 2, 3)]
    assert _kinds(tmp_path, *answers)[0] == "repeated_key"


# -- the same error with volatile values set aside (a retry storm, not distinct errors) -------
def test_a_429_storm_whose_bodies_differ_only_by_request_id_is_a_retry_storm(
    tmp_path: Path,
) -> None:
    # ids that look like nothing (req_abc: no digit) are set aside by their key's name
    storm = [
        rate_limited(rid, f"Tue, 01 Dec 2026 04:5{i}:00 GMT")
        for i, rid in enumerate(["req_abc", "req_def", "req_ghi"])
    ]
    kind, message = _kinds(tmp_path, *storm)
    assert kind == "repeated_key" and "retry storm" in message


@pytest.mark.parametrize(
    "messages",
    [
        # a request id inside the message, as an SDK's exception text carries it
        [f"Error code: 429 - rate limit reached (request id req_8f3a9c0{i}d2)" for i in range(3)],
        # a uuid and a date-time with a time of day inside the text
        [
            f"503 upstream busy: trace 1b4e28ba-2fa1-11d2-883f-0016d3cca42{i} at "
            f"2026-12-01T04:5{i}:03.120Z"
            for i in range(3)
        ],
    ],
    ids=["request-id-in-text", "uuid-and-time-in-text"],
)
def test_error_messages_differing_only_in_volatile_text_are_one_error(
    tmp_path: Path, messages: list[str]
) -> None:
    kind, _ = _kinds(tmp_path, *map(_err, messages))
    assert kind == "repeated_key"


def test_an_error_object_with_a_fresh_id_and_time_each_retry_is_one_error(tmp_path: Path) -> None:
    errors = [
        {"error": {"type": "RateLimitError", "message": "slow down", "request_id": f"r{i}",
                   "created": 1764564600 + i}}
        for i in range(4)
    ]  # fmt: skip
    assert _kinds(tmp_path, *errors)[0] == "repeated_key"


def test_errors_that_differ_beyond_volatile_values_stay_distinct(tmp_path: Path) -> None:
    # a bare date is domain data; another message is another failure
    errors = [
        _err("no flights on 2026-12-01 (request req_8f3a9c01d2)"),
        _err("no flights on 2026-12-02 (request req_8f3a9c01d3)"),
        _err("permission denied (request req_8f3a9c01d4)"),
    ]
    kind, message = _kinds(tmp_path, *errors)
    assert kind == "distinct_errors" and "in 3 different ways" in message


def test_distinct_errors_count_ways_with_volatile_values_set_aside(tmp_path: Path) -> None:
    errors = [_err(f"timeout (request req_1234567{i})") for i in range(2)] + [
        _err(f"permission denied (request req_7654321{i})") for i in range(2)
    ] + [_err("disk full"), _err("no such file")]  # fmt: skip
    kind, message = _kinds(tmp_path, *errors)
    assert kind == "distinct_errors" and "6 of 6 recordings failed, in 4 different ways" in message


request_ids = st.builds(
    lambda prefix, digits, rest: f"{prefix}{digits}{rest}",
    st.sampled_from(["req_", "request-", "trace_", "req-id-"]),
    st.text("0123456789", min_size=1, max_size=4),
    st.text(HEX, min_size=5, max_size=20),
)
uuids = st.uuids().map(str)
date_times = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2099, 1, 1)).map(
    lambda d: d.isoformat(timespec="milliseconds") + "Z"
)
epochs = st.integers(min_value=EPOCH_MIN_S, max_value=EPOCH_MAX_S - 1)
MESSAGES = ["Rate limit reached", "Service unavailable", "Overloaded", "Gateway timeout"]


def _recorded(seq: int, outcome: dict) -> Entry:
    return Entry(seq, "api", {"q": 1}, outcome.get("response"), outcome.get("error"))


def _error_body(message: str, rid: str, uid: str, when: str, epoch: int, shape: int) -> dict:
    if shape == 0:  # an HTTP response: headers and a JSON body
        return {"response": {"status": 429, "headers": {"X-Request-Id": [rid], "Date": [when]},
                             "body": {"error": {"message": message, "request_id": rid}}}}  # fmt: skip
    if shape == 1:  # a raised error whose text carries the volatile values
        return {"error": {"type": "APIError", "message": f"{message}; id {rid} ({uid}) {when}"}}
    return {"response": {"status": 503, "error": message, "trace_id": uid, "retry_at": epoch}}


@settings(max_examples=60, deadline=None)
@given(
    message=st.sampled_from(MESSAGES),
    shape=st.integers(0, 2),
    fills=st.lists(st.tuples(request_ids, uuids, date_times, epochs), min_size=2, max_size=6),
)
def test_one_failure_with_any_volatile_values_is_a_retry_storm(
    message: str, shape: int, fills: list[tuple[str, str, str, int]]
) -> None:
    entries = [_recorded(i, _error_body(message, *fill, shape)) for i, fill in enumerate(fills, 1)]
    assert classify(entries)[0] == "repeated_key"


@settings(max_examples=60, deadline=None)
@given(
    shape=st.integers(0, 2),
    fills=st.lists(st.tuples(request_ids, uuids, date_times, epochs), min_size=4, max_size=4),
)
def test_different_failures_with_volatile_values_stay_distinct(
    shape: int, fills: list[tuple[str, str, str, int]]
) -> None:
    entries = [
        _recorded(i, _error_body(message, *fill, shape))
        for i, (message, fill) in enumerate(zip(MESSAGES, fills, strict=True), 1)
    ]
    assert classify(entries)[0] == "distinct_errors"


# -- volatile.comparable ----------------------------------------------------------------------
def test_comparable_sets_aside_volatile_values_only() -> None:
    a = {"b": 1, "a": "req_8f3a9c01d2 at 2026-12-01T04:50:00Z", "id": "x", "on": "2026-12-01"}
    b = {"a": "req_11111111aa at 2025-01-02T00:00:00Z", "b": 1, "id": "x", "on": "2026-12-01"}
    assert comparable(a) == comparable(b)  # key order ignored, ids and times set aside
    assert comparable({**a, "on": "2026-12-02"}) != comparable(a)  # a bare date is data
    assert comparable({**a, "b": 1.0}) != comparable(a)  # 1 and 1.0 stay apart
    assert comparable({**a, "b": 2}) != comparable(a)  # an ordinary number is data
    assert comparable({"p": "/home/u/a"}) != comparable({"p": "/home/u/b"})  # a path is data
    # the metadata of an LLM envelope, and volatile headers, wherever the headers object is
    env = {"model": "m", "choices": [{"message": "hi"}], "id": "chatcmpl-1", "created": 5}
    assert comparable(env) == comparable({**env, "id": "chatcmpl-2", "created": 6})
    assert comparable({"x": {"headers": {"Date": "a"}}}) == comparable(
        {"x": {"headers": {"Date": "b"}}}
    )
    assert comparable({"headers": {"Accept": "a"}}) != comparable({"headers": {"Accept": "b"}})


def test_comparable_walks_any_depth() -> None:
    deep: Any = "req_8f3a9c01d2"
    other: Any = "req_99999999zz"
    for _ in range(5000):
        deep, other = [deep], [other]
    assert comparable(deep) == comparable(other)
