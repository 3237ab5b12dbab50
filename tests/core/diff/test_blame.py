"""The diff blames the right step: metadata-only response drift (volatile kinds at any
depth), reordered parallel calls, two different tools at one step side by side, long
values shown where they differ, header variants, errors in text, repeats with distinct
errors. Bugcases 28, 29, 31 where ../shared/real is present; the command's and the app's
side are in tests/cli/test_diff_cli.py and tests/tui/test_app_long_value.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, Replayer, diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.format.outcome import is_error_outcome
from cassette_tui.core.format.textspot import first_difference, spot
from cassette_tui.core.keys.volatile import comparable
from cassette_tui.core.scan.lint import lint
from hypothesis import given
from hypothesis import strategies as st
from support.cases import other_call_pair
from support.factory import entry, make_cassette, write_cassette


def llm(content: str, rid: str, created: int, fp: str) -> dict:
    return {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": "gpt-4o",
        "system_fingerprint": fp,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }


# -- volatile response metadata ---------------------------------------------------------------
@pytest.mark.parametrize("align", ["seq", "key"])
def test_case_28_metadata_only_row_is_not_the_divergence(real: Path, align: str) -> None:
    folder = real / "bugcases" / "28_volatile_response_metadata"
    result = diff_cassettes(load(folder / "a.jsonl"), load(folder / "b.jsonl"), align)
    statuses = [r.status for r in result.rows]
    assert statuses == [Status.METADATA_DRIFT, Status.SAME, Status.RESPONSE_DRIFT]
    assert result.first_divergence == 2
    assert {d.path for d in result.drift(0)} == {"$.id", "$.created", "$.system_fingerprint"}
    stale = [f for f in result.findings if f.kind == "stale_response"]
    assert all(1 not in f.side_seqs("a") for f in stale)


@pytest.mark.parametrize(
    ("a", "b", "metadata"),
    [
        (
            llm("x", "chatcmpl-1", 1715785203, "fp_1"),
            llm("x", "chatcmpl-2", 1715871611, "fp_2"),
            True,
        ),
        (llm("x", "c-1", 1, "f"), llm("y", "c-1", 1, "f"), False),
        (
            {"status": 200, "headers": {"Date": "Mon, 1 Jan", "X-Request-Id": "a1"}, "body": "ok"},
            {"status": 200, "headers": {"Date": "Tue, 2 Jan", "X-Request-Id": "b2"}, "body": "ok"},
            True,
        ),
        (
            {"status": 200, "headers": {"Content-Type": "a"}, "body": "ok"},
            {"status": 200, "headers": {"Content-Type": "b"}, "body": "ok"},
            False,
        ),
        (
            {"job": "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11"},
            {"job": "b2e94f10-77c3-4a8e-8d2b-5c6a1f0e9d32"},
            True,
        ),
        ({"at": "2024-05-15T10:00:03Z", "n": 1}, {"at": "2024-05-16T11:00:00Z", "n": 1}, True),
        ({"flight_date": "2024-06-01"}, {"flight_date": "2024-06-02"}, False),  # domain date
        ({"id": "O-1"}, {"id": "O-2"}, False),  # a tool's own id is the answer
    ],
    ids=["llm", "llm-answer", "http-date", "http-type", "uuid", "datetime", "date", "id"],
)
def test_metadata_kinds(a: dict, b: dict, metadata: bool) -> None:
    ca = make_cassette([("t", {"q": 1}, a)])
    cb = make_cassette([("t", {"q": 1}, b)])
    (row,) = diff_cassettes(ca, cb).rows
    assert row.status is (Status.METADATA_DRIFT if metadata else Status.RESPONSE_DRIFT)
    assert diff_cassettes(ca, cb).is_same is metadata


# one rule for metadata places (volatile.metadata_place_reason): the diff's metadata drift and
# volatile.comparable (repeats) agree. The diff used to take volatile headers only under a
# top-level ``headers`` object, comparable under one at any depth; both now take any depth
# (an HTTP response a tool wraps in its answer), and a request or trace id key at any depth.
@pytest.mark.parametrize(
    ("a", "b", "metadata"),
    [
        (
            {
                "response": {
                    "status": 200,
                    "headers": {
                        "Date": "Mon, 1 Jan 2026 10:00:00 GMT",
                        "X-Ratelimit-Remaining-Requests": "59",
                    },
                    "body": "ok",
                }
            },
            {
                "response": {
                    "status": 200,
                    "headers": {
                        "Date": "Tue, 2 Jan 2026 11:00:00 GMT",
                        "X-Ratelimit-Remaining-Requests": "58",
                    },
                    "body": "ok",
                }
            },
            True,
        ),
        (
            {"results": [{"headers": {"cf-ray": "8a1b2c3d"}, "n": 1}]},
            {"results": [{"headers": {"cf-ray": "9f8e7d6c"}, "n": 1}]},
            True,
        ),
        (
            {"response": {"headers": {"Date": "Mon, 1 Jan 2026"}, "body": "one"}},
            {"response": {"headers": {"Date": "Tue, 2 Jan 2026"}, "body": "two"}},
            False,  # the body differs too: the answer changed
        ),
        (
            {"response": {"headers": {"Content-Type": "text/plain"}}},
            {"response": {"headers": {"Content-Type": "text/html"}}},
            False,  # not a volatile header
        ),
        ({"meta": {"trace_id": "abc"}, "n": 1}, {"meta": {"trace_id": "def"}, "n": 1}, True),
    ],
    ids=["nested-headers", "headers-in-list", "nested-headers-and-body", "nested-type", "id-key"],
)
def test_metadata_places_at_any_depth(a: dict, b: dict, metadata: bool) -> None:
    ca = make_cassette([("t", {"q": 1}, a)])
    cb = make_cassette([("t", {"q": 1}, b)])
    (row,) = diff_cassettes(ca, cb).rows
    assert row.status is (Status.METADATA_DRIFT if metadata else Status.RESPONSE_DRIFT)
    assert (comparable(a) == comparable(b)) is metadata  # the same rule in repeats


# -- reordered parallel calls ---------------------------------------------------------------------
@pytest.mark.parametrize("align", ["seq", "key"])
def test_case_29_reordered_parallel_calls_are_moved_not_drift(real: Path, align: str) -> None:
    folder = real / "bugcases" / "29_parallel_calls_reordered"
    result = diff_cassettes(load(folder / "a.jsonl"), load(folder / "b.jsonl"), align)
    assert result.is_same
    assert Status.MOVED in {r.status for r in result.rows}
    assert not any(r.status is Status.ARGS_DRIFT for r in result.rows)
    assert not [f for f in result.findings if "built the args" in f.action]


def test_reorder_with_another_answer_is_still_drift() -> None:
    a = make_cassette([("w", {"c": "L"}, 21), ("w", {"c": "O"}, 4)])
    b = make_cassette([("w", {"c": "O"}, 5), ("w", {"c": "L"}, 21)])
    result = diff_cassettes(a, b)
    assert not result.is_same
    assert Status.MOVED not in {r.status for r in result.rows}


# -- long values ------------------------------------------------------------------------------------
@given(st.text(max_size=60), st.text(min_size=1, max_size=5), st.text(min_size=1, max_size=5))
def test_first_difference_is_the_first_differing_character(prefix: str, x: str, y: str) -> None:
    a, b = prefix + x, prefix + y
    i = first_difference(a, b)
    assert a[:i] == b[:i]
    assert i == min(len(a), len(b)) or a[i] != b[i]


def test_shared_key_with_header_and_response_variants_is_named(tmp_path: Path) -> None:
    args = {"method": "GET", "uri": "https://x.test/e", "body": None}
    path = write_cassette(
        tmp_path / "old.jsonl",
        entry(
            1,
            "http",
            args,
            response={"body": "{}"},
            request_headers={"Accept": ["application/json"]},
        ),
        entry(2, "http", args, response={"body": "a,b"}, request_headers={"Accept": ["text/csv"]}),
    )
    (finding,) = lint(load(path))
    assert finding.kind == "header_variants"
    assert "Accept" in finding.message and "by position" in finding.message
    assert "retry storm" not in finding.message


# -- errors in text, repeats -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("response", "error"),
    [
        ("Error: user not found", True),
        ({"text": "Error: payment amount does not add up"}, True),
        ({"content": [{"type": "text", "text": "boom"}], "isError": True}, True),
        ({"status": 503}, True),
        ({"text": "No error: all good"}, False),
        ("Errors are rare", False),
        ({"text": "Error: x", "more": 1}, False),
    ],
)
def test_errors_in_text_are_errors(response: object, error: bool) -> None:
    assert is_error_outcome(False, response) is error


def test_errors_in_text_flag_the_row() -> None:
    a = make_cassette([("book", {"f": 1}, {"text": "Error: seat taken"})])
    b = make_cassette([("book", {"f": 1}, {"text": "booked"})])
    (row,) = diff_cassettes(a, b).rows
    assert row.error_a and not row.error_b


def test_repeats_that_failed_differently_are_not_a_retry_storm(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "bash", {"cmd": "x"}, error={"type": "ToolError", "message": "timeout"}),
        entry(2, "bash", {"cmd": "x"}, error={"type": "ToolError", "message": "permission denied"}),
    )
    (finding,) = lint(load(path))
    assert finding.kind == "distinct_errors"
    assert "not a retry storm" in finding.message
    same = write_cassette(
        tmp_path / "s.jsonl",
        entry(1, "bash", {"cmd": "x"}, error={"type": "E", "message": "429"}),
        entry(2, "bash", {"cmd": "x"}, error={"type": "E", "message": "429"}),
    )
    (retry,) = lint(load(same))
    assert retry.kind == "repeated_key" and "retry storm" in retry.message


# -- response metadata: the volatile kinds the args side knows --------------------------------
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"at": 1715785203, "n": 1}, {"at": 1715871611, "n": 1}),  # epoch seconds
        ({"at": 1715785203123, "n": 1}, {"at": 1715871611456, "n": 1}),  # epoch ms
        ({"request_id": "req_abc123", "n": 1}, {"request_id": "req_xyz789", "n": 1}),
    ],
    ids=["epoch", "epoch-ms", "request-id"],
)
def test_volatile_kinds_in_a_response_are_metadata_drift(a: dict, b: dict) -> None:
    ca = make_cassette([("t", {"q": 1}, a), ("t", {"q": 2}, {"v": 1})])
    cb = make_cassette([("t", {"q": 1}, b), ("t", {"q": 2}, {"v": 2})])
    result = diff_cassettes(ca, cb)
    assert [r.status for r in result.rows] == [Status.METADATA_DRIFT, Status.RESPONSE_DRIFT]
    assert result.first_divergence == 1  # shown, but not the first divergence
    stale = [f for f in result.findings if f.kind == "stale_response"]
    assert all(1 not in f.side_seqs("a") for f in stale)


def test_case_31_long_value_shows_where_it_differs(real: Path) -> None:
    folder = real / "bugcases" / "31_long_value_differs_late"
    a, b = load(folder / "a.jsonl"), load(folder / "b.jsonl")
    where = spot(a[0].args["system"], b[0].args["system"], 30)
    assert where.position == 192
    assert "24 hours" in where.a and "48 hours" in where.b
    with pytest.raises(CassetteMiss) as info:
        Replayer(a)(b[0].tool, b[0].args)
    assert "at character 192:" in str(info.value)
    assert "24 hours" in str(info.value) and "48 hours" in str(info.value)


def test_other_call_row_has_no_cross_tool_drift_and_both_calls() -> None:
    a, b = other_call_pair()
    d = diff_cassettes(a, b, "seq")
    row = d.rows[1]
    assert row.status is Status.OTHER_CALL
    assert d.drift(1) == []  # no "tool $", no "args $.dest" of one tool against another
    assert d.calls(row) == {
        "a": {"seq": 2, "tool": "search_direct", "args": {"origin": "ATL", "dest": "ORD"}},
        "b": {
            "seq": 2,
            "tool": "search_onestop",
            "args": {"origin": "ATL", "dest": "PHL", "max": 2},
        },
    }
    doc = d.to_json()
    (other,) = [r for r in doc["rows"] if r["status"] == "other_call"]
    assert other["drift"] == [] and other["tool"] == "search_direct"
    assert other["tool_b"] == "search_onestop"
    assert other["calls"]["b"]["args"]["max"] == 2
    same_tool = [r for r in doc["rows"] if r["status"] == "args_drift"]
    assert same_tool and same_tool[0]["calls"] is None and same_tool[0]["drift"]
    first = d.findings[0]
    assert first.kind == "first_divergence"
    assert 'A called search_direct {"origin": "ATL", "dest": "ORD"}' in first.message
    assert 'B called search_onestop {"origin": "ATL", "dest": "PHL", "max": 2}' in first.message
    assert "args $." not in first.message and "tool $" not in first.message
