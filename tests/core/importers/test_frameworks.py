"""The importers of issue 25 on real output of the real libraries (tests/support/frameworks.py
runs each offline on its own test model): each file is detected, its calls become
entries with their own results, the model's words and the run's outcome come along, a
malformed call is kept with a finding, and the failing run parts from the passing one at
that call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import detect_format, open_cassette
from cassette_tui.core.scan.lint import lint
from support import frameworks
from support.frameworks import ANSWER, MALFORMED, TASK, _script

#: (run function, its file, the format detected, what the file keeps of the words)
CASES: dict[str, tuple[str, str, str, set[str]]] = {
    "pydantic-ai messages": ("pydantic_ai_run", "messages", "pydantic-ai", {"final", "said"}),
    "otel span lines": ("pydantic_ai_run", "spans", "otel", {"final", "said"}),
    "otel console": ("pydantic_ai_run", "console", "otel", {"final", "said"}),
    "otlp json": ("pydantic_ai_run", "otlp", "otel", {"final", "said"}),
    "responses items": ("openai_agents_run", "items", "openai-responses", {"final"}),
    "agents trace": ("openai_agents_run", "trace", "openai-agents", set()),
    "langchain messages": ("langgraph_run", "messages", "langchain", {"final", "said"}),
    "langgraph checkpoint": ("langgraph_run", "checkpoint", "langchain", {"final", "said"}),
    "smolagents steps": ("smolagents_run", "steps", "smolagents", {"final", "said"}),
    "anthropic messages": ("anthropic_run", "messages", "anthropic", {"final", "said"}),
}

_made: dict[tuple[str, bool], dict[str, Path]] = {}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("frameworks")


def made(folder: Path, run: str, failing: bool) -> dict[str, Path]:
    """The files of one framework run, made once per module."""
    key = (run, failing)
    if key not in _made:
        _made[key] = getattr(frameworks, run)(folder / run / str(failing), failing)
    return _made[key]


def opened(folder: Path, case: str, failing: bool) -> tuple[Path, Cassette]:
    run, kind, _, _ = CASES[case]
    path = made(folder, run, failing)[kind]
    return path, open_cassette(path)


def answer(case: str, response: Any) -> Any:
    """The tool's answer in an imported ``response``, which is what the framework's adapter
    records: LangChain's tool message (its JSON ``content`` the answer), the Agents SDK
    trace's output text (these tools return JSON text); the value itself elsewhere."""
    if case.startswith("lang"):
        assert response["type"] == "tool" and response["status"] == "success"
        assert "tool_call_id" not in response and "id" not in response  # given at replay
        return json.loads(response["content"])
    if case == "agents trace":
        assert isinstance(response, str)
        return json.loads(response)
    return response


@pytest.mark.parametrize("case", CASES)
def test_detected_and_each_parallel_call_keeps_its_own_result(folder: Path, case: str) -> None:
    path, cassette = opened(folder, case, failing=False)
    assert detect_format(path) == CASES[case][2]
    entries = [cassette.entry_view(i) for i in range(len(cassette))]
    assert [(e.tool, e.args) for e in entries] == [
        ("get_weather", {"city": "Porto"}),
        ("get_weather", {"city": "Lisbon"}),
        ("book", {"city": "Porto"}),
    ]
    # by id (or in one span, one step): Lisbon's call has Lisbon's answer
    assert [answer(case, e.response) for e in entries[:2]] == [
        {"city": "Porto", "temp_c": 22},
        {"city": "Lisbon", "temp_c": 25},
    ]
    assert answer(case, entries[2].response) == {"booked": "Porto"}
    assert cassette.metadata["pairing"] in ("id", "span", "step")
    assert lint(cassette) == []


