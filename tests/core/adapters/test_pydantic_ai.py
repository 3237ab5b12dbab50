"""The pydantic-ai adapter against the real framework, offline (``FunctionModel``): a run
that calls two tools in one turn is recorded, replayed with no live tool, gated and
diffed; the agent's ``all_messages_json()`` is the same between record and replay.

pydantic-ai stamps wall-clock values into its history (``timestamp`` on messages and
parts, ``run_id`` and ``conversation_id`` uuid7s, made from the clock), so those three keys
are normalised before the byte comparison, and nothing else.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is not installed (pip install '.[frameworks]')"
)

from support.adapter_loop import debug_loop, normalised  # noqa: E402

WALL_CLOCK = ("timestamp", "run_id", "conversation_id")


@pytest.fixture
def agent_module():
    return importlib.import_module("support.agents.pydantic_ai_agent")


def _run(agent_module, monkeypatch, tmp_path: Path, outcome: str, mode: str) -> tuple[str, bytes]:
    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability

    monkeypatch.setenv("FLAKY_TOOL", outcome)
    monkeypatch.setenv("CASSETTE_MODE", mode)  # the agent's live tools raise in replay
    capability = CassetteCapability(path=tmp_path / f"{outcome}.jsonl")
    try:
        result = agent_module.build(capability).run_sync("What does ACME trade at?", deps="desk-7")
    finally:
        capability.cassette.close()
    return result.output, result.all_messages_json()


@pytest.mark.parametrize("outcome", ["fail", "pass"])
def test_replay_gives_the_recorded_history_byte_for_byte(
    agent_module, monkeypatch, tmp_path: Path, outcome: str
) -> None:
    answer, recorded = _run(agent_module, monkeypatch, tmp_path, outcome, "record")
    again, replayed = _run(agent_module, monkeypatch, tmp_path, outcome, "replay")
    assert again == answer
    assert normalised(replayed, WALL_CLOCK) == normalised(recorded, WALL_CLOCK)
    if outcome == "pass":
        # the types the live tools returned (a pydantic model holding a datetime, a dataclass
        # built from the RunContext's deps) came back from the cassette's JSON
        assert answer == "ACME 12.50 opens 09:30 [Quote/datetime/Hours]"
        assert b'"desk":"desk-7"' in replayed
    else:
        assert answer == "FAILED: 429 Too Many Requests: retry in 30s"


def test_parallel_calls_each_get_their_own_answer(
    agent_module, monkeypatch, tmp_path: Path
) -> None:
    from cassette_tui.core import load
    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability

    _run(agent_module, monkeypatch, tmp_path, "pass", "record")
    cassette = load(tmp_path / "pass.jsonl")
    assert sorted(e.tool for e in cassette) == ["get_quote", "market_hours"]
    monkeypatch.setenv("CASSETTE_MODE", "replay")
    capability = CassetteCapability(path=tmp_path / "pass.jsonl")
    result = agent_module.build(capability).run_sync("What does ACME trade at?", deps="desk-7")
    report = capability.cassette.report()
    assert [c["outcome"] for c in report["calls"]] == ["hit", "hit"]
    assert report["misses"] == []
    returns = {
        p.tool_name: p.content
        for m in result.all_messages()
        for p in m.parts
        if type(p).__name__ == "ToolReturnPart"
    }
    assert type(returns["get_quote"]).__name__ == "Quote"
    assert returns["get_quote"].price == agent_module.Decimal("12.50")
    assert returns["get_quote"].as_of.tzinfo is agent_module.UTC  # the stdlib's, as it was live
    assert returns["market_hours"] == agent_module.Hours("XNYS", "09:30", "desk-7")


def test_the_debug_loop_on_a_pydantic_ai_agent(tmp_path: Path) -> None:
    diff = debug_loop(tmp_path, "pydantic_ai_agent.py", "get_quote", WALL_CLOCK)
    row = next(r for r in diff["rows"] if r["tool"] == "get_quote")
    assert row["error_a"] is True  # the failing run's rate limit, recorded as an error
    for report in diff["replays"].values():
        assert report["run"]["replay"] == "clean", report["run"]["replay_why"]
        assert report["run"]["hits"] == 2 and report["run"]["misses"] == 0


def test_the_imported_history_agrees_with_the_recorded_cassette(
    monkeypatch, tmp_path: Path
) -> None:
    """A run recorded by the capability and the same run's ``all_messages_json()`` imported
    (``--from pydantic-ai``) give each call the same response, whatever the tool returns:
    a ``str`` stays a string and a ``float`` a number (not ``{"text": "329.0"}``)."""
    from cassette_tui.core import load
    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability
    from cassette_tui.core.diff.result import diff_cassettes
    from cassette_tui.core.importers.sources import open_cassette
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def advice(rain_chance: float) -> str:
        return "take an umbrella" if rain_chance > 0.5 else "no umbrella"

    def rain_chance(city: str) -> float:
        return {"Lisbon": 0.7}.get(city, 0.1)

    def stations(city: str) -> list[str]:
        return [f"{city}-1", f"{city}-2"]

    def nothing(city: str) -> None:
        return None

    def model(messages, info) -> ModelResponse:
        if len(messages) == 1:  # one turn asks every tool, then the model answers
            calls = [("rain_chance", {"city": "Lisbon"}), ("advice", {"rain_chance": 0.7}),
                     ("stations", {"city": "Lisbon"}), ("nothing", {"city": "Lisbon"})]  # fmt: skip
            return ModelResponse(parts=[ToolCallPart(n, a, tool_call_id=n) for n, a in calls])
        return ModelResponse(parts=[TextPart("done")])

    monkeypatch.setenv("CASSETTE_MODE", "record")
    capability = CassetteCapability(path=tmp_path / "run.jsonl")
    agent = Agent(
        FunctionModel(model),
        tools=[advice, rain_chance, stations, nothing],
        capabilities=[capability],
    )
    try:
        history = agent.run_sync("umbrella in Lisbon?").all_messages_json()
    finally:
        capability.cassette.close()
    (tmp_path / "history.json").write_bytes(history)

    recorded = {e.tool: e.response for e in load(tmp_path / "run.jsonl")}
    imported = open_cassette(tmp_path / "history.json")
    assert {e.tool: e.response for e in imported} == recorded
    assert recorded["advice"] == "take an umbrella" and recorded["rain_chance"] == 0.7
    assert recorded["nothing"] is None
    assert (
        diff_cassettes(load(tmp_path / "run.jsonl"), imported, align="key").first_divergence is None
    )
