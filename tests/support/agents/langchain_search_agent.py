"""A LangChain agent (``create_agent``, a scripted chat model, offline) whose search answer
steers its next call: it reads the top hit, then saves it as a note (a write); it passes
when the doc it read says "5 retries". ``SEARCH_RANK=bad`` (live) ranks the obsolete doc
first. ``verify_dispatch`` is the live tools as ``cassette-tui verify --dispatcher`` takes
them (``langchain_search_agent:verify_dispatch``)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from cassette_tui.core.adapters.langchain import CassetteMiddleware, live_dispatcher
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

DOCS = {"docs/retry-v1.md": "3 retries (obsolete)", "docs/retry-v2.md": "5 retries"}


@tool
def search_docs(query: str) -> list[str]:
    """Search the docs (the ranking changes between index builds)."""
    return sorted(DOCS, reverse=os.environ.get("SEARCH_RANK") != "bad")


@tool
def read_doc(path: str) -> str:
    """Read one doc."""
    return DOCS[path]


@tool
def save_note(text: str) -> str:
    """Save a note (a write)."""
    return "saved"


TOOLS = [search_docs, read_doc, save_note]
verify_dispatch = live_dispatcher(TOOLS)


class ScriptedChatModel(BaseChatModel):
    """Search, read the top hit, save it, answer with it."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        got = [m.content for m in messages if isinstance(m, ToolMessage)]
        calls = [("search_docs", {"query": "retry budget"})]
        if got:
            calls.append(("read_doc", {"path": json.loads(str(got[0]))[0]}))
        if len(got) > 1:
            calls.append(("save_note", {"text": got[1]}))
        if len(got) == len(calls):
            reply = AIMessage(content=got[1])
        else:
            name, args = calls[len(got)]
            reply = AIMessage(
                content="",
                tool_calls=[
                    {"name": name, "args": args, "id": f"c{len(got)}", "type": "tool_call"}
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


if __name__ == "__main__":
    agent = create_agent(ScriptedChatModel(), TOOLS, middleware=[CassetteMiddleware()])
    state = agent.invoke({"messages": [HumanMessage("What is the retry budget?")]})
    answer = state["messages"][-1].content
    print(answer)
    sys.exit(0 if answer == "5 retries" else 1)
