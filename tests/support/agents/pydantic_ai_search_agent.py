"""A pydantic-ai agent (``FunctionModel``, offline) whose search answer steers its next
call: it reads the top hit, then saves it as a note; it passes when the doc it read says
"5 retries". ``SEARCH_RANK=bad`` (live) ranks the obsolete doc first, so the failing and
passing recordings part at the search and every later call has other args."""

from __future__ import annotations

import os
import sys

from cassette_tui.core.adapters.pydantic_ai import CassetteCapability
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

DOCS = {"docs/retry-v1.md": "3 retries (obsolete)", "docs/retry-v2.md": "5 retries"}


def search_docs(query: str) -> list[str]:
    """Search the docs (the ranking changes between index builds)."""
    ranked = sorted(DOCS, reverse=os.environ.get("SEARCH_RANK") != "bad")
    return ranked


def read_doc(path: str) -> str:
    """Read one doc."""
    return DOCS[path]


def save_note(text: str) -> str:
    """Save a note (a write)."""
    return "saved"


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    got = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if not got:
        return ModelResponse(parts=[ToolCallPart("search_docs", {"query": "retry budget"})])
    if len(got) == 1:
        return ModelResponse(parts=[ToolCallPart("read_doc", {"path": got[0][0]})])
    if len(got) == 2:
        return ModelResponse(parts=[ToolCallPart("save_note", {"text": got[1]})])
    return ModelResponse(parts=[TextPart(got[1])])


agent = Agent(
    FunctionModel(model),
    tools=[search_docs, read_doc, save_note],
    capabilities=[CassetteCapability()],
)

if __name__ == "__main__":
    answer = agent.run_sync("What is the retry budget?").output
    print(answer)
    sys.exit(0 if answer == "5 retries" else 1)
