"""pydantic-ai: record and replay every tool of an agent (the ``[frameworks]`` extra).

Three lines of user code::

    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability

    agent = Agent(model, tools=[...], capabilities=[CassetteCapability()])

``CassetteCapability`` wraps the agent's assembled toolset (every function tool, MCP
server or other toolset it holds; output tools are not tool calls) in ``CassetteToolset``,
a ``WrapperToolset`` whose ``call_tool`` goes through one ``ToolCassette``: the live side
gets the ``RunContext`` as usual; the cassette gets the tool's name and its validated
arguments as JSON (``pydantic_core.to_jsonable_python``). ``CassetteToolset(toolset)``
wraps one toolset instead (``Agent(toolsets=[CassetteToolset(FunctionToolset([...]))])``).

Types: a function tool's return annotation (``-> Quote``, ``-> datetime``, a dataclass)
is a pydantic ``TypeAdapter`` that writes the response as JSON and reads it back as that
type, the way pydantic-ai itself validates tool arguments; without one the value is
written as pydantic's JSON form and replayed as plain JSON. A ``ModelRetry`` raised by the
live tool is recorded as an error and raised again at replay with the same ``message``,
so pydantic-ai writes the same retry prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_ai.toolsets.function import FunctionToolsetTool
from pydantic_core import to_jsonable_python

from ..replay.codec import Codec
from ._bridge import ToolCassette
from ._typed import dumped, loaded, return_adapter


def cassette(
    *,
    mode: str | None = None,
    path: str | Path | None = None,
    report: str | Path | None = None,
    config: str | Path | None = None,
    repeat: str = "error",
    overwrite: bool = False,
    codec: Codec | None = None,
) -> ToolCassette:
    """The ``ToolCassette`` of a pydantic-ai agent (its tools are awaited). Arguments as
    ``wrap_dispatcher`` (default: the ``CASSETTE_*`` environment; every value is written as
    pydantic's JSON first, so a ``codec`` is rarely needed)."""
    return ToolCassette(
        asynchronous=True,
        mode=mode,
        path=path,
        report=report,
        config=config,
        repeat=repeat,
        overwrite=overwrite,
        codec=codec,
    )


@dataclass
class CassetteToolset(WrapperToolset[Any]):
    """``wrapped`` with every tool call recorded or replayed through ``cassette`` (default:
    a new one from the ``CASSETTE_*`` environment)."""

    cassette: ToolCassette = field(default_factory=cassette)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        returns = _return_adapter(tool)

        def encode(value: Any) -> Any:
            return to_jsonable_python(value) if returns is None else dumped(returns, value)

        def decode(response: Any) -> Any:
            return response if returns is None else loaded(returns, response)

        return await self.cassette.acall(
            name,
            to_jsonable_python(tool_args),
            lambda: self.wrapped.call_tool(name, tool_args, ctx, tool),
            encode,
            decode,
        )


@dataclass(init=False)
class CassetteCapability(AbstractCapability[Any]):
    """Records or replays every tool of the agent it is given to (one cassette for the
    agent's runs in this process). Keywords as ``wrap_dispatcher``.

    Raises:
        as ``wrap_dispatcher``, when constructed (a bad mode, a missing cassette).
    """

    cassette: ToolCassette

    def __init__(self, **options: Any) -> None:
        self.cassette = cassette(**options)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds an open cassette: not built from an agent spec

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        return CassetteToolset(toolset, cassette=self.cassette)


def _return_adapter(tool: ToolsetTool[Any]) -> TypeAdapter[Any] | None:
    """A ``TypeAdapter`` of a function tool's return annotation, or ``None`` (not a
    function tool, no annotation, or ``Any``). The agent's toolset combines its toolsets:
    its tools name the tool they stand for in ``source_tool``."""
    while not isinstance(tool, FunctionToolsetTool):
        source = getattr(tool, "source_tool", None)
        if not isinstance(source, ToolsetTool):
            return None
        tool = source
    if not isinstance(tool.toolset, FunctionToolset):
        return None
    held = tool.toolset.tools.get(tool.original_name or tool.tool_def.name)
    return None if held is None else return_adapter(held.function)