@pytest.mark.parametrize("case", CASES)
def test_words_and_outcome_where_the_format_has_them(folder: Path, case: str) -> None:
    _, cassette = opened(folder, case, failing=False)
    keeps = CASES[case][3]
    outcome = cassette.metadata["run_outcome"]
    assert outcome["final_answer"] == (ANSWER if "final" in keeps else None)
    last = cassette.entry_view(len(cassette) - 1)
    assert last.extra["run_outcome"] == outcome
    first: dict[str, Any] = cassette.entry_view(0).extra.get("context", {})
    if "said" in keeps:
        assert first["answered"] == {"role": "user", "text": TASK}
        assert first.get("assistant", "").startswith("Let me look")
        assert last.extra["context"]["answered"] == {"role": "tool", "seqs": [1, 2]}
    elif case == "agents trace":  # function spans grouped by the SDK's turn spans
        assert [cassette.entry_view(i).extra["turn"] for i in range(3)] == [1, 1, 2]


@pytest.mark.parametrize("case", [c for c in CASES if c != "anthropic messages"])
def test_malformed_arguments_are_an_entry_with_a_finding(folder: Path, case: str) -> None:
    _, cassette = opened(folder, case, failing=True)
    malformed = cassette.entry_view(2)
    assert (malformed.seq, malformed.tool, malformed.args) == (3, "book", MALFORMED)
    assert "not valid JSON" in malformed.extra["arguments_error"]
    found = [f for f in lint(cassette) if f.kind == "malformed_args"]
    assert [f.seq for f in found] == [3]
    assert "book" in found[0].message and "not valid JSON" in found[0].message
    if case.startswith("lang"):  # LangGraph's agent runs no invalid call: the run ends
        assert len(cassette) == 3 and malformed.extra["unanswered"] is True
    else:  # the framework answered it (an error, or the text as an argument), then retried
        assert len(cassette) == 4
        assert (cassette.tool(3), cassette.entry_view(3).args) == ("book", {"city": "Porto"})
    if CASES[case][2] in ("otel", "openai-agents"):  # the retry is its own span
        assert malformed.extra["span_id"] != cassette.entry_view(3).extra["span_id"]


@pytest.mark.parametrize("case", CASES)
def test_diff_of_failing_and_passing_names_the_first_divergence(folder: Path, case: str) -> None:
    _, failing = opened(folder, case, failing=True)
    _, passing = opened(folder, case, failing=False)
    result = diff_cassettes(failing, passing)
    assert result.first_divergence is not None
    row = result.rows[result.first_divergence]
    assert (row.a_seq, row.tool) == (3, "book")
    first = result.findings[0]
    assert first.kind == "first_divergence"
    if case == "anthropic messages":  # the API parses inputs: a refused call, then a retry
        assert "A seq 3 book" in first.message and row.error_a
        return
    assert first.evidence["malformed_args"] == [
        {"side": "A", "seq": 3, "error": failing.entry_view(2).extra["arguments_error"]}
    ]
    assert "A seq 3's arguments could not be parsed" in first.message
    assert "model's output" in (first.action or "")
    # the model's doing, not a transient failure of the environment
    assert not [f for f in result.findings if f.kind == "error_response" and 3 in f.seqs["a"]]


