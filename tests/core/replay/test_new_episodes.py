"""``NewEpisodes``: the recorded calls replay, the new ones run live and go to a new file
beside the cassette (the cassette plus them, seqs going on); the cassette is never
written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.atomic import TargetExists
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import ToolError
from cassette_tui.core.replay import recorder_registry
from cassette_tui.core.replay.new_episodes import NewEpisodes, new_episodes_path
from cassette_tui.core.replay.wrap import wrap_dispatcher
from support.factory import entry, write_cassette


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    return write_cassette(
        tmp_path / "refund.jsonl",
        entry(1, "lookup", {"order": "O-1"}, response={"amount": 30}),
        entry(2, "refund", {"order": "O-1"}, error={"type": "TimeoutError", "message": "slow"}),
    )


def test_hits_replay_and_new_calls_are_recorded_beside(cassette: Path) -> None:
    before = cassette.read_bytes()
    live: list[tuple[str, dict]] = []

    def dispatch(tool: str, args: dict) -> dict:
        live.append((tool, args))
        return {"live": tool}

    episodes = NewEpisodes.open(cassette)
    served = episodes.wrap(dispatch)
    assert served("lookup", {"order": "O-1"}) == {"amount": 30}  # a hit
    with pytest.raises(ToolError):
        served("refund", {"order": "O-1"})  # a recorded error stays an error
    assert served("lookup", {"order": "O-2"}) == {"live": "lookup"}  # a miss: live
    assert served("lookup", {"order": "O-1"}) == {"live": "lookup"}  # past the recording
    assert live == [("lookup", {"order": "O-2"}), ("lookup", {"order": "O-1"})]
    out = episodes.close()
    assert out == new_episodes_path(cassette) == cassette.with_name("refund.new-episodes.jsonl")
    assert cassette.read_bytes() == before  # never written
    assert out.read_bytes().startswith(before)
    merged = load(out)
    assert merged.seqs == [1, 2, 3, 4]
    assert [json.loads(x)["args"] for x in out.read_text().splitlines()[2:]] == [
        {"order": "O-2"}, {"order": "O-1"},
    ]  # fmt: skip
    report = episodes.report()
    assert report["new_calls"] == 2 and report["new_file"] == str(out)
    assert [m["args"] for m in report["replay"]["misses"]] == [{"order": "O-2"}]
    assert not [p for p in cassette.parent.iterdir() if p.name.startswith(".")]  # no staging


def test_no_new_call_writes_no_file(cassette: Path) -> None:
    episodes = NewEpisodes.open(cassette)
    assert episodes.wrap(lambda tool, args: 1 / 0)("lookup", {"order": "O-1"}) == {"amount": 30}
    assert episodes.close() is None
    assert sorted(p.name for p in cassette.parent.iterdir()) == ["refund.jsonl"]


def test_an_existing_output_is_not_replaced_without_overwrite(cassette: Path) -> None:
    out = new_episodes_path(cassette)
    out.write_text("mine\n")
    episodes = NewEpisodes.open(cassette)
    episodes.wrap(lambda tool, args: 1)("new", {})
    with pytest.raises(TargetExists):
        episodes.close()
    assert out.read_text() == "mine\n"
    episodes = NewEpisodes.open(cassette, overwrite=True)
    episodes.wrap(lambda tool, args: 1)("new", {})
    assert episodes.close() == out and load(out).seqs == [1, 2, 3]


def test_record_mode_wrappers_join_a_registered_new_episodes(cassette: Path) -> None:
    episodes = NewEpisodes.open(cassette)
    recorder_registry.register(cassette, episodes)
    try:
        dispatch = wrap_dispatcher(lambda tool, args: "live", mode="record", path=cassette)
        assert dispatch("lookup", {"order": "O-1"}) == {"amount": 30}
        assert dispatch("other", {}) == "live"
        dispatch.close()  # the owner closes it, not the wrapper
        assert episodes.new_calls == 1 and not new_episodes_path(cassette).exists()
    finally:
        recorder_registry.unregister(cassette, episodes)
    assert episodes.close() == new_episodes_path(cassette)
