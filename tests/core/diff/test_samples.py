"""Each sample cassette pair produces its signature (sample_cassettes/README.md)."""

from __future__ import annotations

import pytest
from cassette_tui.core.diff.model import Change, Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import load
from cassette_tui.core.importers.sources import open_cassette


def pair(samples, name: str, align: str = "seq"):
    folder = samples / "signatures" / name
    return diff_cassettes(load(folder / "a.jsonl"), load(folder / "b.jsonl"), align)


def findings(result, kind: str):
    return [f for f in result.findings if f.kind == kind]


def test_every_sample_is_a_valid_cassette_with_matching_digests(samples) -> None:
    files = sorted(samples.rglob("*.jsonl"))
    assert len(files) == 8
    for path in files:
        c = open_cassette(path)
        assert 2 <= len(c) <= 12
        assert [c.stored_digest(i) for i in range(len(c))] == [c.digest(i) for i in range(len(c))]
        assert all("recorded_at" in e.extra and "duration_ms" in e.extra for e in c)


def test_retry_budget_story(samples) -> None:
    fail, fix = load(samples / "fail.jsonl"), load(samples / "fix.jsonl")
    result = diff_cassettes(fail, fix, "key")
    assert [(r.a_seq, r.b_seq, r.status) for r in result.rows] == [
        (1, 1, Status.SAME),
        (2, None, Status.ONLY_A),
        (3, None, Status.ONLY_A),
        (4, None, Status.ONLY_A),
        (5, 2, Status.RESPONSE_DRIFT),
        (6, 3, Status.ARGS_DRIFT),
        (7, 4, Status.SAME),
    ]
    storm = [f for f in findings(result, "repeated_key") if f.evidence.get("count_a") == 5]
    assert storm[0].evidence["patterns"]["a"]["pattern"] == "retry_storm"
    assert storm[0].evidence["count_b"] == 2
    (stale,) = findings(result, "stale_response")
    assert stale.seqs == {"a": [5], "b": [2]}
    (down,) = findings(result, "downstream_drift")
    assert down.evidence["source_a"]["seq"] == 5 and down.evidence["source_b"]["seq"] == 2
    assert findings(result, "error_response")[0].seqs["a"] == [2, 3, 4]
    # by seq: the runs part at seq 2, a 429 against the fresh answer
    by_seq = diff_cassettes(fail, fix)
    assert by_seq.first_divergence == 1
    assert by_seq.rows[1].status is Status.RESPONSE_DRIFT and by_seq.rows[1].error_a


@pytest.mark.parametrize("align", ["seq", "key"])
def test_volatile_args_signature(samples, align) -> None:
    result = pair(samples, "volatile_args", align)
    misses = {f.evidence["tool"]: f for f in findings(result, "args_miss")}
    assert misses["get_metrics"].evidence["presets"] == ["timestamp"]
    assert misses["create_ticket"].evidence["presets"] == ["uuid"]
    assert all(f.evidence["matches"] == 1 for f in misses.values())
    assert all(f.evidence["over_normalization"] == [] for f in misses.values())


@pytest.mark.parametrize("align", ["seq", "key"])
def test_repeated_key_signature(samples, align) -> None:
    result = pair(samples, "repeated_key", align)
    by_tool = {
        f.evidence["key"][0]: f for f in findings(result, "repeated_key") if "key" in f.evidence
    }
    assert (by_tool["get_job"].evidence["count_a"], by_tool["get_job"].evidence["count_b"]) == (
        4,
        2,
    )
    assert by_tool["get_job"].seqs == {"a": [1, 3, 5, 7], "b": [1, 3]}
    loops = [f for f in findings(result, "repeated_key") if f.evidence.get("pattern") == "loop"]
    assert loops and loops[0].evidence["side"] == "a"
    assert [k[0] for k in loops[0].evidence["keys"]] == ["get_job", "read_file"]


@pytest.mark.parametrize("align", ["seq", "key"])
def test_stale_response_signature(samples, align) -> None:
    result = pair(samples, "stale_response", align)
    assert [r.status for r in result.rows] == [
        Status.RESPONSE_DRIFT,
        Status.RESPONSE_DRIFT,
        Status.SAME,
    ]
    stale = {f.evidence["tool"]: f for f in findings(result, "stale_response")}
    assert set(stale) == {"get_config", "http_get"}
    assert stale["get_config"].evidence["number_type"] == ["$.timeout_s"]
    changes = {d.path: d.change for d in result.drift(0)}
    assert changes["$.timeout_s"] is Change.NUMBER_TYPE
    assert changes["$.retry_budget"] is Change.VALUE_CHANGED


def test_real_bugcase_07_diagnosis(real) -> None:
    case = real / "bugcases" / "07_retry_after_error"
    result = diff_cassettes(load(case / "fail.jsonl"), load(case / "pass.jsonl"), "key")
    first = result.findings[0]
    assert first.kind == "first_divergence" and first.seqs == {"a": [1], "b": []}
    assert first.evidence["repeat_of_seq"] == 2 and first.evidence["repeat_pairs_with"] == 1
    assert first.evidence["repeat_error"] is True