def test_pydantic_ai_tool_asking_for_a_retry_is_an_error_then_the_retry(tmp_path: Path) -> None:
    """A tool that raises ``ModelRetry``: its call is an error entry, the retried call the
    next entry (each attempt its own entry)."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    turns = iter([{"city": "Oporto"}, {"city": "Porto"}, None])

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        args = next(turns)
        return ModelResponse(parts=[ToolCallPart("book", args) if args else TextPart(ANSWER)])

    agent = Agent(FunctionModel(model))

    @agent.tool_plain(retries=2)
    def book(city: str) -> str:
        if city != "Porto":
            raise ModelRetry(f"unknown city {city}")
        return "booked"

    path = tmp_path / "retry.json"
    path.write_bytes(agent.run_sync(TASK).all_messages_json())
    c = open_cassette(path)
    first, second = c.entry_view(0), c.entry_view(1)
    assert (first.args, first.error["type"], first.error["message"]) == (
        {"city": "Oporto"},
        "ModelRetry",
        "unknown city Oporto",
    )
    # the str the tool returned, as the history keeps it (and the adapter records it)
    assert (second.args, second.response) == ({"city": "Porto"}, "booked")
    assert second.extra["context"]["answered"] == {"role": "tool", "seqs": [1]}


def test_pydantic_ai_history_imports_as_the_adapter_recorded_the_run(tmp_path: Path) -> None:
    """``CassetteCapability``'s recording of a run and the run's imported history agree
    call for call, a ``ModelRetry`` included (it was ``model_retry`` with the retry's
    bookkeeping against the recorded ``ModelRetry``: a false stale response in ``diff``)."""
    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    turns = iter([{"city": "Oporto"}, {"city": "Porto"}, None])

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        args = next(turns)
        return ModelResponse(parts=[ToolCallPart("book", args) if args else TextPart(ANSWER)])

    def book(city: str) -> dict[str, Any]:
        if city != "Porto":
            raise ModelRetry(f"unknown city {city}")
        return {"status": "booked", "city": city}

    capability = CassetteCapability(mode="record", path=tmp_path / "recorded.jsonl")
    agent = Agent(FunctionModel(model), tools=[book], capabilities=[capability])
    history = tmp_path / "history.json"
    history.write_bytes(agent.run_sync(TASK).all_messages_json())
    capability.cassette.close()
    recorded, imported = open_cassette(tmp_path / "recorded.jsonl"), open_cassette(history)
    result = diff_cassettes(recorded, imported)
    assert [r.status.value for r in result.rows] == ["same", "same"]
    assert imported.entry_view(0).error == recorded.entry_view(0).error


def test_langgraph_tool_that_raises_is_an_error_entry(tmp_path: Path) -> None:
    """LangGraph's ToolNode (``handle_tool_errors=True``) turns a tool's exception into a
    ``status: "error"`` tool message."""
    import warnings

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
    from langchain_core.tools import tool

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import ToolNode, create_react_agent

    @tool
    def book(city: str) -> str:
        """Book a city."""
        raise ValueError(f"no rooms in {city}")

    class FakeWithTools(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    replies = iter([
        AIMessage(content="", tool_calls=[{"name": "book", "args": {"city": "Porto"}, "id": "b1"}]),
        AIMessage(content=ANSWER),
    ])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tools = ToolNode([book], handle_tool_errors=True)
        agent = create_react_agent(FakeWithTools(messages=replies), tools)
    state = agent.invoke({"messages": [HumanMessage(TASK)]})
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages_to_dict(state["messages"])))
    entry = open_cassette(path).entry_view(0)
    assert entry.error is not None and entry.error["type"] == "ToolError"
    assert "no rooms in Porto" in entry.error["message"]


def test_otel_chat_spans_with_calls_but_no_tool_spans_are_refused(
    folder: Path, tmp_path: Path
) -> None:
    """The real spans less their execute_tool spans (an exporter that dropped them): the
    model's calls are seen in the chat spans, so the import is an error, not 0 entries."""
    spans = made(folder, "pydantic_ai_run", False)["spans"].read_text().splitlines()
    kept = [s for s in spans if '"execute_tool"' not in s]
    assert len(kept) < len(spans)
    path = tmp_path / "chat-only.jsonl"
    path.write_text("\n".join(kept) + "\n")
    with pytest.raises(CassetteFormatError) as refused:
        open_cassette(path)
    assert "the model called 'get_weather'" in refused.value.reason
    assert "no execute_tool span" in refused.value.reason


def readme_block(marker: str) -> str:
    """The README's one ``python`` block that holds ``marker``, as it stands."""
    from support.paths import ROOT

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```")[0] for b in text.split("```python\n")[1:]]
    (block,) = [b for b in blocks if marker in b]
    return block


