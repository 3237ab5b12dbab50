"""Wrappers as users place them: an agent and its sub-agent recording to one cassette share
one recorder (``recorder_registry``), and a wrapper made before the environment named a
cassette follows it at its first call (and at the next change)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from cassette_tui.core.format.constants import ENV_MODE, ENV_PATH, ENV_REPORT
from cassette_tui.core.replay.wrap import wrap_dispatcher
from support.factory import entry, write_cassette


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_an_agent_and_its_sub_agent_share_one_recorder(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    agent = wrap_dispatcher(lambda tool, args: {"agent": args}, mode="record", path=cassette)
    sub = wrap_dispatcher(lambda tool, args: {"sub": args}, mode="record", path=cassette)
    assert sub.engine is agent.engine  # one recorder, not a FileExistsError
    agent("plan", {"step": 1})
    sub("search", {"q": "a"})
    agent("answer", {"step": 2})
    agent.close()  # the sub-agent still records: the file is not finished yet
    sub("search", {"q": "b"})
    sub.close()
    recorded = lines(cassette)
    assert [(r["seq"], r["tool"]) for r in recorded] == [
        (1, "plan"), (2, "search"), (3, "answer"), (4, "search"),
    ]  # fmt: skip
    assert recorded[3]["response"] == {"sub": {"q": "b"}}
    # the recording is finished: a third wrapper opens a new one, and the file exists
    with pytest.raises(FileExistsError):
        wrap_dispatcher(lambda tool, args: None, mode="record", path=cassette)


def test_a_sub_agent_joins_by_the_resolved_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    agent = wrap_dispatcher(lambda tool, args: 1, mode="record", path="run.jsonl")
    sub = wrap_dispatcher(lambda tool, args: 2, mode="record", path="sub/../run.jsonl")
    assert sub.engine is agent.engine
    agent.close()
    sub.close()


def test_an_async_sub_agent_shares_the_recorder(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"

    async def live(tool: str, args: dict) -> dict:
        return {"ok": tool}

    async def run() -> None:
        agent = wrap_dispatcher(live, mode="record", path=cassette)
        sub = wrap_dispatcher(lambda tool, args: {"sync": tool}, mode="record", path=cassette)
        await agent("a", {})
        sub("b", {})
        await agent("c", {})
        agent.close()
        sub.close()

    asyncio.run(run())
    assert [(r["seq"], r["tool"]) for r in lines(cassette)] == [(1, "a"), (2, "b"), (3, "c")]


def test_a_wrapper_made_at_import_time_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (ENV_MODE, ENV_PATH, ENV_REPORT):
        monkeypatch.delenv(name, raising=False)
    live_calls: list[str] = []

    def live(tool: str, args: dict) -> dict:
        live_calls.append(tool)
        return {"live": True}

    dispatch = wrap_dispatcher(live)  # "import time": no cassette named yet
    assert dispatch.mode == "live"
    first = write_cassette(
        tmp_path / "a.jsonl", entry(1, "lookup", {"k": 1}, response={"from": "a"})
    )
    second = write_cassette(
        tmp_path / "b.jsonl", entry(1, "lookup", {"k": 1}, response={"from": "b"})
    )
    monkeypatch.setenv(ENV_MODE, "replay")
    monkeypatch.setenv(ENV_PATH, str(first))
    assert dispatch("lookup", {"k": 1}) == {"from": "a"}
    assert dispatch.mode == "replay" and live_calls == []
    monkeypatch.setenv(ENV_PATH, str(second))  # the next test names another cassette
    assert dispatch("lookup", {"k": 1}) == {"from": "b"}
    monkeypatch.delenv(ENV_MODE)  # an unmarked test: live again
    assert dispatch("lookup", {"k": 1}) == {"live": True}
    assert dispatch.mode == "live" and live_calls == ["lookup"]


def test_a_wrapper_given_a_mode_does_not_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_MODE, raising=False)
    dispatch = wrap_dispatcher(lambda tool, args: "live", mode="live")
    cassette = write_cassette(tmp_path / "a.jsonl", entry(1, "t", {}, response="recorded"))
    monkeypatch.setenv(ENV_MODE, "replay")
    monkeypatch.setenv(ENV_PATH, str(cassette))
    assert dispatch("t", {}) == "live"


def test_a_bad_setting_raises_at_each_call_until_it_is_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A following wrapper never falls back to its old engine when the environment asks
    for one it cannot make (a missing cassette): every call raises until it can."""
    monkeypatch.delenv(ENV_MODE, raising=False)
    dispatch = wrap_dispatcher(lambda tool, args: "live")
    monkeypatch.setenv(ENV_MODE, "replay")
    monkeypatch.setenv(ENV_PATH, str(tmp_path / "absent.jsonl"))
    for _ in range(2):
        with pytest.raises(Exception, match="absent.jsonl"):
            dispatch("t", {})
    write_cassette(tmp_path / "absent.jsonl", entry(1, "t", {}, response="recorded"))
    assert dispatch("t", {}) == "recorded"
