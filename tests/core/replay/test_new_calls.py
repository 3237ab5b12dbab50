"""The new-calls policy (VCR's ``new_episodes``): recorded calls are served, new calls go
live and are named in the report (``record`` also writes them to a new cassette)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, wrap_dispatcher
from cassette_tui.core.format.cassette import load
from cassette_tui.core.replay.new_calls import NewCall, check_policy, new_cassette_path
from cassette_tui.core.replay.replayer import Replayer
from cassette_tui.core.replay.report import ReplayReport, journal_events
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.factory import entry, write_cassette


class LiveTool:
    """A live dispatcher that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, tool: str, args: dict) -> dict:
        self.calls.append((tool, args))
        if tool == "broken":
            raise ConnectionError("503 from the live tool")
        return {"live": tool, "args": args}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_cassette(
        tmp_path / "fail.jsonl",
        entry(1, "search_docs", {"q": "retry"}, response={"hits": ["a.md"]}),
        entry(2, "read_file", {"path": "a.md"}, response={"text": "old"}),
    )


def test_error_policy_is_the_default_and_never_goes_live(base: Path) -> None:
    live = LiveTool()
    dispatch = wrap_dispatcher(live, mode="replay", path=base)
    with pytest.raises(CassetteMiss) as caught:
        dispatch("check_budget", {"team": "x"})
    assert not isinstance(caught.value, NewCall)
    assert live.calls == []
    report = dispatch.report()
    assert "new_calls" not in report
    assert [c["outcome"] for c in report["calls"]] == ["miss"]


def test_report_serves_recorded_calls_and_answers_new_ones_live(base: Path) -> None:
    live = LiveTool()
    dispatch = wrap_dispatcher(live, mode="replay", path=base, new_calls="report")
    assert dispatch("search_docs", {"q": "retry"}) == {"hits": ["a.md"]}
    assert dispatch("check_budget", {"team": "x"}) == {
        "live": "check_budget",
        "args": {"team": "x"},
    }
    assert dispatch("read_file", {"path": "a.md"}) == {"text": "old"}
    # the recorded calls never reached the live tool; the new one did, once
    assert live.calls == [("check_budget", {"team": "x"})]
    report = ReplayReport.from_json(dispatch.report())
    assert [c.outcome for c in report.calls or ()] == ["hit", "new", "hit"]
    assert [(m.tool, m.args) for m in report.new_calls or ()] == [("check_budget", {"team": "x"})]
    assert report.misses == ()
    assert report.new_cassette is None
    assert list(base.parent.glob("*.new-*")) == []  # report writes nothing


def test_record_appends_new_calls_to_a_new_cassette(base: Path, tmp_path: Path) -> None:
    live = LiveTool()
    target = tmp_path / "out" / "new.jsonl"
    dispatch = wrap_dispatcher(live, mode="replay", path=base, new_calls="record", new_path=target)
    assert not target.exists()  # made at the first new call only
    dispatch("search_docs", {"q": "retry"})
    dispatch("check_budget", {"team": "x"})
    with pytest.raises(ConnectionError):
        dispatch("broken", {})
    dispatch.close()
    new = load(target)
    assert [(e.tool, e.args) for e in new] == [("check_budget", {"team": "x"}), ("broken", {})]
    assert new[0].response == {"live": "check_budget", "args": {"team": "x"}}
    assert new[1].error is not None and new[1].error["type"] == "ConnectionError"
    report = dispatch.report()
    assert report["new_cassette"] == str(target)
    assert [m["tool"] for m in report["new_calls"]] == ["check_budget", "broken"]


def test_a_call_past_the_last_recording_is_a_new_call(base: Path) -> None:
    live = LiveTool()
    dispatch = wrap_dispatcher(live, mode="replay", path=base, new_calls="report")
    dispatch("read_file", {"path": "a.md"})
    assert dispatch("read_file", {"path": "a.md"}) == {
        "live": "read_file",
        "args": {"path": "a.md"},
    }
    report = ReplayReport.from_json(dispatch.report())
    assert [c.outcome for c in report.calls or ()] == ["hit", "new"]
    assert report.count("exhausted") == 0


def test_record_default_path_is_beside_the_cassette(base: Path) -> None:
    live = LiveTool()
    dispatch = wrap_dispatcher(live, mode="replay", path=base, new_calls="record")
    dispatch("check_budget", {"team": "x"})
    dispatch.close()
    (made,) = base.parent.glob("fail.new-*.jsonl")
    assert made.name == Path(dispatch.report()["new_cassette"]).name
    assert len(load(made)) == 1


def test_record_never_replaces_an_existing_file(base: Path, tmp_path: Path) -> None:
    taken = write_cassette(tmp_path / "taken.jsonl", entry(1))
    before = taken.read_bytes()
    dispatch = wrap_dispatcher(
        LiveTool(), mode="replay", path=base, new_calls="record", new_path=taken
    )
    with pytest.raises(FileExistsError):
        dispatch("check_budget", {"team": "x"})
    assert taken.read_bytes() == before


def test_async_dispatcher_answers_new_calls_live(base: Path, tmp_path: Path) -> None:
    seen = []

    async def live(tool: str, args: dict) -> dict:
        seen.append(tool)
        return {"async": tool}

    target = tmp_path / "new.jsonl"
    dispatch = wrap_dispatcher(live, mode="replay", path=base, new_calls="record", new_path=target)

    async def run() -> list:
        return [await dispatch("search_docs", {"q": "retry"}), await dispatch("new_tool", {})]

    assert asyncio.run(run()) == [{"hits": ["a.md"]}, {"async": "new_tool"}]
    dispatch.close()
    assert seen == ["new_tool"]
    assert [e.tool for e in load(target)] == ["new_tool"]


