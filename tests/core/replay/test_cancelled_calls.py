"""A call cancelled live (``asyncio.wait_for``, a task group) is recorded, and replays as
the same cancellation: the agent's own timeout fires again, so it takes the path it took
live (issue 24; bugcase 41)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import types
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import Recorder, Replayer, ToolError, load, wrap_dispatcher
from support.factory import entry, write_cassette


async def _live(tool: str, args: Any) -> Any:
    """``slow`` never answers (it waits on an event nobody sets); ``fail`` raises."""
    if tool == "slow":
        await asyncio.Event().wait()
    if tool == "fail":
        raise PermissionError("denied")
    return {"tool": tool}


async def _agent(dispatch: Any) -> list[str]:
    """Asks ``slow`` under a timeout, falls back to ``cache``; then fans out ``slow`` and
    ``fail`` in a task group."""
    said = []
    try:
        await asyncio.wait_for(dispatch("slow", {"q": 1}), timeout=0.05)
        said.append("slow answered")
    except TimeoutError:
        said.append("timed out: " + (await dispatch("cache", {"q": 1}))["tool"])
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(dispatch("slow", {"q": 2}))
            group.create_task(dispatch("fail", {"q": 2}))
    except* PermissionError as failed:
        said.append(f"group failed: {failed.exceptions!r}")
    return said


def test_a_cancelled_call_is_recorded_and_replays_as_the_same_timeout(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recording = wrap_dispatcher(_live, mode="record", path=path)
    said_live = asyncio.run(_agent(recording))
    recording.close()
    assert said_live == ["timed out: cache", "group failed: (PermissionError('denied'),)"]
    cassette = load(path)
    # seq is the issue order (the task group's two calls as created), not completion order
    assert [(e.tool, e.args) for e in cassette] == [
        ("slow", {"q": 1}),
        ("cache", {"q": 1}),
        ("slow", {"q": 2}),
        ("fail", {"q": 2}),
    ]
    cancelled = cassette[0].error
    assert cancelled is not None and cancelled["cancelled"] is True
    assert (cancelled["type"], cancelled["module"]) == ("CancelledError", "asyncio.exceptions")
    assert cassette[0].extra["duration_ms"] >= 0
    assert cassette[2].error is not None and cassette[2].error["cancelled"] is True
    # the task group's two calls ran at once: one batch; the calls before ran alone
    assert [e.extra.get("batch") for e in cassette] == [None, None, 3, 3]

    replaying = wrap_dispatcher(_live_never_called, mode="replay", path=path)
    assert asyncio.run(_agent(replaying)) == said_live
    report = replaying.report()
    assert report["used"] == 4 and report["misses"] == []


async def _live_never_called(tool: str, args: Any) -> Any:
    raise AssertionError("replay called the live tool")


def test_the_recorder_used_directly_records_the_cancelled_call(tmp_path: Path) -> None:
    """Before: ``acall`` caught ``Exception`` only, and left an empty file."""
    path = tmp_path / "rec.jsonl"

    async def run() -> None:
        with Recorder(path) as rec, pytest.raises(TimeoutError):
            await asyncio.wait_for(rec.acall(_live, "slow", {"q": 1}), timeout=0.05)

    asyncio.run(run())
    (only,) = load(path)
    assert only.error is not None and only.error["cancelled"] is True


def test_a_replayed_cancellation_that_nobody_cancels_raises_it_after_its_wait(
    tmp_path: Path,
) -> None:
    """The agent no longer cancels (its timeout grew): the call does not hang; after at
    most twice its duration plus a second it raises the recorded cancellation."""
    error = {"type": "CancelledError", "message": "", "module": "asyncio.exceptions"}
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "slow", {}, error={**error, "args": [], "cancelled": True}, duration_ms=0),
    )
    with pytest.raises(asyncio.CancelledError) as info:
        asyncio.run(Replayer(load(path)).acall("slow", {}))
    assert isinstance(info.value, ToolError) and info.value.seq == 1
    # a sync replay raises it at once
    with pytest.raises(asyncio.CancelledError):
        Replayer(load(path))("slow", {})


def test_case_41_the_agent_takes_the_cache_path_on_replay(real: Path, tmp_path: Path) -> None:
    """bugcases/41: ``wait_for`` cancels ``web_search`` live; the recording holds it, and
    the replay times out again and takes the cache path, with the recording's output."""
    agent = real / "bugcases" / "41_cancelled_call_not_recorded" / "agent.py"
    cassette = tmp_path / "rec.jsonl"

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CASSETTE_MODE": mode, "CASSETTE_PATH": str(cassette)}
        return subprocess.run(
            [sys.executable, str(agent)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    recorded = run("record")
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout == (
        "web_search timed out, using the cache\nanswer: cached: refunds within 30 days\n"
    )
    lines = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines()]
    assert [(e["seq"], e["tool"]) for e in lines] == [(1, "web_search"), (2, "cached_answer")]
    assert lines[0]["error"]["cancelled"] is True and lines[0]["duration_ms"] > 0
    replayed = run("replay")
    assert (replayed.returncode, replayed.stdout) == (0, recorded.stdout), replayed.stderr


def test_a_keyboard_interrupt_inside_a_sync_tool_is_recorded_and_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rec.jsonl"

    def live(tool: str, args: Any) -> Any:
        if tool == "stop":
            raise KeyboardInterrupt
        return {"ok": True}

    with Recorder(path) as rec:
        rec.wrap(live)("go", {})
        with pytest.raises(KeyboardInterrupt):
            rec.wrap(live)("stop", {})
    errors = [e.error for e in load(path)]
    assert errors == [None, {"type": "KeyboardInterrupt", "message": "", "args": []}]
    with pytest.raises(KeyboardInterrupt) as info:
        Replayer(load(path))("stop", {})
    assert isinstance(info.value, ToolError) and info.value.seq == 2


def test_a_closed_coroutine_is_not_a_recorded_outcome(tmp_path: Path) -> None:
    """``GeneratorExit`` (a coroutine closed before it finished) is not the tool's answer."""

    @types.coroutine
    def pause() -> Generator[None, None, None]:
        yield

    async def live(tool: str, args: Any) -> Any:
        await pause()
        return {"ok": True}

    path = tmp_path / "rec.jsonl"
    with Recorder(path) as rec:
        call = rec.acall(live, "slow", {"q": 1})
        call.send(None)  # runs up to the tool's first await
        call.close()
    assert len(load(path)) == 0
