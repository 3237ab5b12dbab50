"""LangChain and LangGraph: record and replay every tool call as tool-call middleware (the
``[frameworks]`` extra).

Three lines of user code, with ``langchain``'s ``create_agent``::

    from cassette_tui.core.adapters.langchain import CassetteMiddleware

    agent = create_agent(model, tools, middleware=[ToolRetryMiddleware(), CassetteMiddleware()])

or a LangGraph ``ToolNode`` of your own::

    cassette = CassetteMiddleware()
    node = ToolNode(tools, wrap_tool_call=cassette.wrap_tool_call,
                    awrap_tool_call=cassette.awrap_tool_call)

The cassette gets the tool call's name and JSON ``args`` as the model wrote them; the live
side is the framework's own ``handler(request)`` (state, runtime, injected arguments
untouched). The response is the ``ToolMessage`` the tool node made, as LangChain's own
message dict (``message_to_dict``) without its ``tool_call_id`` (and its ``id`` when it has
none, as the tool node makes it; LangGraph gives it a random one later): a replayed message gets
the id of the call it answers, so a model that numbers its calls differently each run
still reads a consistent conversation. A tool error that the tool node does not turn into
a message (LangGraph's default for every error but bad arguments) is recorded as an error
and raised again at replay as the recorded class, with the same ``str()``.

Middleware order is the user's: placed after ``ToolRetryMiddleware`` (inside it), the
cassette records every attempt, so a retried call is a key recorded several times and
replay serves the attempts in order (a 429, then the answer); placed before it, one entry
holds the call's final outcome. Both ``invoke`` and ``ainvoke`` are served by one instance.
A tool that returns a ``Command`` cannot be recorded (an error names the tool). Typed values
in a message (a ``content_and_artifact`` tool's artifact holding a ``datetime`` or a
tuple) are recorded with their types by the codec (``BUILTIN_CODEC`` unless ``codec=``
says otherwise; ``response_types`` in the entry) and come back as they were.

``live_dispatcher(tools)`` answers as the middleware records, for ``cassette-tui verify
--dispatcher``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage, message_to_dict, messages_from_dict
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from ..replay.codec import BUILTIN_CODEC, Codec
from ..replay.turn import CallSlot
from ._bridge import ToolCassette


class CassetteMiddleware(AgentMiddleware[Any, Any]):
    """Tool-call middleware that records every tool call to a cassette, or serves it
    from one. Keywords as ``wrap_dispatcher`` (default: the ``CASSETTE_*`` environment;
    ``codec``: ``BUILTIN_CODEC``).

    Raises:
        as ``wrap_dispatcher``, when constructed (a bad mode, a missing cassette).
    """

    def __init__(
        self,
        *,
        mode: str | None = None,
        path: str | Path | None = None,
        report: str | Path | None = None,
        config: str | Path | None = None,
        repeat: str = "error",
        overwrite: bool = False,
        codec: Codec | None = BUILTIN_CODEC,
    ) -> None:
        super().__init__()
        self.cassette = ToolCassette(
            asynchronous=True,
            mode=mode,
            path=path,
            report=report,
            config=config,
            repeat=repeat,
            overwrite=overwrite,
            codec=codec,
        )

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        call = request.tool_call
        return self.cassette.call(
            call["name"], call["args"], lambda: handler(request), _encode(call), _decode(call),
            _slot(request),
        )  # fmt: skip

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        return await self.cassette.acall(
            call["name"], call["args"], lambda: handler(request), _encode(call), _decode(call),
            _slot(request),
        )  # fmt: skip


def _slot(request: ToolCallRequest) -> CallSlot | None:
    """The call's place among its AI message's ``tool_calls`` (``replay/turn.py``): the
    tool node runs them in a thread pool, so the order they start in, and whether they
    overlap, is the threads' doing; ``None`` when the message is not in the state."""
    state = request.state
    messages = (
        state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    )
    call_id = request.tool_call.get("id")
    for message in reversed(messages or ()):
        calls = getattr(message, "tool_calls", None) or ()
        ids = [c.get("id") for c in calls]
        if call_id is not None and call_id in ids:
            turn = message.id if message.id is not None else id(message)
            return CallSlot(("langchain", turn), ids.index(call_id), len(ids))
    return None


def _encode(call: Any) -> Callable[[Any], Any]:
    def encode(result: Any) -> Any:
        if not isinstance(result, ToolMessage):
            raise TypeError(
                f"tool {call['name']!r} returned a {type(result).__name__}, not a ToolMessage: "
                "only tool messages are recorded"
            )
        data = dict(message_to_dict(result)["data"])
        data.pop("tool_call_id", None)  # the live call's id: given back at replay
        if data.get("id") is None:  # LangGraph's add_messages gives it one after the node
            data.pop("id", None)  # as the imported messages hold it (recorded_tool_message)
        return data

    return encode


def _decode(call: Any) -> Callable[[Any], Any]:
    def decode(response: Any) -> Any:
        data = dict(response, tool_call_id=call["id"])
        return messages_from_dict([{"type": "tool", "data": data}])[0]

    return decode


def live_dispatcher(tools: Sequence[BaseTool]) -> Callable[[str, Any], dict[str, Any]]:
    """A ``(tool, args) -> response`` dispatcher over LangChain ``tools`` that answers as
    ``CassetteMiddleware`` records: the ``ToolMessage`` the tool makes, as its message dict
    without ``tool_call_id``. ``cassette-tui verify --dispatcher module:NAME`` re-issues a
    LangChain cassette's calls through it and compares like with like (a plain function's
    bare return value never equals a recorded message, so every entry would read stale).

    A tool that needs what only a running graph injects (``ToolRuntime``, state, a store)
    fails here; ``verify`` then reports it as ``error live``.

    Raises:
        KeyError: ``tool`` is none of ``tools`` (verify: ``error live``, naming it).
        the tool's own exception, as the tool raised it.
    """
    by_name = {t.name: t for t in tools}

    def dispatch(tool: str, args: Any) -> dict[str, Any]:
        if tool not in by_name:
            raise KeyError(f"no LangChain tool named {tool!r} (tools: {sorted(by_name)})")
        call = {"name": tool, "args": args, "id": "verify", "type": "tool_call"}
        return _encode(call)(by_name[tool].invoke(call))

    return dispatch
