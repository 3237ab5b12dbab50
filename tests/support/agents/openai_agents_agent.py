"""An OpenAI Agents SDK agent for the adapter tests, offline: a ``Model`` of its own asks for
two tools in one turn (parallel calls), then answers from their outputs.

``FLAKY_TOOL=fail`` makes ``get_quote`` raise ``RateLimited``; the SDK's failure handler
turns it into the text the model reads, the model gives up and the run exits 1; otherwise
the run passes (exit 0). Either live tool raises if it is called under
``CASSETTE_MODE=replay``. ``python openai_agents_agent.py HISTORY`` writes the run's
``to_input_list()`` to HISTORY.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    RunContextWrapper,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from cassette_tui.core.adapters.openai_agents import cassette_agent
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel

set_tracing_disabled(True)  # offline: no trace is exported


class RateLimited(Exception):
    """The quote service's 429."""


class Quote(BaseModel):
    symbol: str
    price: Decimal
    as_of: datetime


@dataclass
class Desk:
    name: str


#: the type of each tool's output as the run saw it (ToolCallOutputItem.output)
SEEN: dict[str, str] = {}


def _live() -> None:
    if os.environ.get("CASSETTE_MODE") == "replay":
        raise AssertionError("a live tool was called in replay")


@function_tool
async def get_quote(symbol: str) -> Quote:
    """The latest quote of a symbol."""
    _live()
    if os.environ.get("FLAKY_TOOL") == "fail":
        raise RateLimited("429 Too Many Requests: retry in 30s")
    return Quote(
        symbol=symbol, price=Decimal("12.50"), as_of=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    )


@function_tool
def market_hours(ctx: RunContextWrapper[Desk], exchange: str) -> str:
    """The opening time of an exchange (the desk comes from the run's context)."""
    _live()
    return f"{exchange} opens 09:30 for {ctx.context.name}"


def _message(text: str, id: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=id,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """Two tool calls at once, then an answer from the tool outputs."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        outputs = {
            i["call_id"]: i["output"]
            for i in input
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        }
        if not outputs:
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call-quote",
                    name="get_quote",
                    arguments='{"symbol": "ACME"}',
                    id="fc-quote",
                    status="completed",
                ),
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call-hours",
                    name="market_hours",
                    arguments='{"exchange": "XNYS"}',
                    id="fc-hours",
                    status="completed",
                ),
            ]
        elif "error occurred" in str(outputs["call-quote"]):
            output = [_message(f"FAILED: {outputs['call-quote']}", "msg-answer")]
        else:
            output = [_message(f"{outputs['call-quote']}; {outputs['call-hours']}", "msg-answer")]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def build(**options: Any) -> Agent[Desk]:
    """The agent, its tools recorded or replayed (``options`` as ``wrap_dispatcher``;
    default: the ``CASSETTE_*`` environment)."""
    return cassette_agent(
        Agent(name="desk", model=ScriptedModel(), tools=[get_quote, market_hours]), **options
    )


def run(agent: Agent[Desk]) -> tuple[str, list[Any]]:
    result = asyncio.run(Runner.run(agent, "What does ACME trade at?", context=Desk("desk-7")))
    for item in result.new_items:
        if item.type == "tool_call_output_item":
            SEEN[item.raw_item["call_id"]] = type(item.output).__name__
    return str(result.final_output), result.to_input_list()


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
