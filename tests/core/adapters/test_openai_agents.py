"""The OpenAI Agents SDK adapter against the real SDK, offline (a ``Model`` of the test's
own, tracing off): a turn that calls two function tools at once, recorded, replayed with no
live tool, gated, diffed; the run's ``to_input_list()`` is the same between record and
replay, byte for byte. The SDK stamps no wall-clock value into it: nothing is normalised.
The tool output the model reads is ``str()`` of the typed value (``symbol='ACME'
price=Decimal('12.50') as_of=datetime.datetime(...)``), so the comparison also proves the
replayed value has the live types.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="openai-agents is not installed (pip install '.[frameworks]')")

from support.adapter_loop import debug_loop  # noqa: E402


@pytest.fixture
def agent_module():
    return importlib.import_module("support.agents.openai_agents_agent")


def _run(
    agent_module, monkeypatch, tmp_path: Path, outcome: str, mode: str
) -> tuple[str, str, Any]:
    from cassette_tui.core.adapters import ToolCassette

    monkeypatch.setenv("FLAKY_TOOL", outcome)
    monkeypatch.setenv("CASSETTE_MODE", mode)  # the agent's live tools raise in replay
    cassette = ToolCassette(asynchronous=True, path=tmp_path / f"{outcome}.jsonl")
    agent_module.SEEN.clear()
    try:
        answer, history = agent_module.run(agent_module.build(cassette=cassette))
    finally:
        cassette.close()
    return answer, json.dumps(history, sort_keys=True), cassette.report()


@pytest.mark.parametrize("outcome", ["fail", "pass"])
def test_replay_gives_the_recorded_history_byte_for_byte(
    agent_module, monkeypatch, tmp_path: Path, outcome: str
) -> None:
    answer, recorded, _ = _run(agent_module, monkeypatch, tmp_path, outcome, "record")
    seen_live = dict(agent_module.SEEN)
    again, replayed, report = _run(agent_module, monkeypatch, tmp_path, outcome, "replay")
    assert (again, replayed) == (answer, recorded)
    assert seen_live == agent_module.SEEN  # each output's type, as the run saw it
    assert sorted(c["outcome"] for c in report["calls"]) == ["hit", "hit"]
    if outcome == "pass":
        assert seen_live == {"call-quote": "Quote", "call-hours": "str"}
        assert "price=Decimal('12.50')" in answer and "for desk-7" in answer  # the ToolContext
    else:
        # the SDK's failure handler made text of the 429: that text is what was recorded
        assert answer == "FAILED: An error occurred while running the tool. Please try again."


def test_cassette_tools_leaves_other_tools_and_the_original_agent_alone(
    agent_module, tmp_path: Path
) -> None:
    from agents import Agent, FunctionTool, WebSearchTool
    from cassette_tui.core.adapters.openai_agents import cassette_agent, cassette_tools

    hosted = WebSearchTool()
    tools = cassette_tools([agent_module.get_quote, hosted], mode="live")
    assert tools[1] is hosted
    assert isinstance(tools[0], FunctionTool) and tools[0] is not agent_module.get_quote
    assert tools[0].params_json_schema == agent_module.get_quote.params_json_schema
    original = Agent(name="desk", tools=[agent_module.market_hours])
    clone = cassette_agent(original, mode="live")
    assert original.tools == [agent_module.market_hours] and clone.tools[0] is not original.tools[0]


def test_the_debug_loop_on_an_agents_sdk_agent(tmp_path: Path) -> None:
    diff = debug_loop(tmp_path, "openai_agents_agent.py", "get_quote")
    assert diff["first_divergence"]["status"] == "response_drift"  # the failure text vs the quote
    for report in diff["replays"].values():
        assert report["run"]["replay"] == "clean", report["run"]["replay_why"]
        assert report["run"]["hits"] == 2 and report["run"]["misses"] == 0


def _loose_run(tmp_path: Path, mode: str) -> str:
    """One run of an agent whose tool is annotated ``-> dict`` but returns a datetime and a
    tuple inside it (what a user's tool does): the model reads ``str()`` of the dict."""
    import asyncio
    from datetime import UTC, datetime
    from decimal import Decimal

    from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
    from cassette_tui.core.adapters.openai_agents import cassette_agent
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    @function_tool
    def get_quote(symbol: str) -> dict:  # type: ignore[type-arg]
        """The latest quote."""
        if mode == "replay":
            raise AssertionError("a live tool was called in replay")
        as_of = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
        return {"symbol": symbol, "price": Decimal("12.50"), "as_of": as_of, "range": (11, 13)}

    class Scripted(Model):
        async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any):
            outs = [
                i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
            ]
            if not outs:
                out: list[Any] = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id="c1",
                        name="get_quote",
                        arguments='{"symbol": "ACME"}',
                        id="f1",
                        status="completed",
                    )
                ]
            else:
                text = ResponseOutputText(
                    type="output_text", text=str(outs[0]["output"]), annotations=[]
                )
                out = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            return ModelResponse(output=out, usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    agent = cassette_agent(
        Agent(name="desk", model=Scripted(), tools=[get_quote]),
        mode=mode,
        path=tmp_path / "q.jsonl",
    )
    result = asyncio.run(Runner.run(agent, "ACME?", run_config=RunConfig(tracing_disabled=True)))
    return str(result.final_output)


def test_a_loosely_annotated_output_reads_the_same_to_the_model_in_replay(tmp_path: Path) -> None:
    # -> dict said nothing of the datetime, Decimal and tuple inside: under the annotation
    # alone the replay read "'as_of': '2026-12-04T09:30:00Z'" where the live run read
    # "datetime.datetime(...)"; the value is now recorded with its types (response_types)
    live = _loose_run(tmp_path, "record")
    assert "datetime.datetime(2026, 12, 4, 9, 30" in live and "(11, 13)" in live
    entry = json.loads((tmp_path / "q.jsonl").read_text().splitlines()[0])
    assert entry["response"]["as_of"] == "2026-12-04T09:30:00+00:00"
    assert entry["response_types"] == {
        "$.price": "decimal",
        "$.as_of": "datetime",
        "$.range": "tuple",
    }
    assert _loose_run(tmp_path, "replay") == live