def _run_readme_trace_block(agent: Any, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Agents SDK trace block run as written, in ``folder``, with ``agent``
    the only name it is given (tracing is process-wide: switched on for it, off after)."""
    from agents import set_tracing_disabled
    from agents.tracing import set_trace_processors

    monkeypatch.chdir(folder)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the SDK's exporter: offline
    set_tracing_disabled(False)
    try:
        code = compile(readme_block("TracingProcessor"), "README.md", "exec")
        exec(code, {"agent": agent, "__name__": "readme"})
    finally:
        set_trace_processors([])
        set_tracing_disabled(True)


def test_the_readme_agents_sdk_trace_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block named an undefined ``exported``: it is complete now, and what it writes
    imports (``trace.json`` as ``openai-agents``, ``items.json`` as ``openai-responses``)."""
    _run_readme_trace_block(frameworks.openai_agents_agent(False), tmp_path, monkeypatch)
    for name, fmt in (("trace.json", "openai-agents"), ("items.json", "openai-responses")):
        assert detect_format(tmp_path / name) == fmt
        c = open_cassette(tmp_path / name)
        assert [(c.tool(i), c.entry_view(i).args) for i in range(len(c))] == [
            ("get_weather", {"city": "Porto"}),
            ("get_weather", {"city": "Lisbon"}),
            ("book", {"city": "Porto"}),
        ]


def _same_calls(recorded: Path, imported: Path) -> None:
    """``diff`` of the adapter's recording against the framework's own file of the same
    run: every row the same, no finding."""
    result = diff_cassettes(open_cassette(recorded), open_cassette(imported))
    drift = [(r.tool, r.status.value, r.a_seq) for r in result.rows if r.status.value != "same"]
    assert drift == [] and len(result.rows) == 3, [f.message for f in result.findings]


@pytest.mark.parametrize("typed", [False, True], ids=["str output", "dict output"])
def test_agents_sdk_recording_and_its_trace_compare_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: bool
) -> None:
    """``cassette_agent``'s recording and the README block's trace of the same run: the
    trace's output text was ``{"text": ...}`` or parsed JSON against the adapter's string
    (or, for a ``-> dict`` tool, the value): three false response drifts."""
    from cassette_tui.core.adapters.openai_agents import cassette_agent

    recorded = tmp_path / "recorded.jsonl"
    agent = cassette_agent(
        frameworks.openai_agents_agent(False, typed=typed), mode="record", path=recorded
    )
    _run_readme_trace_block(agent, tmp_path, monkeypatch)
    _same_calls(recorded, tmp_path / "trace.json")
    if typed:  # the model read str() of the dict; the import holds the dict, as recorded
        c = open_cassette(tmp_path / "trace.json")
        assert c.entry_view(0).response == {"city": "Porto", "temp_c": 22}


@pytest.mark.parametrize("kind", ["messages", "checkpoint"])
def test_langchain_recording_and_its_messages_compare_clean(tmp_path: Path, kind: str) -> None:
    """``CassetteMiddleware``'s recording (the tool message) and the run's own messages or
    checkpoint (the content parsed, without the message): three false response drifts."""
    from cassette_tui.core.adapters.langchain import CassetteMiddleware

    recorded = tmp_path / "recorded.jsonl"
    middleware = CassetteMiddleware(mode="record", path=recorded)
    try:
        files = frameworks.langgraph_run(tmp_path / "run", False, cassette=middleware)
    finally:
        middleware.cassette.close()
    _same_calls(recorded, files[kind])


def test_pydantic_ai_recording_and_its_spans_compare_clean(tmp_path: Path) -> None:
    """``CassetteCapability``'s recording and the same run's OpenTelemetry spans: a tool
    that returns a ``str`` was ``{"text": ...}`` in the import against the adapter's
    string, a false response drift."""
    from cassette_tui.core.adapters.pydantic_ai import CassetteCapability
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    turns = iter(_script(failing=False))

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        calls = next(turns)
        if not calls:
            return ModelResponse(parts=[TextPart(ANSWER)])
        return ModelResponse(parts=[ToolCallPart(t, a, tool_call_id=c) for t, a, c in calls])

    def get_weather(city: str) -> dict[str, Any]:
        return {"city": city, "temp_c": 22.5}

    def book(city: str) -> str:  # text, as the model reads it
        return f"booked {city}"

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    capability = CassetteCapability(mode="record", path=tmp_path / "recorded.jsonl")
    agent = Agent(FunctionModel(model), tools=[get_weather, book], capabilities=[capability])
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
    agent.run_sync(TASK)
    capability.cassette.close()
    spans = tmp_path / "spans.jsonl"
    spans.write_text("".join(s.to_json(indent=None) + "\n" for s in exporter.get_finished_spans()))
    _same_calls(tmp_path / "recorded.jsonl", spans)
    assert open_cassette(spans).entry_view(2).response == "booked Porto"
