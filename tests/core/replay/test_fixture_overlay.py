"""A pinned fixture overlays a base cassette or the live tools: its keys get the pinned
answer, every other call goes on as the mode says."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, wrap_dispatcher
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.replay.fixtures import PinnedFixtures
from cassette_tui.core.replay.report import ReplayReport

from tests.support.factory import entry, write_cassette


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_cassette(
        tmp_path / "base.jsonl",
        entry(1, "search_docs", {"q": "retry"}, response={"hits": ["a.md"]}),
        entry(2, "check_budget", {"team": "x"}, response={"left": 0}),
        entry(3, "read_file", {"path": "a.md"}, response={"text": "old"}),
    )


@pytest.fixture
def pin(tmp_path: Path) -> Path:
    # the flaky answer held fixed: the budget check answers 5, not the recorded 0
    return write_cassette(
        tmp_path / "check_budget-pin.jsonl",
        entry(1, "check_budget", {"team": "x"}, response={"left": 5}, pinned={"seq": 2}),
    )


def live(tool: str, args: dict) -> dict:
    return {"live": tool}


def test_replay_over_base_serves_the_pin_first(base: Path, pin: Path) -> None:
    dispatch = wrap_dispatcher(live, mode="replay", path=base, fixtures=[pin])
    assert dispatch("search_docs", {"q": "retry"}) == {"hits": ["a.md"]}
    assert dispatch("check_budget", {"team": "x"}) == {"left": 5}
    assert dispatch("check_budget", {"team": "x"}) == {"left": 5}  # held, never used up
    assert dispatch("read_file", {"path": "a.md"}) == {"text": "old"}
    report = ReplayReport.from_json(dispatch.report())
    assert [c.outcome for c in report.calls or ()] == ["hit", "pinned", "pinned", "hit"]
    assert report.unused_seqs == (2,)  # the base's own answer was never served
    with pytest.raises(CassetteMiss):  # a call neither holds is still a miss
        dispatch("other", {})


def test_a_one_entry_fixture_alone_misses_the_first_other_call(pin: Path) -> None:
    # today's trouble: replaying the fixture on its own stops at the agent's next call
    dispatch = wrap_dispatcher(live, mode="replay", path=pin)
    with pytest.raises(CassetteMiss):
        dispatch("search_docs", {"q": "retry"})


def test_live_mode_holds_the_pin_and_runs_the_rest_live(pin: Path) -> None:
    dispatch = wrap_dispatcher(live, mode="live", fixtures=[pin])
    assert dispatch("check_budget", {"team": "x"}) == {"left": 5}
    assert dispatch("search_docs", {"q": "retry"}) == {"live": "search_docs"}
    assert dispatch.report() == {"mode": "live", "cassette": None, "calls": 2, "pinned": 1}


def test_record_mode_records_the_pinned_answer_too(pin: Path, tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    dispatch = wrap_dispatcher(live, mode="record", path=out, fixtures=[pin])
    dispatch("check_budget", {"team": "x"})
    dispatch("search_docs", {"q": "retry"})
    dispatch.close()
    assert [e.response for e in load(out)] == [{"left": 5}, {"live": "search_docs"}]


def test_env_fixtures_and_the_first_fixture_wins(
    base: Path, pin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = write_cassette(
        tmp_path / "other.jsonl",
        entry(1, "check_budget", {"team": "x"}, response={"left": 9}),
        entry(2, "read_file", {"path": "a.md"}, response={"text": "pinned"}),
    )
    monkeypatch.setenv("CASSETTE_FIXTURES", f"{pin}:{other}")
    dispatch = wrap_dispatcher(live, mode="replay", path=base)
    assert dispatch("check_budget", {"team": "x"}) == {"left": 5}
    assert dispatch("read_file", {"path": "a.md"}) == {"text": "pinned"}


def test_a_pinned_error_is_raised(base: Path, tmp_path: Path) -> None:
    pin = write_cassette(
        tmp_path / "err.jsonl",
        entry(1, "search_docs", {"q": "retry"}, error={"type": "TimeoutError", "message": "slow"}),
    )
    dispatch = wrap_dispatcher(live, mode="replay", path=base, fixtures=[pin])
    with pytest.raises(Exception, match="slow"):
        dispatch("search_docs", {"q": "retry"})


def test_a_bad_fixture_names_its_file(base: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CassetteFormatError, match="bad.jsonl"):
        wrap_dispatcher(live, mode="replay", path=base, fixtures=[bad])
    with pytest.raises(ValueError, match="no fixture"):
        PinnedFixtures([])


def test_record_mode_records_a_pinned_error_as_it_was_pinned(tmp_path: Path) -> None:
    # `record --fixture` with a pinned error: the recording held the replayed class
    # ("ToolError[json.decoder.JSONDecodeError]", module cassette_tui...) and the
    # ToolError's own fields in attrs, so its replay no longer raised a JSONDecodeError
    import json

    error = {
        "type": "JSONDecodeError",
        "message": "Expecting value: line 1 column 1 (char 0)",
        "module": "json.decoder",
        "attrs": {"msg": "Expecting value", "doc": "x", "pos": 0, "lineno": 1, "colno": 1},
    }
    pin = write_cassette(tmp_path / "err.jsonl", entry(1, "parse", {"x": 1}, error=error))
    out = tmp_path / "rec.jsonl"
    dispatch = wrap_dispatcher(live, mode="record", path=out, fixtures=[pin])
    with pytest.raises(json.JSONDecodeError):
        dispatch("parse", {"x": 1})
    dispatch.close()
    assert [e.error for e in load(out)] == [error]
    again = wrap_dispatcher(live, mode="replay", path=out)
    with pytest.raises(json.JSONDecodeError):
        again("parse", {"x": 1})
