"""``ToolCassette``, the part every framework adapter stands on, without any framework: the
live call's context reaches the live side only (never the args digest), parallel calls in
threads and tasks each get their own answer, a synchronous call is served by an
asynchronous cassette, a replayed exception reads as the live one did, and importing the
adapters package imports no framework."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.adapters import ToolCassette


class RateLimited(Exception):
    """A tool's 429 (module-level: replay rebuilds it by module and name)."""


def _no_live():
    raise AssertionError("a live tool was called in replay")


def test_the_context_reaches_the_live_side_and_never_the_digest(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rec = ToolCassette(asynchronous=False, mode="record", path=path)
    contexts = [{"desk": "desk-7", "conn": object()}, {"desk": "desk-9", "conn": object()}]
    live = [
        rec.call("lookup", {"key": "a"}, lambda ctx=ctx: f"{ctx['desk']}: 1") for ctx in contexts
    ]
    rec.close()
    assert live == ["desk-7: 1", "desk-9: 1"]
    cassette = load(path)
    assert [e.args for e in cassette] == [{"key": "a"}, {"key": "a"}]
    assert len({cassette.digest(i) for i in range(len(cassette))}) == 1  # one key, twice
    rep = ToolCassette(asynchronous=False, mode="replay", path=path)
    assert [rep.call("lookup", {"key": "a"}, _no_live) for _ in range(2)] == live  # in order


def test_values_are_encoded_for_the_cassette_and_decoded_at_replay(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rec = ToolCassette(asynchronous=False, mode="record", path=path)
    live = rec.call("pair", {}, lambda: (1, 2), encode=list, decode=tuple)
    rec.close()
    assert live == (1, 2) and load(path)[0].response == [1, 2]
    rep = ToolCassette(asynchronous=False, mode="replay", path=path)
    assert rep.call("pair", {}, _no_live, encode=list, decode=tuple) == (1, 2)


def test_parallel_threads_each_get_their_own_answer(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    keys = [f"k{i}" for i in range(16)]
    rec = ToolCassette(asynchronous=False, mode="record", path=path)
    with ThreadPoolExecutor(8) as pool:
        live = list(pool.map(lambda k: rec.call("get", {"k": k}, lambda: f"value {k}"), keys))
    rec.close()
    rep = ToolCassette(asynchronous=False, mode="replay", path=path)
    with ThreadPoolExecutor(8) as pool:
        replayed = list(pool.map(lambda k: rep.call("get", {"k": k}, _no_live), keys))
    assert replayed == live == [f"value {k}" for k in keys]


def test_parallel_tasks_and_a_sync_call_on_an_async_cassette(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"

    async def answer(k: str) -> str:
        await asyncio.sleep(0)  # the tasks interleave
        return f"value {k}"

    async def calls(cassette: ToolCassette, live: bool) -> list[str]:
        keys = ["a", "b", "c", "d"]
        got = await asyncio.gather(
            *(
                cassette.acall("get", {"k": k}, (lambda k=k: answer(k)) if live else _no_live)
                for k in keys
            )
        )
        # a synchronous tool served by the same (asynchronous) cassette, inside the loop
        got.append(cassette.call("sync", {}, (lambda: "sync value") if live else _no_live))
        return got

    rec = ToolCassette(asynchronous=True, mode="record", path=path)
    live = asyncio.run(calls(rec, True))
    rec.close()
    rep = ToolCassette(asynchronous=True, mode="replay", path=path)
    assert (
        asyncio.run(calls(rep, False))
        == live
        == ["value a", "value b", "value c", "value d", "sync value"]
    )
    assert [c["outcome"] for c in rep.report()["calls"]] == ["hit"] * 5


def test_a_replayed_exception_reads_as_the_live_one(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rec = ToolCassette(asynchronous=False, mode="record", path=path)

    def flaky():
        raise RateLimited("429 Too Many Requests")

    with pytest.raises(RateLimited) as live:
        rec.call("quote", {"s": "ACME"}, flaky)
    rec.close()
    rep = ToolCassette(asynchronous=False, mode="replay", path=path)
    with pytest.raises(RateLimited) as replayed:
        rep.call("quote", {"s": "ACME"}, _no_live)
    exc = replayed.value
    assert (type(exc).__name__, str(exc), repr(exc), exc.args) == (
        "RateLimited",
        str(live.value),
        repr(live.value),
        live.value.args,
    )
    assert exc.message == "429 Too Many Requests" and exc.seq == 1  # still a ToolError


def test_an_async_call_on_a_sync_cassette_is_refused(tmp_path: Path) -> None:
    cassette = ToolCassette(asynchronous=False, mode="live")

    async def go() -> None:
        await cassette.acall("t", {}, lambda: 1)

    with pytest.raises(TypeError, match="synchronous: use call"):
        asyncio.run(go())
    assert cassette.call("t", {}, lambda: 1) == 1 and cassette.report()["calls"] == 1


def test_importing_the_adapters_imports_no_framework() -> None:
    code = (
        "import sys, cassette_tui.core.adapters\n"
        "names = ('pydantic_ai', 'langchain', 'langchain_core', 'langgraph', 'agents', "
        "'smolagents', 'pydantic')\n"
        "print(','.join(n for n in names if n in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
