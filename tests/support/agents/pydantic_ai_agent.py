"""A pydantic-ai agent for the adapter tests, offline: a ``FunctionModel`` asks for two tools
in one turn (parallel calls), then answers from what they returned.

``FLAKY_TOOL=fail`` makes ``get_quote`` raise ``ModelRetry`` (a rate limit): the model then
gives up and the run fails (exit 1); otherwise it passes (exit 0). Either live tool raises if
it is called under ``CASSETTE_MODE=replay``. ``python pydantic_ai_agent.py HISTORY`` writes
the run's ``all_messages_json()`` to HISTORY.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from cassette_tui.core.adapters.pydantic_ai import CassetteCapability
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


class Quote(BaseModel):
    symbol: str
    price: Decimal
    as_of: datetime


@dataclass
class Hours:
    exchange: str
    opens: str
    desk: str


def _live() -> None:
    if os.environ.get("CASSETTE_MODE") == "replay":
        raise AssertionError("a live tool was called in replay")


async def get_quote(symbol: str) -> Quote:
    """The latest quote of a symbol."""
    _live()
    if os.environ.get("FLAKY_TOOL") == "fail":
        raise ModelRetry("429 Too Many Requests: retry in 30s")
    return Quote(
        symbol=symbol, price=Decimal("12.50"), as_of=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    )


def market_hours(ctx: RunContext[str], exchange: str) -> Hours:
    """The opening time of an exchange (the desk comes from the run's deps)."""
    _live()
    return Hours(exchange=exchange, opens="09:30", desk=ctx.deps)


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    parts = [p for m in messages for p in m.parts]
    # a ModelRetry comes back as a return whose outcome is "retried" (a RetryPromptPart before)
    ok = [p for p in parts if isinstance(p, ToolReturnPart) and p.outcome == "success"]
    retries = [p for p in parts if isinstance(p, RetryPromptPart | ToolReturnPart) and p not in ok]
    returns = {p.tool_name: p.content for p in ok}
    if retries:
        return ModelResponse(parts=[TextPart(f"FAILED: {retries[-1].content}")])
    if not returns:
        return ModelResponse(
            parts=[
                ToolCallPart("get_quote", {"symbol": "ACME"}, tool_call_id="call-quote"),
                ToolCallPart("market_hours", {"exchange": "XNYS"}, tool_call_id="call-hours"),
            ]
        )
    quote, hours = returns["get_quote"], returns["market_hours"]
    # the types the tools returned, named in the answer: a replay that lost them answers otherwise
    typed = f"{type(quote).__name__}/{type(quote.as_of).__name__}/{type(hours).__name__}"
    return ModelResponse(
        parts=[TextPart(f"{quote.symbol} {quote.price} opens {hours.opens} [{typed}]")]
    )


def build(cassette: CassetteCapability | None = None) -> Agent[str, str]:
    """The agent, its tools recorded or replayed by ``cassette`` (default: from the
    ``CASSETTE_*`` environment): the adapter's three lines are the import and this call."""
    return Agent(
        FunctionModel(model),
        deps_type=str,
        tools=[get_quote, market_hours],
        capabilities=[cassette or CassetteCapability()],
    )


def main() -> int:
    result = build().run_sync("What does ACME trade at?", deps="desk-7")
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_bytes(result.all_messages_json())
    print(result.output)
    return 1 if result.output.startswith("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main())