def test_env_contract_sets_the_policy(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "env-new.jsonl"
    monkeypatch.setenv("CASSETTE_NEW_CALLS", "RECORD")
    monkeypatch.setenv("CASSETTE_NEW_PATH", str(target))
    dispatch = wrap_dispatcher(LiveTool(), mode="replay", path=base)
    dispatch("check_budget", {"team": "x"})
    dispatch.close()
    assert [e.tool for e in load(target)] == ["check_budget"]


def test_bad_policy_names_the_variable(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASSETTE_NEW_CALLS", "sometimes")
    with pytest.raises(ValueError, match="CASSETTE_NEW_CALLS='sometimes'.*error, report, record"):
        wrap_dispatcher(LiveTool(), mode="replay", path=base)
    with pytest.raises(ValueError, match="replay mode only"):
        wrap_dispatcher(LiveTool(), mode="live", new_calls="report")
    with pytest.raises(ValueError, match="unknown new-calls policy"):
        check_policy("all")


def test_replayer_raises_new_call_and_the_journal_keeps_it(base: Path, tmp_path: Path) -> None:
    report_path = tmp_path / "r.json"
    dispatch = wrap_dispatcher(
        LiveTool(), mode="replay", path=base, new_calls="report", report=report_path
    )
    dispatch("check_budget", {"team": "x"})
    dispatch("search_docs", {"q": "retry"})
    journal = journal_events(report_path.with_suffix(".json.journal"))
    assert [e["call"]["outcome"] for e in journal if "call" in e] == ["new", "hit"]
    # the journal alone (an agent killed before its report file) still says it was new
    report_path.unlink()
    rebuilt = ReplayReport.read_run(report_path)
    assert [m.tool for m in rebuilt.new_calls or ()] == ["check_budget"]
    assert rebuilt.misses == ()
    replayer = Replayer(load(base), new_calls="record")
    with pytest.raises(NewCall):
        replayer("check_budget", {"team": "x"})


def test_new_cassette_path_is_stamped_in_utc() -> None:
    when = datetime(2026, 12, 3, 21, 4, 5, tzinfo=UTC)
    assert new_cassette_path("runs/fail.jsonl", when) == Path(
        "runs/fail.new-20261203T210405Z.jsonl"
    )


def test_a_run_with_new_calls_is_unclean_unless_they_were_asked_for(base: Path) -> None:
    from cassette_tui.core.loop.results import report_replay

    dispatch = wrap_dispatcher(LiveTool(), mode="replay", path=base, new_calls="report")
    dispatch("search_docs", {"q": "retry"})
    dispatch("check_budget", {"team": "x"})
    report = ReplayReport.from_json(dispatch.report())
    kind, why = report_replay(report)  # a gate never asks for new calls
    assert kind == "unclean" and why == "1 new call answered live (not offline)"
    assert report_replay(report, new_calls_allowed=True) == ("clean", "")
    assert report_replay(report, strict=True, new_calls_allowed=True) == (
        "unclean",
        "1 recorded calls unused (--strict)",
    )


RECORDED = {("search_docs", "retry"): {"hits": ["a.md"]}, ("read_file", "a.md"): {"text": "old"}}


@given(
    st.lists(
        st.sampled_from(
            [("search_docs", "retry"), ("read_file", "a.md"), ("check", "x"), ("check", "y")]
        ),
        max_size=12,
    )
)
@settings(max_examples=60, deadline=None)
def test_recorded_calls_are_served_and_only_new_ones_go_live(calls: list) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = write_cassette(
            Path(folder) / "c.jsonl",
            entry(1, "search_docs", {"q": "retry"}, response={"hits": ["a.md"]}),
            entry(2, "read_file", {"q": "a.md"}, response={"text": "old"}),
        )
        live = LiveTool()
        dispatch = wrap_dispatcher(live, mode="replay", path=path, new_calls="report", report=None)
        seen: dict = {}
        expected_live = []
        for tool, q in calls:
            answer = dispatch(tool, {"q": q})
            first = (tool, q) in RECORDED and (tool, q) not in seen
            seen[(tool, q)] = True
            if first:  # served from the cassette, never live
                assert answer == RECORDED[(tool, q)]
            else:  # never recorded, or past its one recording: a new call, live
                assert answer == {"live": tool, "args": {"q": q}}
                expected_live.append((tool, {"q": q}))
        assert live.calls == expected_live
        report = ReplayReport.from_json(dispatch.report())
        assert report.count("new") == len(expected_live) == len(report.new_calls or ())
        assert report.misses == () and report.count("miss", "exhausted") == 0


def test_new_calls_and_pins_keep_typed_values_with_a_codec(base: Path, tmp_path: Path) -> None:
    from cassette_tui.core.replay.codec import BUILTIN_CODEC

    when = datetime(2026, 12, 3, 21, 0, tzinfo=UTC)
    target = tmp_path / "new.jsonl"
    dispatch = wrap_dispatcher(
        lambda tool, args: {"at": when},
        mode="replay",
        path=base,
        new_calls="record",
        new_path=target,
        codec=BUILTIN_CODEC,
    )
    assert dispatch("clock", {}) == {"at": when}  # answered live
    dispatch.close()
    # the new cassette, pinned over the base, gives the typed value back offline
    pinned = wrap_dispatcher(
        LiveTool(), mode="replay", path=base, fixtures=[target], codec=BUILTIN_CODEC
    )
    assert pinned("clock", {}) == {"at": when}
    assert [c["outcome"] for c in pinned.report()["calls"]] == ["pinned"]
