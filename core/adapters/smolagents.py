"""smolagents: record and replay a ``ToolCallingAgent``'s tool calls at its own dispatcher,
``execute_tool_call`` (the ``[frameworks]`` extra).

Three lines of user code::

    from cassette_tui.core.adapters.smolagents import cassette_agent

    agent = cassette_agent(ToolCallingAgent(tools=[get_quote], model=model))

``cassette_agent`` replaces the agent's ``execute_tool_call`` (on that instance only): the
cassette gets the tool's name and the arguments the model wrote (before the agent puts its
state variables in); the live side is the agent's own method. ``final_answer`` is not a
tool of the outside world and stays live (``live_tools``), so a model that answers
otherwise in a replay ends otherwise instead of missing. Managed agents are called through
the same method and are recorded like tools.

Types: a tool's output goes through smolagents' own ``handle_agent_output_types`` with the
tool's ``output_type``, live and replayed alike: a ``"string"`` tool gives an ``AgentText``
back, an ``"object"`` tool its JSON. A tool error reaches the agent as the
``AgentToolExecutionError`` it raised live (recorded as an error; the same class and
``str()`` at replay), which smolagents writes into the step's memory; a replayed one is
logged by the agent's logger as its constructor logged the live one. The model reads
``str()`` of an ``"object"`` output, so typed values in it (a ``datetime``, a tuple) are
recorded with their types by the codec (``BUILTIN_CODEC`` unless ``codec=`` says
otherwise; ``response_types`` in the entry) and come back as they were. Images and audio
(``AgentImage``, ``AgentAudio``) are not recorded. A ``CodeAgent`` calls its tools from the
code it runs, not through this method: it is not covered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from smolagents.agent_types import AgentText, AgentType, handle_agent_output_types
from smolagents.agents import MultiStepAgent
from smolagents.utils import AgentError

from ..format.errors import ToolError
from ..replay.codec import BUILTIN_CODEC
from ..replay.turn import CallSlot
from ._bridge import ToolCassette


def cassette_agent(
    agent: MultiStepAgent,
    *,
    cassette: ToolCassette | None = None,
    live_tools: Iterable[str] = ("final_answer",),
    **options: Any,
) -> MultiStepAgent:
    """``agent`` with every call of its ``execute_tool_call`` recorded to or replayed from
    ``cassette`` (else a new one from ``options``, as ``wrap_dispatcher``, with
    ``codec=BUILTIN_CODEC`` unless given, and the ``CASSETTE_*`` environment), but the
    tools named in ``live_tools``. Returns the same
    agent; its ``cassette`` attribute is the ``ToolCassette``.

    Raises:
        TypeError: the agent has no ``execute_tool_call`` (a ``CodeAgent``).
        as ``wrap_dispatcher`` (a bad mode, a missing cassette, a recording that exists).
    """
    live: Callable[[str, Any], Any] | None = getattr(agent, "execute_tool_call", None)
    if live is None:
        raise TypeError(
            f"{type(agent).__name__} has no execute_tool_call: a CodeAgent calls its tools "
            "from the code it runs; use a ToolCallingAgent"
        )
    if cassette is None:
        options.setdefault("codec", BUILTIN_CODEC)
    shared = cassette if cassette is not None else ToolCassette(asynchronous=False, **options)
    passed = frozenset(live_tools)

    turns: Callable[..., Any] | None = getattr(agent, "process_tool_calls", None)

    def process_tool_calls(chat_message: Any, memory_step: Any) -> Any:
        # the turn's calls, for the slot of each (its threads copy this context)
        calls = chat_message.tool_calls or ()
        _TURN.set(_Turn([c for c in calls if c.function.name not in passed]))
        assert turns is not None
        return turns(chat_message, memory_step)

    def execute_tool_call(tool_name: str, arguments: dict[str, str] | str) -> Any:
        if tool_name in passed:
            return live(tool_name, arguments)
        held = {**agent.tools, **agent.managed_agents}.get(tool_name)
        output_type = getattr(held, "output_type", None)
        try:
            return shared.call(
                tool_name,
                arguments,
                lambda: live(tool_name, arguments),
                _encode,
                lambda response: handle_agent_output_types(response, output_type),
                _slot(arguments),
            )
        except AgentError as exc:
            if isinstance(exc, ToolError):  # replayed: made without the constructor that
                agent.logger.log_error(str(exc))  # logs it, as the live error was logged
            raise

    agent.execute_tool_call = execute_tool_call  # type: ignore[method-assign]
    if turns is not None:
        agent.process_tool_calls = process_tool_calls  # type: ignore[method-assign]
    agent.cassette = shared  # type: ignore[attr-defined]
    return agent


class _Turn:
    """One model turn's recorded calls (``final_answer`` and the other live tools left
    out); the object itself names the turn (``replay/turn.py``)."""

    def __init__(self, calls: list[Any]) -> None:
        self.calls = calls


_TURN: ContextVar[_Turn | None] = ContextVar("cassette_smolagents_turn", default=None)


def _slot(arguments: Any) -> CallSlot | None:
    """The call's place in its turn: smolagents runs a turn's calls in a thread pool, so
    the order they start in, and whether they overlap, is the threads' doing. The call is
    known by its arguments object, which ``process_tool_calls`` hands over as the model
    wrote it; ``None`` when it is not found (empty arguments)."""
    turn = _TURN.get()
    if turn is None:
        return None
    for index, call in enumerate(turn.calls):
        if call.function.arguments is arguments:
            return CallSlot(turn, index, len(turn.calls))
    return None


def _encode(value: Any) -> Any:
    """An output as JSON: an ``AgentText`` as its text; other values as they are (the
    recorder names the path of one that is not JSON)."""
    if isinstance(value, AgentText):
        return str(value.to_raw())
    if isinstance(value, AgentType):
        raise TypeError(f"a {type(value).__name__} output is not recorded (only text and JSON)")
    return value
