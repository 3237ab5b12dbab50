"""The OpenAI Agents SDK: record and replay an agent's function tools (the ``[frameworks]``
extra).

Three lines of user code::

    from cassette_tui.core.adapters.openai_agents import cassette_agent

    agent = cassette_agent(Agent(name="desk", tools=[get_quote, market_hours]))

``cassette_agent`` clones the agent with each ``FunctionTool`` replaced by a copy whose
``on_invoke_tool`` goes through one ``ToolCassette`` (``cassette_tools(tools)`` does the
same for a list of tools); hosted tools, handoffs and other agents' tools are left as they
are. The cassette gets the tool's name and its arguments, the JSON the model wrote (parsed;
text that is not JSON is kept as a string); the live side gets the ``ToolContext``.

What is recorded is what ``on_invoke_tool`` gives the SDK: the tool's return value, or the
text of a failure the SDK's failure handler made of an exception (the default: "An error
occurred while running the tool..."), which is what the model reads either way. A tool with
a return annotation (``-> Quote``) is written as JSON under that type and read back as it
(pydantic ``TypeAdapter``, as the SDK validates the arguments). The model reads ``str()``
of the output, so an annotation that does not say what is inside (``-> dict`` around a
``datetime``, a ``Decimal``, a tuple) is not trusted: a value that does not come back
from its JSON under the annotation as the same type with the same ``str()`` is recorded
with its types by the codec (``BUILTIN_CODEC`` unless ``codec=`` says otherwise;
``response_types`` in the entry) and replayed as it was. An exception that reaches the SDK
(``failure_error_function=None``) is recorded as an error and raised again.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agents import Agent, FunctionTool, Tool
from agents.tool_context import ToolContext
from pydantic import TypeAdapter

from ..replay.codec import BUILTIN_CODEC
from ._bridge import ToolCassette
from ._typed import dumped, is_plain_json, loaded, return_adapter


def cassette_agent(
    agent: Agent[Any], *, cassette: ToolCassette | None = None, **options: Any
) -> Agent[Any]:
    """A clone of ``agent`` whose function tools are recorded or replayed (see
    ``cassette_tools``). ``options``: as ``wrap_dispatcher``, when no ``cassette`` is
    given."""
    return agent.clone(tools=cassette_tools(agent.tools, cassette=cassette, **options))


def cassette_tools(
    tools: list[Tool], *, cassette: ToolCassette | None = None, **options: Any
) -> list[Tool]:
    """``tools`` with every ``FunctionTool`` recorded to or replayed from one cassette
    (``cassette``, else a new one from ``options``, as ``wrap_dispatcher``, with
    ``codec=BUILTIN_CODEC`` unless given, and the ``CASSETTE_*`` environment); other tools
    as they are. Share ``cassette`` between the agents of one run.

    Raises:
        as ``wrap_dispatcher`` (a bad mode, a missing cassette, a recording that exists).
    """
    if cassette is None:
        options.setdefault("codec", BUILTIN_CODEC)
    shared = cassette if cassette is not None else ToolCassette(asynchronous=True, **options)
    return [_recorded(t, shared) if isinstance(t, FunctionTool) else t for t in tools]


def _recorded(tool: FunctionTool, shared: ToolCassette) -> FunctionTool:
    live = tool.on_invoke_tool
    returns = _return_adapter(tool)

    def encode(value: Any) -> Any:
        if returns is None or isinstance(value, str):  # a str is what the model reads
            return value
        data = dumped(returns, value)
        back = loaded(returns, data)
        if type(back) is type(value) and str(back) == str(value):
            return data
        return value  # the annotation loses what the model reads: the codec keeps the types

    def decode(response: Any) -> Any:
        if returns is None or not is_plain_json(response):  # typed by the codec already
            return response
        return loaded(returns, response)

    async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> Any:
        return await shared.acall(
            tool.name, _arguments(input), lambda: live(ctx, input), encode, decode
        )

    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def _arguments(text: str) -> Any:
    """The model's argument text as JSON data (an object as a rule), or the text itself."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def _return_adapter(tool: FunctionTool) -> TypeAdapter[Any] | None:
    """The return annotation of the function ``function_tool`` made ``tool`` of, if any."""
    try:
        function = tool.__wrapped__  # the decorated callable; AttributeError otherwise
    except AttributeError:
        return None
    return return_adapter(function)
