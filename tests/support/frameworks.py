"""Real output of real agent frameworks, made offline by each framework's own test model:
the files the importers read (issue 25). Every framework runs the same task twice:

- passing: the model calls ``get_weather`` for Porto and Lisbon in parallel, then
  ``book(city="Porto")``, then answers;
- failing: the same parallel calls, then ``book`` with arguments that are not valid JSON
  (``{"city": "Porto", `` : the model's truncated output), which the framework refuses or
  hands over as text, then the ``book`` call retried well formed, then the answer
  (LangGraph ends the run at the malformed call: its agent does not run invalid calls).

So ``diff failing passing`` parts at the failing run's seq 3, the malformed call. Each
function writes its files into ``folder`` and returns their paths; the frameworks are
imported inside them (the ``frameworks`` extra of pyproject.toml pins their versions).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

TASK = "Weather in Porto and Lisbon, then book Porto."
ANSWER = "Booked Porto: 22C there, 25C in Lisbon."
MALFORMED = '{"city": "Porto", '
CITIES = {"Porto": 22, "Lisbon": 25}


def _weather(city: str) -> dict[str, Any]:
    return {"city": city, "temp_c": CITIES.get(city, 0)}


def _book(city: str) -> dict[str, Any]:
    return {"booked": city}


def _script(failing: bool) -> list[list[tuple[str, Any, str]]]:
    """The model's turns: each a list of ``(tool, args, call id)``; ``[]`` is the answer.
    ``args`` is an object, or the text the model sent."""
    turns: list[list[tuple[str, Any, str]]] = [
        [
            ("get_weather", {"city": "Porto"}, "call_w1"),
            ("get_weather", {"city": "Lisbon"}, "call_w2"),
        ]
    ]
    if failing:
        turns.append([("book", MALFORMED, "call_b1")])
    turns.append([("book", {"city": "Porto"}, "call_b2")])
    turns.append([])
    return turns


def _text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


# -- pydantic-ai: all_messages_json() and its OpenTelemetry GenAI spans -------------------


def pydantic_ai_run(folder: Path, failing: bool) -> dict[str, Path]:
    """Run a pydantic-ai agent on ``FunctionModel``, instrumented with an OpenTelemetry
    tracer provider. Writes ``messages.json`` (``result.all_messages_json()``),
    ``spans.jsonl`` (each span's ``to_json()`` on a line, as a ConsoleSpanExporter with a
    one-line formatter prints them), ``console.txt`` (the ConsoleSpanExporter's own
    pretty-printed objects) and ``otlp.json`` (the spans encoded as an OTLP
    ``ExportTraceServiceRequest`` in JSON by the OTLP exporter's encoder)."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    turns = iter(_script(failing))

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls = next(turns)
        if not calls:
            return ModelResponse(parts=[TextPart(ANSWER)])
        parts: list[Any] = [TextPart("Let me look that up.")] if len(calls) > 1 else []
        parts += [ToolCallPart(tool, args, tool_call_id=cid) for tool, args, cid in calls]
        return ModelResponse(parts=parts)

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(FunctionModel(model))
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
    agent.tool_plain(_weather, name="get_weather")
    agent.tool_plain(_book, name="book", retries=2)
    result = agent.run_sync(TASK)
    spans = exporter.get_finished_spans()
    folder.mkdir(parents=True, exist_ok=True)
    out = {
        "messages": folder / "messages.json",
        "spans": folder / "spans.jsonl",
        "console": folder / "console.txt",
        "otlp": folder / "otlp.json",
    }
    out["messages"].write_bytes(result.all_messages_json())
    out["spans"].write_text("".join(s.to_json(indent=None) + "\n" for s in spans))
    out["console"].write_text("".join(s.to_json() + "\n" for s in spans))  # the default format
    out["otlp"].write_text(MessageToJson(encode_spans(spans)))
    return out


# -- OpenAI Agents SDK: to_input_list() and the trace export --------------------------------


def openai_agents_agent(failing: bool, typed: bool = False) -> Any:
    """The Agents SDK agent of the task on a ``Model`` subclass returning function-call
    items; its tools return JSON text (what the model reads either way), or with
    ``typed`` ``get_weather`` returns its dict (``-> dict[str, Any]``: the model reads its
    ``str()``)."""
    from agents import Agent, Model, ModelResponse, Usage, function_tool
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    turns = iter(_script(failing))

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            calls = next(turns)
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=cid,
                    name=tool,
                    arguments=_text(args),
                    id=f"fc_{cid}",
                    status="completed",
                )  # fmt: skip
                for tool, args, cid in calls
            ]
            if not calls:
                text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
                output = [
                    ResponseOutputMessage(
                        id="msg_1",
                        type="message",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )  # fmt: skip
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return json.dumps(_weather(city))

    @function_tool(name_override="get_weather")
    def get_weather_typed(city: str) -> dict[str, Any]:
        """The weather of a city."""
        return _weather(city)

    @function_tool
    def book(city: str) -> str:
        """Book a city."""
        return json.dumps(_book(city))

    weather = get_weather_typed if typed else get_weather
    return Agent(name="booker", model=Scripted(), tools=[weather, book])


def openai_agents_run(folder: Path, failing: bool) -> dict[str, Path]:
    """Run ``openai_agents_agent``. Writes ``items.json`` (``result.to_input_list()``) and
    ``trace.json`` (every trace and span as ``export()`` makes them, as ``{"data":
    [...]}`` like the SDK's backend exporter sends them), captured by a
    ``TracingProcessor``."""
    from agents import Runner, set_tracing_disabled
    from agents.tracing import TracingProcessor, set_trace_processors

    class Capture(TracingProcessor):
        def __init__(self) -> None:
            self.items: list[Any] = []

        def on_trace_start(self, trace: Any) -> None:
            self.items.append(trace.export())

        def on_trace_end(self, trace: Any) -> None:
            pass

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            self.items.append(span.export())

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    capture = Capture()
    set_trace_processors([capture])
    # tracing is process-wide: an agent module imported by another test (the adapters'
    # test agents) may have switched it off
    set_tracing_disabled(False)
    try:
        result = asyncio.run(Runner.run(openai_agents_agent(failing), TASK))
    finally:
        set_trace_processors([])
        set_tracing_disabled(True)  # offline: nothing is exported afterwards
    folder.mkdir(parents=True, exist_ok=True)
    out = {"items": folder / "items.json", "trace": folder / "trace.json"}
    out["items"].write_text(json.dumps(result.to_input_list(), indent=1))
    out["trace"].write_text(json.dumps({"data": [i for i in capture.items if i]}, indent=1))
    return out


# -- LangChain / LangGraph: messages_to_dict and a checkpoint's messages ---------------------


def langgraph_run(folder: Path, failing: bool, cassette: Any = None) -> dict[str, Path]:
    """Run LangGraph's prebuilt ReAct agent on a fake chat model with a ``MemorySaver``
    (its ``ToolNode`` through ``cassette``'s methods when a ``CassetteMiddleware`` is given).
    Writes ``messages.json`` (``messages_to_dict`` of the final state's messages) and
    ``checkpoint.json`` (the saver's last checkpoint, serialized by LangChain's
    ``dumpd``: its ``channel_values.messages``). A malformed call is an AI message's
    ``invalid_tool_calls`` entry, as LangChain's parsers make it."""
    import warnings

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.load import dumpd
    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import MemorySaver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        from langgraph.prebuilt import create_react_agent

    @tool
    def get_weather(city: str) -> dict[str, Any]:
        """The weather of a city."""
        return _weather(city)

    @tool
    def book(city: str) -> dict[str, Any]:
        """Book a city."""
        return _book(city)

    replies = []
    for calls in _script(failing):
        good = [{"name": t, "args": a, "id": c} for t, a, c in calls if not isinstance(a, str)]
        bad = [
            {"name": t, "args": a, "id": c, "error": "Function arguments are not valid JSON"}
            for t, a, c in calls
            if isinstance(a, str)
        ]
        text = ANSWER if not calls else ("Let me look that up." if len(calls) > 1 else "")
        replies.append(AIMessage(content=text, tool_calls=good, invalid_tool_calls=bad))

    class FakeWithTools(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tools: Any = [get_weather, book]
        if cassette is not None:
            from langgraph.prebuilt import ToolNode

            tools = ToolNode(
                tools, wrap_tool_call=cassette.wrap_tool_call,
                awrap_tool_call=cassette.awrap_tool_call,
            )  # fmt: skip
        agent = create_react_agent(
            FakeWithTools(messages=iter(replies)), tools, checkpointer=MemorySaver()
        )
    config: Any = {"configurable": {"thread_id": "t1"}}
    state = agent.invoke({"messages": [HumanMessage(TASK)]}, config)
    checkpoint = agent.checkpointer.get(config)
    folder.mkdir(parents=True, exist_ok=True)
    out = {"messages": folder / "messages.json", "checkpoint": folder / "checkpoint.json"}
    out["messages"].write_text(json.dumps(messages_to_dict(state["messages"]), indent=1))
    out["checkpoint"].write_text(json.dumps(dumpd(checkpoint), indent=1))
    return out


# -- smolagents: memory steps ---------------------------------------------------------------


def smolagents_model(script: list[list[tuple[str, Any, str]]]) -> Any:
    """A smolagents ``Model`` that answers each step with the next turn of ``script``
    (``(tool, args, call id)`` each; ``[]``: ``final_answer`` with ``ANSWER``)."""
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )

    turns = iter(script)

    class Scripted(Model):
        def __init__(self) -> None:
            super().__init__(model_id="scripted")

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatMessage:
            calls = next(turns) or [("final_answer", {"answer": ANSWER}, "call_end")]
            return ChatMessage(
                role=MessageRole.ASSISTANT,
                content="Let me look that up." if len(calls) > 1 else "",
                tool_calls=[
                    ChatMessageToolCall(
                        id=cid,
                        type="function",
                        function=ChatMessageToolCallFunction(name=name, arguments=args),
                    )
                    for name, args, cid in calls
                ],
            )

    return Scripted()


def smolagents_run(folder: Path, failing: bool) -> dict[str, Path]:
    """Run a smolagents ``ToolCallingAgent`` on a ``Model`` subclass. Writes
    ``steps.json`` (``agent.memory.get_full_steps()``, dumped with ``default=str``)."""
    from smolagents import ToolCallingAgent, tool

    @tool
    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city
        """
        return json.dumps(_weather(city))

    @tool
    def book(city: str) -> str:
        """Book a city.

        Args:
            city: the city
        """
        return json.dumps(_book(city))

    agent = ToolCallingAgent(tools=[get_weather, book], model=smolagents_model(_script(failing)), max_steps=6,
                             verbosity_level=0)  # fmt: skip
    agent.run(TASK)
    folder.mkdir(parents=True, exist_ok=True)
    out = {"steps": folder / "steps.json"}
    out["steps"].write_text(json.dumps(agent.memory.get_full_steps(), default=str, indent=1))
    return out


# -- Anthropic Messages: the SDK's own types -----------------------------------------------


def anthropic_run(folder: Path, failing: bool) -> dict[str, Path]:
    """An Anthropic Messages conversation built from the ``anthropic`` SDK's types: each
    assistant turn a ``Message`` (``model_dump``), each tool result a
    ``ToolResultBlockParam``. The API parses tool inputs itself, so the failing run's
    ``book`` call is a well-formed call the tool refuses (``is_error``), then retried.
    Writes ``messages.json`` (``{"model", "messages"}``, a request body)."""
    from anthropic.types import Message, TextBlock, ToolResultBlockParam, ToolUseBlock, Usage

    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    script = _script(failing)
    for n, calls in enumerate(script):
        blocks: list[Any] = [TextBlock(type="text", text=ANSWER if not calls else "Let me look.")]
        results: list[ToolResultBlockParam] = []
        for tool_name, args, cid in calls:
            bad = isinstance(args, str)
            given = {"city": "Porto, "} if bad else args
            blocks.append(
                ToolUseBlock(type="tool_use", id=f"toolu_{cid}", name=tool_name, input=given)
            )
            answer = (
                f"unknown city {given['city']!r}"
                if bad
                else json.dumps(
                    _weather(given["city"]) if tool_name == "get_weather" else _book(given["city"])
                )
            )
            results.append(
                ToolResultBlockParam(
                    type="tool_result", tool_use_id=f"toolu_{cid}", content=answer, is_error=bad
                )
            )
        message = Message(
            id=f"msg_{n}", type="message", role="assistant", model="claude-test",
            content=blocks, stop_reason="tool_use" if calls else "end_turn",
            stop_sequence=None, usage=Usage(input_tokens=1, output_tokens=1),
        )  # fmt: skip
        messages.append({"role": "assistant", "content": message.model_dump()["content"]})
        if results:
            messages.append({"role": "user", "content": list(results)})
    folder.mkdir(parents=True, exist_ok=True)
    out = {"messages": folder / "messages.json"}
    out["messages"].write_text(json.dumps({"model": "claude-test", "messages": messages}, indent=1))
    return out
