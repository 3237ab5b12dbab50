"""A smolagents ``ToolCallingAgent`` for the adapter tests, offline: a ``Model`` subclass
asks for two tools in one step (parallel calls), then answers from the observations with
the ``final_answer`` tool.

``FLAKY_TOOL=fail`` makes ``get_quote`` raise ``RateLimited`` (the agent records the
step's error), the model gives up and the run exits 1; otherwise the run passes (exit 0).
Either live tool raises if it is called under ``CASSETTE_MODE=replay``. ``python
smolagents_agent.py HISTORY`` writes the run's memory steps (``get_full_steps()``) to HISTORY.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from cassette_tui.core.adapters.smolagents import cassette_agent
from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)


class RateLimited(Exception):
    """The quote service's 429."""


#: the type of each tool's output as the agent saw it
SEEN: dict[str, str] = {}


def _live() -> None:
    if os.environ.get("CASSETTE_MODE") == "replay":
        raise AssertionError("a live tool was called in replay")


@tool
def get_quote(symbol: str) -> dict:
    """The latest quote of a symbol.

    Args:
        symbol: the ticker.
    """
    _live()
    if os.environ.get("FLAKY_TOOL") == "fail":
        raise RateLimited("429 Too Many Requests: retry in 30s")
    return {"symbol": symbol, "price": "12.50", "as_of": "2026-01-02T03:04:05Z"}


@tool
def market_hours(exchange: str) -> str:
    """The opening time of an exchange.

    Args:
        exchange: the exchange's MIC.
    """
    _live()
    return f"{exchange} opens 09:30"


def _call(id: str, name: str, arguments: dict[str, Any]) -> ChatMessageToolCall:
    return ChatMessageToolCall(
        id=id, type="function", function=ChatMessageToolCallFunction(name=name, arguments=arguments)
    )


class ScriptedModel(Model):
    """Two tool calls at once, then ``final_answer`` from what the agent observed."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted")

    def generate(
        self,
        messages: list[Any],
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        seen = "\n".join(
            str(m.content) if not isinstance(m, dict) else str(m.get("content"))
            for m in messages[1:]
        )
        if "Observation" not in seen and "Error" not in seen:
            calls = [
                _call("call-quote", "get_quote", {"symbol": "ACME"}),
                _call("call-hours", "market_hours", {"exchange": "XNYS"}),
            ]
        elif "RateLimited" in seen:
            calls = [_call("call-answer", "final_answer", {"answer": "FAILED: rate limited"})]
        else:
            calls = [_call("call-answer", "final_answer", {"answer": f"ACME 12.50; {SEEN}"})]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)


def build(threads: int = 1, **options: Any) -> ToolCallingAgent:
    """The agent, its tool calls recorded or replayed (``options`` as ``wrap_dispatcher``;
    default: the ``CASSETTE_*`` environment). smolagents runs a step's calls on ``threads``
    threads and lists their observations by call id (sorted as strings), whatever order
    they complete in."""
    agent = ToolCallingAgent(
        tools=[get_quote, market_hours],
        model=ScriptedModel(),
        max_steps=4,
        verbosity_level=0,
        max_tool_threads=threads,
    )
    cassette_agent(agent, **options)
    served = agent.execute_tool_call

    def seen(tool_name: str, arguments: Any) -> Any:  # the types the agent gets back, noted
        out = served(tool_name, arguments)
        SEEN[tool_name] = type(out).__name__
        return out

    agent.execute_tool_call = seen  # type: ignore[method-assign]
    return agent


def run(agent: ToolCallingAgent) -> tuple[str, list[dict[str, Any]]]:
    answer = agent.run("What does ACME trade at?")
    return str(answer), agent.memory.get_full_steps()


def main() -> int:
    answer, history = run(build())
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(
            json.dumps(history, sort_keys=True, default=str), encoding="utf-8"
        )
    print(answer)
    return 1 if answer.startswith("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main())
