"""The diff blames the right step (issue 10): metadata-only response drift, reordered
parallel calls, long values shown where they differ, header variants, errors in text,
repeats with distinct errors. Bugcases 19, 28, 29, 31 where ../shared/real is present."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def test_diff_cli_exit_0_for_reordered_calls(real: Path) -> None:
    folder = real / "bugcases" / "29_parallel_calls_reordered"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", "--json",
         folder / "a.jsonl", folder / "b.jsonl"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    doc = json.loads(done.stdout)
    assert doc["first_divergence"] is None
    assert {r["status"] for r in doc["rows"]} == {"moved"}


# -- long values ------------------------------------------------------------------------------------
@given(st.text(max_size=60), st.text(min_size=1, max_size=5), st.text(min_size=1, max_size=5))
def test_first_difference_is_the_first_differing_character(prefix: str, x: str, y: str) -> None:
    a, b = prefix + x, prefix + y
    i = first_difference(a, b)
    assert a[:i] == b[:i]
    assert i == min(len(a), len(b)) or a[i] != b[i]


def test_case_31_long_value_shows_where_it_differs(real: Path) -> None:
    folder = real / "bugcases" / "31_long_value_differs_late"
    a, b = load(folder / "a.jsonl"), load(folder / "b.jsonl")
    where = spot(a[0].args["system"], b[0].args["system"], 30)
    assert where.position == 192
    assert "24 hours" in where.a and "48 hours" in where.b
    for columns in ("60", "80", "200"):
        done = subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff",
             folder / "a.jsonl", folder / "b.jsonl"],
            capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "COLUMNS": columns},
        )  # fmt: skip
        flat = " ".join(done.stdout.split())
        assert "at character 192:" in flat
        assert "24 hours" in flat and "48 hours" in flat
    with pytest.raises(CassetteMiss) as info:
        Replayer(a)(b[0].tool, b[0].args)
    assert "at character 192:" in str(info.value)
    assert "24 hours" in str(info.value) and "48 hours" in str(info.value)


def test_app_detail_shows_long_values_around_the_difference() -> None:
    from cassette_tui.core.diff.model import Change, DriftItem
    from cassette_tui.tui.text.detail import Limits, drift_lines

    base = "x" * 300
    item = DriftItem("$.s", base + "A tail", base + "B tail", Change.VALUE_CHANGED, "args")
    text = drift_lines([item], Limits(), {}).plain
    assert "at character 301:" in text and "A tail" in text and "B tail" in text


# -- headers that change the answer ------------------------------------------------------------------
def test_case_19_accept_header_is_part_of_the_key(real: Path, tmp_path: Path) -> None:
    folder = real / "bugcases" / "19_headers_only_variants"
    out = tmp_path / "h.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "import", folder / "export.yaml", "-o", out],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    c = load(out)
    assert c[0].args["headers"] == {"Accept": ["application/json"]}
    assert c.key(0) != c.key(1)
    assert not [f for f in lint(c) if f.kind == "repeated_key"]
    replay = subprocess.run(
        [sys.executable, folder / "replay_csv_first.py", out],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "CASSETTE_REPORT": ""},
    )  # fmt: skip
    assert "application/json" not in replay.stdout  # never the JSON body for a CSV ask
    assert "CassetteMiss" in replay.stderr
    csv = Replayer(c)("http", {**c[1].args})
    assert csv["headers"]["Content-Type"] == ["text/csv"]


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
