"""The LangChain / LangGraph adapter against the real framework, offline (a scripted chat
model with tool calls): ``create_agent`` with ``ToolRetryMiddleware`` outside the cassette,
a turn that calls two tools at once, recorded, replayed with no live tool, gated, diffed;
a plain LangGraph ``ToolNode`` with the middleware's methods, sync and async.

LangChain stamps nothing from the clock, but LangGraph's ``add_messages`` gives each
message that has no id a random ``uuid4``: the tool messages (a tool node makes them
without one). Their ``id`` alone is normalised before the byte comparison; the model's
message ids, the tool call ids and every ``tool_call_id`` are compared as they are.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain", reason="langchain is not installed (pip install '.[frameworks]')")
pytest.importorskip("langgraph", reason="langgraph is not installed (pip install '.[frameworks]')")

from support.adapter_loop import debug_loop, normalised  # noqa: E402

RANDOM_IDS = ("id",)


def _tool_message(obj: dict[str, Any]) -> bool:
    return obj.get("type") == "tool" and "tool_call_id" in obj


@pytest.fixture
def agent_module():
    module = importlib.import_module("support.agents.langchain_agent")
    module.ATTEMPTS["get_quote"] = 0
    return module


def _run(
    agent_module, monkeypatch, tmp_path: Path, outcome: str, mode: str
) -> tuple[str, str, Any]:
    import json

    from cassette_tui.core.adapters.langchain import CassetteMiddleware

    monkeypatch.setenv("FLAKY_TOOL", outcome)
    monkeypatch.setenv("CASSETTE_MODE", mode)  # the agent's live tools raise in replay
    agent_module.ATTEMPTS["get_quote"] = 0
    middleware = CassetteMiddleware(path=tmp_path / f"{outcome}.jsonl")
    try:
        answer, history = agent_module.run(agent_module.build(middleware))
    finally:
        middleware.cassette.close()
    text = normalised(json.dumps(history).encode(), RANDOM_IDS, _tool_message)
    return answer, text, middleware.cassette.report()


@pytest.mark.parametrize("outcome", ["fail", "pass"])
def test_replay_gives_the_recorded_history_byte_for_byte(
    agent_module, monkeypatch, tmp_path: Path, outcome: str
) -> None:
    answer, recorded, _ = _run(agent_module, monkeypatch, tmp_path, outcome, "record")
    again, replayed, report = _run(agent_module, monkeypatch, tmp_path, outcome, "replay")
    assert (again, replayed) == (answer, recorded)
    outcomes = {c["tool"]: [] for c in report["calls"]}
    for c in report["calls"]:
        outcomes[c["tool"]].append(c["outcome"])
    # the retry middleware's two attempts are one key recorded twice, served in order
    if outcome == "pass":
        assert answer == "ACME 12.50; XNYS opens 09:30 for desk-7"  # the runtime's context
        assert outcomes == {"get_quote": ["error", "hit"], "market_hours": ["hit"]}
    else:
        assert answer.startswith(
            "FAILED: Tool 'get_quote' failed after 2 attempts with RateLimited"
        )
        assert "429 Too Many Requests: retry in 30s" in answer
        assert outcomes == {"get_quote": ["error", "error"], "market_hours": ["hit"]}
    assert [r["tool"] for r in report["repeats"]] == ["get_quote"]


def _tool_node(cassette: Any) -> Any:
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        if cassette.cassette.mode == "replay":
            raise AssertionError("a live tool was called in replay")
        return f"value of {key}"

    @tool
    async def alookup(key: str) -> str:
        """Look a key up, awaited."""
        if cassette.cassette.mode == "replay":
            raise AssertionError("a live tool was called in replay")
        return f"awaited value of {key}"

    from langgraph.graph import END, START, MessagesState, StateGraph

    node = ToolNode(
        [lookup, alookup],
        wrap_tool_call=cassette.wrap_tool_call,
        awrap_tool_call=cassette.awrap_tool_call,
    )
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def test_a_langgraph_tool_node_replays_parallel_calls_sync_and_async(tmp_path: Path) -> None:
    from cassette_tui.core.adapters.langchain import CassetteMiddleware
    from langchain_core.messages import AIMessage

    calls = [
        {"name": "lookup", "args": {"key": "a"}, "id": "c1", "type": "tool_call"},
        {"name": "lookup", "args": {"key": "b"}, "id": "c2", "type": "tool_call"},
        {"name": "alookup", "args": {"key": "c"}, "id": "c3", "type": "tool_call"},
    ]
    state = {"messages": [AIMessage("", id="b", tool_calls=calls)]}
    path = tmp_path / "node.jsonl"
    results = {}
    for mode in ("record", "replay"):
        cassette = CassetteMiddleware(mode=mode, path=path)
        node = _tool_node(cassette)
        sync_out = node.invoke({"messages": [AIMessage("", id="a", tool_calls=calls[:2])]})
        async_out = asyncio.run(node.ainvoke(state))
        sync_out, async_out = sync_out["messages"][1:], async_out["messages"][1:]
        cassette.cassette.close()
        results[mode] = [(m.tool_call_id, m.content, m.status) for m in sync_out + async_out]
    assert results["replay"] == results["record"]
    assert results["replay"][:2] == [
        ("c1", "value of a", "success"),
        ("c2", "value of b", "success"),
    ]
    assert results["replay"][-1] == ("c3", "awaited value of c", "success")


def test_the_debug_loop_on_a_langchain_agent(tmp_path: Path) -> None:
    diff = debug_loop(tmp_path, "langchain_agent.py", "get_quote", RANDOM_IDS, _tool_message)
    # the runs part at get_quote's retry (the failing run's second 429, the passing run's
    # quote): how the rows pair, and whether the two attempts are consecutive seqs, depends
    # on the order the two tool threads completed in (seqs follow completion); the finding
    # and the key's counts do not
    found = {f["kind"]: f for f in diff["findings"]}
    assert "RateLimited" in found["error_response"]["evidence"]["first"]
    retried = found["repeated_key"]["evidence"]  # the retried key, in both runs
    assert retried["key"][0] == "get_quote" and (retried["count_a"], retried["count_b"]) == (2, 2)
    for report in diff["replays"].values():
        assert report["run"]["replay"] == "clean", report["run"]["replay_why"]
        assert report["run"]["misses"] == 0


def test_a_typed_artifact_is_recorded_and_replayed_with_its_types(tmp_path: Path) -> None:
    # a content_and_artifact tool's artifact is the app's data, not the model's: a datetime
    # in it was refused at record time, and CassetteMiddleware took no codec= to fix that
    import json
    from datetime import UTC, datetime

    from cassette_tui.core.adapters.langchain import CassetteMiddleware
    from langchain.agents import create_agent
    from langchain.tools import tool
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    calls = []

    @tool(response_format="content_and_artifact")
    def fetch(url: str) -> tuple[str, dict[str, Any]]:
        """Fetch a page."""
        calls.append(url)
        return "page text", {"fetched_at": datetime(2026, 12, 4, tzinfo=UTC), "span": (0, 9)}

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
            return self

    def run(mode: str) -> str:
        asked = AIMessage(
            content="", tool_calls=[{"name": "fetch", "args": {"url": "u"}, "id": "c1"}]
        )
        model = Model(messages=iter([asked, AIMessage(content="done")]))
        middleware = CassetteMiddleware(mode=mode, path=tmp_path / "a.jsonl")
        state = create_agent(model, [fetch], middleware=[middleware]).invoke(
            {"messages": [{"role": "user", "content": "go"}]}
        )
        middleware.cassette.close()
        return repr([m.artifact for m in state["messages"] if m.type == "tool"])

    live = run("record")
    assert "datetime.datetime(2026, 12, 4" in live and "(0, 9)" in live
    entry = json.loads((tmp_path / "a.jsonl").read_text())
    assert entry["response_types"] == {
        "$.artifact.fetched_at": "datetime",
        "$.artifact.span": "tuple",
    }
    assert run("replay") == live and calls == ["u"]


def _record_parallel_turn(path: Path, first: str) -> list[tuple[int, str, Any]]:
    """One model turn asking for Porto's and Lisbon's weather, the tool node's threads
    made to run ``first``'s call wholly before the other's starts (an outer middleware
    holds the other back): ``(seq, city, batch)`` of the recording, in seq order."""
    import json
    import threading

    from cassette_tui.core.adapters.langchain import CassetteMiddleware
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain.tools import tool
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    done = threading.Event()
    held: list[bool] = []

    class Order(AgentMiddleware[Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            if request.tool_call["args"]["city"] != first:
                held.append(done.wait(timeout=30))  # the first call is over, written
            result = handler(request)
            if request.tool_call["args"]["city"] == first:
                done.set()
            return result

    @tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return f"{city}: sunny"

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
            return self

    calls = [
        {"name": "get_weather", "args": {"city": "Porto"}, "id": "w1"},
        {"name": "get_weather", "args": {"city": "Lisbon"}, "id": "w2"},
    ]
    model = Model(messages=iter([AIMessage("", tool_calls=calls), AIMessage("done")]))
    middleware = CassetteMiddleware(mode="record", path=path)
    agent = create_agent(model, [get_weather], middleware=[Order(), middleware])
    agent.invoke({"messages": [{"role": "user", "content": "weather"}]})
    middleware.cassette.close()
    assert held == [True]  # the tool node ran the two calls in parallel threads
    entries = sorted((json.loads(line) for line in path.read_text().splitlines()), key=_seq)
    return [(e["seq"], e["args"]["city"], e.get("batch")) for e in entries]


def test_a_parallel_turn_records_the_same_seqs_and_batch_whatever_the_threads_did(
    tmp_path: Path,
) -> None:
    """The tool node's thread pool decides which call reaches the recorder first and
    whether they overlap: seq order and ``batch`` marks differed between two recordings
    of the same run. They follow the AI message's ``tool_calls`` now."""
    lisbon_first = _record_parallel_turn(tmp_path / "a.jsonl", "Lisbon")
    porto_first = _record_parallel_turn(tmp_path / "b.jsonl", "Porto")
    assert lisbon_first == porto_first == [(1, "Porto", 1), (2, "Lisbon", 1)]


def _seq(entry: dict[str, Any]) -> int:
    return int(entry["seq"])
