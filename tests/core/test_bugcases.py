"""The real bugcases of issue 2 (../shared/real/bugcases; skipped where absent)."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import (
    CassetteFormatError,
    CassetteMiss,
    NormalizationRules,
    Replayer,
    ReplayExhausted,
    load,
    misses_turned_hits,
    save,
)
from cassette_tui.core.format.digest import digest
from cassette_tui.core.scan.lint import lint


@pytest.fixture
def bugcases(real: Path) -> Path:
    return real / "bugcases"


def live_calls(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize(
    ("case", "path", "kind", "preset"),
    [
        ("01_uuid_in_args", "$.client_request_id", "uuid", "uuid"),
        ("02_timestamp_in_args", "$.since", "timestamp", "timestamp"),
    ],
)
def test_volatile_miss_names_path_and_kind_and_preset_turns_it_into_a_hit(
    bugcases: Path, case: str, path: str, kind: str, preset: str
) -> None:
    folder = bugcases / case
    (call,) = live_calls(folder / "live_calls.jsonl")
    strict = Replayer(load(folder / "recorded.jsonl"))
    with pytest.raises(CassetteMiss) as info:
        strict(call["tool"], call["args"])
    miss = info.value
    assert miss.tool == call["tool"]
    (cand,) = miss.nearest
    assert cand["seq"] == 1
    (diff,) = cand["differences"]
    assert diff["path"] == path
    assert diff["kind"] == kind
    assert path in str(miss) and f"[{kind}]" in str(miss)

    rules = NormalizationRules.from_presets([preset])
    turned = misses_turned_hits(load(folder / "recorded.jsonl"), [call], rules)
    assert [(t.n, t.seqs) for t in turned] == [(1, (1,))]
    loose = Replayer(load(folder / "recorded.jsonl", rules=rules))
    recorded = load(folder / "recorded.jsonl")[0].response
    assert loose(call["tool"], call["args"]) == recorded


def test_03_key_order_is_the_same_call(bugcases: Path) -> None:
    a = load(bugcases / "03_json_key_order" / "a.jsonl")
    b = load(bugcases / "03_json_key_order" / "b.jsonl")
    assert a.key(0) == b.key(0)
    assert Replayer(a)(b[0].tool, b[0].args) == {"ok": True}


@pytest.mark.parametrize(
    ("case", "file", "expected"),
    [
        (
            "05_repeated_identical_calls",
            "recorded.jsonl",
            [{"state": "running"}, {"state": "done"}],
        ),
        (
            "06_identical_calls_order",
            "recorded.jsonl",
            [{"processing": True}, {"processing": False, "username": "test_user"}],
        ),
        (
            "07_retry_after_error",
            "fail.jsonl",
            [{"error": "rate_limited", "status": 429}, {"reservation_id": "HATHAT"}],
        ),
    ],
)
def test_repeated_calls_replay_in_recorded_order_then_fail_clearly(
    bugcases: Path, case: str, file: str, expected: list[Any]
) -> None:
    cassette = load(bugcases / case / file)
    tool, args = cassette[0].tool, cassette[0].args
    replay = Replayer(cassette)
    assert [replay(tool, args), replay(tool, args)] == expected
    with pytest.raises(ReplayExhausted, match="call #3 of a key recorded twice"):
        replay(tool, args)
    report = replay.report()
    assert report["repeats"] == [
        {"tool": tool, "digest": cassette.digest(0), "calls": 3, "recorded": 2}
    ]
    assert [c["outcome"] for c in report["calls"]] == ["hit", "hit", "exhausted"]
    assert [c["seq"] for c in report["calls"]] == [1, 2, None]


def test_05_live_calls_against_the_recording(bugcases: Path) -> None:
    folder = bugcases / "05_repeated_identical_calls"
    replay = Replayer(load(folder / "recorded.jsonl"), repeat="last")
    got = [replay(c["tool"], c["args"]) for c in live_calls(folder / "live_calls.jsonl")]
    assert got == [{"state": "running"}, {"state": "done"}, {"state": "done"}]


def test_08_base64_binary_round_trips_byte_exactly(bugcases: Path, tmp_path: Path) -> None:
    src = bugcases / "08_binary_gzip_body" / "recorded.jsonl"
    cassette = load(src)
    data = base64.b64decode(cassette[0].response["data"])
    assert gzip.decompress(data)  # real gzip bytes
    out = save(cassette, tmp_path / "copy.jsonl")
    again = load(out)
    assert base64.b64decode(again[0].response["data"]) == data
    assert again[0].response == cassette[0].response


def test_08_gzip_decoded_as_text_is_flagged_and_the_envelope_is_not(bugcases: Path) -> None:
    findings = lint(load(bugcases / "08_binary_gzip_body" / "recorded.jsonl"))
    binary = [f for f in findings if f.kind == "binary_as_text"]
    assert [(f.seq, f.path) for f in binary] == [(2, "$.response.text")]


def test_11_secret_case_loads(bugcases: Path) -> None:
    cassette = load(bugcases / "11_secret_in_args" / "recorded.jsonl")
    assert len(cassette) == 1 and cassette[0].tool == "call_api"


def test_12_empty_cassette_has_zero_entries(bugcases: Path) -> None:
    assert len(load(bugcases / "12_empty_cassette" / "empty.jsonl")) == 0
    assert len(load(bugcases / "12_empty_cassette" / "nonempty.jsonl")) == 1


def test_13_truncated_strict_names_the_line_and_lenient_keeps_line_1(bugcases: Path) -> None:
    path = bugcases / "13_truncated_by_crash" / "truncated.jsonl"
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line == 2
    assert info.value.truncated
    assert str(path) in str(info.value)
    cassette = load(path, lenient=True)
    assert [e.seq for e in cassette] == [1]
    assert cassette.report.dropped_lines == 1


def test_18_check_reports_the_stale_stored_digest(bugcases: Path) -> None:
    cassette = load(bugcases / "18_stale_stored_digest" / "edited.jsonl")
    (finding,) = [f for f in lint(cassette) if f.kind == "stale_digest"]
    assert finding.seq == 1
    assert cassette.stored_digest(0) in finding.message
    assert digest(cassette[0].args) in finding.message
    assert "args edited after recording, or different normalization rules" in finding.message
