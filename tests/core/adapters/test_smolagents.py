"""The smolagents adapter against the real framework, offline (a ``Model`` subclass of the
test's own): a ``ToolCallingAgent`` step that calls two tools at once, recorded, replayed
with no live tool, gated, diffed; the agent's memory (``memory.get_full_steps()``) is the
same between record and replay, byte for byte.

smolagents stamps each step's ``timing`` (start, end, duration) from the clock: that key
alone is normalised. A step's observations are listed by call id (smolagents 1.26 sorts
them as strings), not in the order the tool threads complete them, so replayed calls that
finish at once read as the live ones did; the byte comparison runs the agent with one tool
thread, the parallel test with four.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "smolagents", reason="smolagents is not installed (pip install '.[frameworks]')"
)

from support.adapter_loop import debug_loop, normalised  # noqa: E402

WALL_CLOCK = ("timing",)


@pytest.fixture
def agent_module():
    return importlib.import_module("support.agents.smolagents_agent")


def _run(
    agent_module, monkeypatch, tmp_path: Path, outcome: str, mode: str, threads: int = 1
) -> tuple[str, str, dict[str, str], Any]:
    monkeypatch.setenv("FLAKY_TOOL", outcome)
    monkeypatch.setenv("CASSETTE_MODE", mode)  # the agent's live tools raise in replay
    agent_module.SEEN.clear()
    agent = agent_module.build(threads, path=tmp_path / f"{outcome}.jsonl")
    try:
        answer, history = agent_module.run(agent)
    finally:
        agent.cassette.close()
    text = normalised(json.dumps(history, default=str).encode(), WALL_CLOCK)
    return answer, text, dict(agent_module.SEEN), agent.cassette.report()


@pytest.mark.parametrize("outcome", ["fail", "pass"])
def test_replay_gives_the_recorded_memory_byte_for_byte(
    agent_module, monkeypatch, tmp_path: Path, outcome: str
) -> None:
    answer, recorded, seen, _ = _run(agent_module, monkeypatch, tmp_path, outcome, "record")
    again, replayed, seen_again, report = _run(
        agent_module, monkeypatch, tmp_path, outcome, "replay"
    )
    assert (again, replayed) == (answer, recorded)
    assert seen_again == seen
    assert sorted(c["outcome"] for c in report["calls"]) == (
        ["error", "hit"] if outcome == "fail" else ["hit", "hit"]
    )
    if outcome == "pass":
        # an "object" tool's dict, a "string" tool's AgentText, as live (final_answer: live)
        assert seen == {
            "get_quote": "dict",
            "market_hours": "AgentText",
            "final_answer": "AgentText",
        }
    else:
        # the step's error: the class and message the live AgentToolExecutionError had
        assert '"type": "AgentToolExecutionError"' in replayed
        assert "RateLimited: 429 Too Many Requests: retry in 30s" in replayed
        assert answer == "FAILED: rate limited"


def test_parallel_calls_each_get_their_own_answer(
    agent_module, monkeypatch, tmp_path: Path
) -> None:
    _run(agent_module, monkeypatch, tmp_path, "pass", "record", threads=4)
    answer, replayed, seen, report = _run(
        agent_module, monkeypatch, tmp_path, "pass", "replay", threads=4
    )
    steps = json.loads(replayed)
    observations = set(steps[1]["observations"].split("\n"))
    assert observations == {
        "XNYS opens 09:30",
        "{'symbol': 'ACME', 'price': '12.50', 'as_of': '2026-01-02T03:04:05Z'}",
    }
    assert seen == {"get_quote": "dict", "market_hours": "AgentText", "final_answer": "AgentText"}
    assert report["misses"] == [] and len(report["calls"]) == 2


def test_a_code_agent_is_refused_with_the_reason(agent_module) -> None:
    from cassette_tui.core.adapters.smolagents import cassette_agent
    from smolagents import CodeAgent

    agent = CodeAgent(tools=[], model=agent_module.ScriptedModel())
    assert not hasattr(agent, "execute_tool_call")  # its tools run inside its code
    with pytest.raises(TypeError, match="CodeAgent calls its tools from the code it runs"):
        cassette_agent(agent, mode="live")


def test_the_debug_loop_on_a_smolagents_agent(tmp_path: Path) -> None:
    diff = debug_loop(tmp_path, "smolagents_agent.py", "get_quote", WALL_CLOCK)
    row = next(r for r in diff["rows"] if r["tool"] == "get_quote")
    assert row["error_a"] is True  # the failing run's rate limit, recorded as an error
    for report in diff["replays"].values():
        assert report["run"]["replay"] == "clean", report["run"]["replay_why"]


def test_an_object_output_with_typed_values_replays_as_the_model_read_it(tmp_path: Path) -> None:
    # smolagents shows the model str() of an "object" output: a datetime and a tuple in it
    # were refused at record time (not JSON); they are now recorded with their types
    from datetime import UTC, datetime

    from cassette_tui.core.adapters.smolagents import cassette_agent
    from smolagents import ToolCallingAgent, tool

    calls = []

    @tool
    def opening(exchange: str) -> dict:  # type: ignore[type-arg]
        """When an exchange opens.

        Args:
            exchange: the exchange's MIC.
        """
        calls.append(exchange)
        return {"at": datetime(2026, 12, 4, 9, 30, tzinfo=UTC), "band": (9, 17)}

    def serve(mode: str) -> str:
        model = importlib.import_module("support.agents.smolagents_agent").ScriptedModel()
        agent = cassette_agent(
            ToolCallingAgent(tools=[opening], model=model, verbosity_level=0),
            mode=mode,
            path=tmp_path / "o.jsonl",
        )
        try:
            return str(agent.execute_tool_call("opening", {"exchange": "XNYS"}))
        finally:
            agent.cassette.close()  # type: ignore[attr-defined]

    live = serve("record")
    assert "datetime.datetime(2026, 12, 4, 9, 30" in live and "(9, 17)" in live
    entry = json.loads((tmp_path / "o.jsonl").read_text())
    assert entry["response_types"] == {"$.at": "datetime", "$.band": "tuple"}
    assert serve("replay") == live and calls == ["XNYS"]


def test_a_replayed_tool_error_is_logged_as_the_live_one_was(
    agent_module, monkeypatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """smolagents' ``AgentError`` logs itself when it is made (``logger.log_error`` in its
    constructor): the live run printed the tool's error, the replay, whose error is the
    recorded class made without that constructor, printed nothing."""
    capsys.readouterr()
    _run(agent_module, monkeypatch, tmp_path, "fail", "record")
    live = capsys.readouterr().out
    _run(agent_module, monkeypatch, tmp_path, "fail", "replay")
    replayed = capsys.readouterr().out
    assert "Error executing tool" in live
    assert replayed == live


def _record_parallel_turn(path: Path, first: str) -> list[tuple[int, str, Any]]:
    """One step asking for Porto's and Lisbon's weather at once, the agent's tool threads
    made to run ``first``'s call wholly before the other's starts: ``(seq, city, batch)``
    of the recording, in seq order."""
    import threading

    from cassette_tui.core.adapters.smolagents import cassette_agent
    from smolagents import ToolCallingAgent, tool
    from support.frameworks import smolagents_model

    @tool
    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city
        """
        return f"{city}: sunny"

    calls = [("get_weather", {"city": c}, f"c{i}") for i, c in enumerate(["Porto", "Lisbon"])]
    agent = cassette_agent(
        ToolCallingAgent(
            tools=[get_weather],
            model=smolagents_model([calls, []]),
            max_tool_threads=2,
            verbosity_level=0,
        ),  # fmt: skip
        mode="record",
        path=path,
    )
    done = threading.Event()
    held: list[bool] = []
    recorded = agent.execute_tool_call

    def in_order(name: str, arguments: Any) -> Any:  # outside the cassette's dispatcher
        if name == "get_weather" and arguments["city"] != first:
            held.append(done.wait(timeout=30))  # the first call is over, written
        result = recorded(name, arguments)
        if name == "get_weather" and arguments["city"] == first:
            done.set()
        return result

    agent.execute_tool_call = in_order  # type: ignore[method-assign]
    agent.run("weather")
    agent.cassette.close()
    assert held == [True]  # the two calls ran in parallel threads
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    entries.sort(key=lambda e: int(e["seq"]))
    return [(e["seq"], e["args"]["city"], e.get("batch")) for e in entries]


def test_a_parallel_step_records_the_same_seqs_and_batch_whatever_the_threads_did(
    tmp_path: Path,
) -> None:
    """smolagents runs a step's calls in a thread pool: which reaches the recorder first,
    and whether fast tools overlap at all, made two recordings of one run differ in seq
    order and ``batch`` marks. They follow the model's ``tool_calls`` now."""
    lisbon_first = _record_parallel_turn(tmp_path / "a.jsonl", "Lisbon")
    porto_first = _record_parallel_turn(tmp_path / "b.jsonl", "Porto")
    assert lisbon_first == porto_first == [(1, "Porto", 1), (2, "Lisbon", 1)]
