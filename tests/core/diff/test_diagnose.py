"""Findings of a diff (core/diff/_diagnose.py)."""

from __future__ import annotations

from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry


def cassette(*calls: tuple) -> Cassette:
    return Cassette.from_entries(
        Entry(seq, tool, args, response) for seq, (tool, args, response) in enumerate(calls, 1)
    )


def kinds(result) -> list[str]:
    return [f.kind for f in result.findings]


def only(result, kind):
    found = [f for f in result.findings if f.kind == kind]
    assert found, f"no {kind} in {kinds(result)}"
    return found


def test_same_runs_have_no_findings() -> None:
    c = cassette(("a", {}, 1), ("a", {}, 1))
    result = diff_cassettes(c, c)
    assert result.is_same and result.findings == []


def test_every_finding_names_evidence_and_action() -> None:
    a = cassette(("s", {"q": 1}, {"top": "x"}), ("r", {"p": "xyz1"}, 1))
    b = cassette(("s", {"q": 1}, {"top": "y"}), ("r", {"p": "xyz2"}, 1))
    for f in diff_cassettes(a, b, "key").findings:
        assert f.message and f.action
        assert set(f.seqs) == {"a", "b"} and (f.seqs["a"] or f.seqs["b"])


def test_first_divergence_comes_first_with_both_steps() -> None:
    a = cassette(("s", {"q": 1}, 1), ("r", {"p": 1}, 1))
    b = cassette(("s", {"q": 1}, 1), ("w", {"p": 1}, 1))
    first = diff_cassettes(a, b).findings[0]
    assert first.kind == "first_divergence"
    assert first.seqs == {"a": [2], "b": [2]}
    assert "A seq 2 r vs B seq 2 w" in first.message
    assert first.evidence["status"] == "other_call"


def test_args_miss_proposes_the_preset_and_checks_over_normalization() -> None:
    a = cassette(
        ("create", {"id": "6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c", "t": "x"}, {"ok": 1}),
    )
    b = cassette(
        ("create", {"id": "c03e9b51-8d2f-4a6e-b7c1-0e4f9d2a7c83", "t": "x"}, {"ok": 1}),
    )
    (miss,) = only(diff_cassettes(a, b), "args_miss")
    assert miss.evidence["presets"] == ["uuid"]
    assert miss.evidence["paths"] == {"$.id": "uuid"}
    assert miss.evidence["matches"] == 1 and miss.evidence["over_normalization"] == []
    assert "preset uuid" in miss.message and "merges no other" in miss.message


def test_args_miss_reports_over_normalization() -> None:
    # two distinct recorded calls in B whose only difference is a uuid, with different
    # responses: the uuid preset would merge them
    u1, u2, u3 = (
        "6f1c2a9e-3b7d-4e21-9a0c-5d8e7f6a1b2c",
        "c03e9b51-8d2f-4a6e-b7c1-0e4f9d2a7c83",
        "0a0b0c0d-1111-4222-8333-944455556666",
    )
    a = cassette(("get", {"user": u1}, {"name": "ann"}))
    b = cassette(("get", {"user": u2}, {"name": "ann"}), ("get", {"user": u3}, {"name": "bob"}))
    (miss,) = only(diff_cassettes(a, b), "args_miss")
    (merged,) = miss.evidence["over_normalization"]
    assert merged["seqs"] == [1, 2] and merged["distinct_responses"] == 2
    assert "over-normalizes" in miss.message
    assert "Scope the rule" in miss.action


def test_ordinary_args_drift_is_not_an_args_miss() -> None:
    a = cassette(("read", {"path": "docs/a.md"}, 1))
    b = cassette(("read", {"path": "docs/b.md"}, 1))
    assert "args_miss" not in kinds(diff_cassettes(a, b))


