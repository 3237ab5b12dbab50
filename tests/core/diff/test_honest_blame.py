"""The blame is honest (issue 28): a business error is not "a transient failure (rate
limit, outage)"; a tool that varies within one run is nondeterministic, not stale; a list
in another order or with one item inserted reads so, not index by index."""

from __future__ import annotations

import pytest
from cassette_tui.core.diff._error_kind import REFUSAL, TRANSIENT, UNKNOWN, error_kind
from cassette_tui.core.diff.result import diff_cassettes
from support.factory import make_cassette


@pytest.mark.parametrize(
    ("value", "is_error", "kind"),
    [
        ({"status": 429, "error": "rate_limited"}, False, TRANSIENT),
        ({"status_code": 503}, False, TRANSIENT),
        ({"status": 404, "error": "no such order"}, False, REFUSAL),
        ({"status": {"code": 422}}, False, REFUSAL),
        ({"type": "TimeoutError", "message": "timed out"}, True, TRANSIENT),
        ({"type": "RateLimited", "message": ""}, True, TRANSIENT),
        ({"type": "ConnectionError", "message": "reset"}, True, TRANSIENT),
        (
            {"type": "RefundDenied", "message": "RefundDenied: outside the 14-day window"},
            True,
            REFUSAL,
        ),
        ({"type": "PolicyViolation", "message": "x"}, True, REFUSAL),
        ({"type": "ValueError", "message": "amount must be positive"}, True, REFUSAL),
        ({"type": "RuntimeError", "message": "boom"}, True, UNKNOWN),
        ({"text": "Error: payment amount does not add up"}, False, REFUSAL),  # tau-bench
        (
            {
                "isError": True,
                "content": [{"type": "text", "text": "Service temporarily unavailable"}],
            },
            False,
            TRANSIENT,
        ),
        ({"ok": False}, False, UNKNOWN),
    ],
)
def test_error_kinds(value: object, is_error: bool, kind: str) -> None:
    assert error_kind(value, is_error) == kind


def _pair(failed: dict) -> tuple:
    a = make_cassette([("refund", {"order": 1}, failed), ("done", {}, 1)])
    b = make_cassette([("refund", {"order": 1}, {"ok": True}), ("done", {}, 1)])
    return a, b


def test_a_refusal_is_not_blamed_on_the_environment() -> None:
    a, b = _pair({"__error__": "RefundDenied: outside the 14-day window"})
    result = diff_cassettes(a, b)
    (found,) = [f for f in result.findings if f.kind == "error_response"]
    assert "refusal by the tool's own rules" in found.action
    assert not found.action.startswith("A transient failure")
    assert found.evidence["error_kind"] == REFUSAL


def test_a_rate_limit_still_reads_as_transient() -> None:
    a, b = _pair({"status": 429, "error": "rate_limited"})
    (found,) = [f for f in diff_cassettes(a, b).findings if f.kind == "error_response"]
    assert found.action.startswith("A transient failure (rate limit, outage)")
    assert found.evidence["error_kind"] == TRANSIENT


def test_a_tool_that_varies_within_one_run_is_nondeterministic_not_stale() -> None:
    a = make_cassette([("roll", {"n": 1}, {"v": 3}), ("roll", {"n": 1}, {"v": 5}), ("done", {}, 1)])
    b = make_cassette([("roll", {"n": 1}, {"v": 6}), ("roll", {"n": 1}, {"v": 5}), ("done", {}, 1)])
    (found,) = [f for f in diff_cassettes(a, b).findings if f.kind == "stale_response"]
    assert found.evidence["nondeterministic"] is True
    assert found.evidence["varying"] == {"side": "a", "seqs": [1, 2]}
    assert found.action.startswith("A nondeterministic tool, not a stale recording")
    assert "a nondeterministic tool" in found.message


def test_one_answer_per_run_that_differs_is_still_stale() -> None:
    a = make_cassette([("search", {"q": 1}, {"top": "x"}), ("done", {}, 1)])
    b = make_cassette([("search", {"q": 1}, {"top": "y"}), ("done", {}, 1)])
    (found,) = [f for f in diff_cassettes(a, b).findings if f.kind == "stale_response"]
    assert found.evidence["nondeterministic"] is False
    assert found.action.startswith("The recording is stale for this call")


def test_the_diff_text_says_a_list_was_reordered_or_gained_one_item(tmp_path) -> None:
    from support.factory import entry, write_cassette
    from support.run import cli

    hits = [{"path": f"docs/{n}.md"} for n in "abcdefgh"]
    a = write_cassette(tmp_path / "a.jsonl", entry(1, "search", {"q": 1}, response={"hits": hits}))
    b = write_cassette(
        tmp_path / "b.jsonl", entry(1, "search", {"q": 1}, response={"hits": hits[::-1]})
    )
    out = cli("diff", str(a), str(b)).stdout
    assert "↕ response $.hits  same 8 items, another order" in out
    c = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "search", {"q": 1}, response={"hits": [{"path": "new"}, *hits]}),
    )
    out = cli("diff", str(a), str(c)).stdout
    assert '+ response $.hits[0]  + {"path": "new"} (absent in A)' in out
    assert "$.hits[1]" not in out  # not every later index as changed


def test_by_seq_a_one_sided_finding_names_that_sides_tool() -> None:
    a = make_cassette([("search", {"q": 1}, {"ok": 1}), ("search", {"q": 2}, {"ok": 2})])
    b = make_cassette(
        [
            ("search", {"q": 1}, {"ok": 1}),
            ("read_file", {"p": "x"}, {"status": 404, "error": "no such file"}),
        ]
    )
    result = diff_cassettes(a, b, align="seq")
    assert result.rows[1].tool == "search"  # the row is named by A's tool
    (found,) = [f for f in result.findings if f.kind == "error_response"]
    assert "B seq 2 read_file returned HTTP 404" in found.message


def test_a_volatile_value_the_agent_passes_on_is_data_not_metadata() -> None:
    from cassette_tui.core.diff.model import Status

    def run(now: str, rid: str, passes: bool) -> object:
        since = now if passes else "2026-01-01T00:00:00Z"
        return make_cassette([
            ("clock", {}, {"now": now, "request_id": rid}),
            ("events", {"since": since}, {"n": 1}),
        ])  # fmt: skip

    passed_on = diff_cassettes(
        run("2026-12-01T10:00:00Z", "req-1", True), run("2026-12-01T10:05:00Z", "req-2", True),
        align="seq",
    )  # fmt: skip
    assert passed_on.rows[0].status is Status.RESPONSE_DRIFT  # `now` went into the next call
    kept = diff_cassettes(
        run("2026-12-01T10:00:00Z", "req-1", False), run("2026-12-01T10:05:00Z", "req-2", False),
        align="seq",
    )  # fmt: skip
    assert kept.rows[0].status is Status.METADATA_DRIFT  # only metadata, used by no call
