"""A LangChain agent (``create_agent``) for the adapter tests, offline: a scripted chat model
asks for two tools in one turn (parallel calls), then answers from their messages.

``get_quote`` is flaky: it raises ``RateLimited`` on its first attempt, and on every attempt
under ``FLAKY_TOOL=fail``; ``ToolRetryMiddleware`` (outside the cassette) tries it twice, so
a passing run records the key twice (a 429, then the quote) and a failing run ends with the
retry's error message, the model gives up and the run exits 1. Either live tool raises if it
is called under ``CASSETTE_MODE=replay``. ``python langchain_agent.py HISTORY`` writes the
run's messages (``messages_to_dict``) to HISTORY.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassette_tui.core.adapters.langchain import CassetteMiddleware
from langchain.agents import create_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.outputs import ChatGeneration, ChatResult


class RateLimited(Exception):
    """The quote service's 429."""


@dataclass
class Desk:
    name: str


ATTEMPTS = {"get_quote": 0}


def _live() -> None:
    if os.environ.get("CASSETTE_MODE") == "replay":
        raise AssertionError("a live tool was called in replay")


@tool
def get_quote(symbol: str) -> dict[str, Any]:
    """The latest quote of a symbol."""
    _live()
    ATTEMPTS["get_quote"] += 1
    if os.environ.get("FLAKY_TOOL") == "fail" or ATTEMPTS["get_quote"] == 1:
        raise RateLimited("429 Too Many Requests: retry in 30s")
    return {"symbol": symbol, "price": "12.50", "as_of": "2026-01-02T03:04:05Z"}


@tool
def market_hours(exchange: str, runtime: ToolRuntime[Desk]) -> str:
    """The opening time of an exchange (the desk comes from the run's context)."""
    _live()
    return f"{exchange} opens 09:30 for {runtime.context.name}"


class ScriptedChatModel(BaseChatModel):
    """Two tool calls at once, then an answer from the tool messages."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        results = {m.name: m for m in messages if isinstance(m, ToolMessage)}
        if not results:
            reply = AIMessage(
                content="",
                id="ai-calls",
                tool_calls=[
                    {
                        "name": "get_quote",
                        "args": {"symbol": "ACME"},
                        "id": "call-quote",
                        "type": "tool_call",
                    },
                    {
                        "name": "market_hours",
                        "args": {"exchange": "XNYS"},
                        "id": "call-hours",
                        "type": "tool_call",
                    },
                ],
            )
        elif any(m.status == "error" for m in results.values()):
            failed = next(m for m in results.values() if m.status == "error")
            reply = AIMessage(content=f"FAILED: {failed.content}", id="ai-answer")
        else:
            quote = json.loads(results["get_quote"].content)
            reply = AIMessage(
                content=f"{quote['symbol']} {quote['price']}; {results['market_hours'].content}",
                id="ai-answer",
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(cassette: CassetteMiddleware | None = None) -> Any:
    """The agent, each tool attempt recorded or replayed by ``cassette`` (default: from the
    ``CASSETTE_*`` environment) inside the retry middleware."""
    retry = ToolRetryMiddleware(max_retries=1, initial_delay=0, jitter=False, on_failure="continue")
    return create_agent(
        ScriptedChatModel(),
        [get_quote, market_hours],
        middleware=[retry, cassette or CassetteMiddleware()],
        context_schema=Desk,
    )


def run(agent: Any) -> tuple[str, list[dict[str, Any]]]:
    state = agent.invoke(
        {"messages": [HumanMessage("What does ACME trade at?", id="human-question")]},
        context=Desk("desk-7"),
    )
    return state["messages"][-1].content, messages_to_dict(state["messages"])


def main() -> int:
    answer, history = run(build())
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(history, sort_keys=True), encoding="utf-8")
    print(answer)
    return 1 if answer.startswith("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main())