def test_downstream_drift_points_at_the_earlier_response() -> None:
    a = cassette(
        ("search", {"q": "x"}, {"hits": [{"id": "order-771"}]}), ("get", {"id": "order-771"}, 1)
    )
    b = cassette(
        ("search", {"q": "x"}, {"hits": [{"id": "order-990"}]}), ("get", {"id": "order-990"}, 1)
    )
    (down,) = only(diff_cassettes(a, b), "downstream_drift")
    assert down.evidence["source_a"] == {
        "seq": 1,
        "tool": "search",
        "path": "$.hits[0].id",
        "row": 1,
        "status": "response_drift",
    }
    assert down.evidence["source_b"]["seq"] == 1
    assert down.seqs == {"a": [1, 2], "b": [1, 2]}
    assert "likelier cause" in down.message


def test_stale_response_and_number_type() -> None:
    a = cassette(("cfg", {"s": "x"}, {"timeout": 30, "v": 1}))
    b = cassette(("cfg", {"s": "x"}, {"timeout": 30.0, "v": 2}))
    (stale,) = only(diff_cassettes(a, b), "stale_response")
    assert stale.evidence["number_type"] == ["$.timeout"]
    assert "re-record" in stale.action


def test_error_response_is_not_called_stale() -> None:
    a = cassette(("get", {"k": 1}, {"status": 503}))
    b = cassette(("get", {"k": 1}, {"status": 200, "v": 1}))
    result = diff_cassettes(a, b)
    assert "stale_response" not in kinds(result)
    (err,) = only(result, "error_response")
    assert "HTTP 503" in err.message and err.seqs["a"] == [1]


def test_repeated_key_reports_counts_on_both_sides_not_blame() -> None:
    poll = ("poll", {"job": 7}, {"state": "running"})
    a = cassette(poll, poll, poll, ("read", {"p": 1}, 1))
    b = cassette(poll, poll, ("read", {"p": 1}, 2))
    rep = [f for f in only(diff_cassettes(a, b, "key"), "repeated_key") if "key" in f.evidence]
    (f,) = rep
    assert (f.evidence["count_a"], f.evidence["count_b"]) == (3, 2)
    assert f.seqs == {"a": [1, 2, 3], "b": [1, 2]}
    assert f.evidence["patterns"]["a"]["pattern"] == "consecutive"
    assert "not the cause" in f.action


def test_equal_repeat_counts_are_not_what_tells_runs_apart() -> None:
    poll = ("poll", {"job": 7}, {"state": "running"})
    a = cassette(poll, poll, ("read", {"p": 1}, 1))
    b = cassette(poll, poll, ("read", {"p": 1}, 2))
    (f,) = only(diff_cassettes(a, b), "repeated_key")
    assert "not what tells them apart" in f.action


def test_retry_storm_after_errors() -> None:
    call = ("search", {"q": "x"}, {"status": 429})
    a = cassette(call, call, call, ("search", {"q": "x"}, {"status": 200}))
    b = cassette(("search", {"q": "x"}, {"status": 200}))
    (f,) = [f for f in only(diff_cassettes(a, b, "key"), "repeated_key") if "key" in f.evidence]
    assert f.evidence["patterns"]["a"] == {
        "pattern": "retry_storm",
        "run": 4,
        "start_seq": 1,
        "errors": 3,
    }
    assert "retry storm" in f.message


def test_loop_of_keys() -> None:
    job, log = ("job", {"id": 1}, {"s": "run"}), ("log", {"id": 1}, {"t": "..."})
    a = cassette(job, log, job, log, job, log, job)
    b = cassette(job, log, ("job", {"id": 1}, {"s": "done"}))
    loops = [f for f in diff_cassettes(a, b).findings if f.evidence.get("pattern") == "loop"]
    (loop,) = loops
    assert loop.evidence["side"] == "a" and loop.evidence["repetitions"] == 3
    assert loop.seqs["a"] == [1, 2, 3, 4, 5, 6]  # three whole cycles
    assert "B does not loop" in loop.message


def test_findings_are_json_serializable() -> None:
    import json

    a = cassette(("s", {"q": "2024-05-14T08:00:00Z"}, {"status": 429}))
    b = cassette(("s", {"q": "2024-05-15T08:00:00Z"}, {"v": 1}))
    json.dumps(diff_cassettes(a, b).to_json())
