"""The rules every framework importer keeps (issue 25), each on the smallest file that
shows it: ids that repeat pair by position, many traces are many runs, a retried call is
one entry per span, a stream of JSON values is read like a list, and a bad field is an
error naming it. The formats on real library output: ``test_frameworks.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import detect_format, list_runs, open_cassette
from hypothesis import given
from hypothesis import strategies as st


def write(tmp_path: Path, doc: Any, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def call(call_id: str, city: str) -> dict[str, Any]:
    args = json.dumps({"city": city})
    return {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": args}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def responses(c: Any) -> list[Any]:
    return [c.entry_view(i).response for i in range(len(c))]


def test_responses_items_answered_out_of_order_pair_by_call_id(tmp_path: Path) -> None:
    items = [
        {"role": "user", "content": "weather?"},
        call("c1", "Porto"),
        call("c2", "Lisbon"),
        output("c2", "Lisbon 25"),
        output("c1", "Porto 22"),
    ]
    c = open_cassette(write(tmp_path, items))
    assert c.metadata["pairing"] == "id"
    assert responses(c) == [{"text": "Porto 22"}, {"text": "Lisbon 25"}]


def test_responses_items_with_a_repeated_id_pair_by_position(tmp_path: Path) -> None:
    items = [call("c1", "Porto"), output("c1", "Porto 22"), call("c1", "Lisbon"), output("c1", "x")]
    c = open_cassette(write(tmp_path, items))
    assert c.metadata["pairing"] == "position"
    assert responses(c) == [{"text": "Porto 22"}, {"text": "x"}]


def test_responses_items_as_json_lines(tmp_path: Path) -> None:
    """The first line has a role, like a chat message: still read as Responses items."""
    items = [{"role": "user", "content": "weather?"}, call("c1", "Porto"), output("c1", "22")]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert detect_format(path) == "openai-responses"
    assert responses(open_cassette(path)) == [{"text": "22"}]


def test_anthropic_error_result_and_bad_block_named(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "book"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "book", "input": {"c": 1}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": True}
            ],
        },
    ]
    c = open_cassette(write(tmp_path, {"messages": messages}))
    assert c.entry_view(0).error == {"type": "ToolError", "message": "no"}
    messages[1]["content"][0]["name"] = ""
    with pytest.raises(CassetteFormatError) as bad:
        open_cassette(write(tmp_path, {"messages": messages}, "bad.json"))
    assert bad.value.field == "messages[1].content[0].name"


def sdk_span(trace: str, span: str, start: str, attrs: dict[str, Any], error: bool = False) -> Any:
    return {
        "name": f"{attrs['gen_ai.operation.name']} x",
        "context": {"trace_id": trace, "span_id": span},
        "parent_id": None,
        "start_time": start,
        "end_time": start,
        "status": {"status_code": "ERROR" if error else "UNSET"},
        "attributes": attrs,
        "events": [],
    }


def tool_attrs(call_id: str, args: str, result: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "fetch",
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": args,
        "gen_ai.tool.call.result": result,
    }


def test_otel_retried_call_is_one_entry_per_span_and_traces_are_runs(tmp_path: Path) -> None:
    spans = [
        sdk_span("t1", "s2", "2026-01-01T00:00:02Z", tool_attrs("a", '{"u": 1}', "ok")),
        sdk_span("t1", "s1", "2026-01-01T00:00:01Z", tool_attrs("a", '{"u": 1}', "503"), True),
        sdk_span("t2", "s3", "2026-01-01T00:00:03Z", tool_attrs("b", '{"u": 2}', "ok")),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    runs = list_runs(path)
    assert [(r.task, r.calls) for r in runs] == [("t1", 2), ("t2", 1)]
    first = open_cassette(f"{path}#task=t1")
    assert [first.entry_view(i).extra["span_id"] for i in range(2)] == ["s1", "s2"]
    assert first.entry_view(0).error == {"type": "Error", "message": "the span's status is ERROR"}
    assert first.entry_view(1).response == "ok"  # a str return, as CassetteCapability records it
    assert first.metadata["pairing"] == "span"


def test_pydantic_ai_invalid_json_wrapper_is_malformed(tmp_path: Path) -> None:
    wrapped = json.dumps({"INVALID_JSON": '{"u": '})
    path = write(tmp_path, [sdk_span("t", "s", "1", tool_attrs("a", wrapped, "retry"), True)])
    entry = open_cassette(path).entry_view(0)
    assert entry.args == '{"u": '
    assert "not valid JSON" in entry.extra["arguments_error"]


def test_agents_trace_in_batches_and_a_span_without_name_named(tmp_path: Path) -> None:
    fn = {"type": "function", "name": "f", "input": '{"a": 1}', "output": "1"}
    span = {"object": "trace.span", "id": "s1", "trace_id": "tr", "parent_id": None,
            "started_at": "1", "span_data": fn, "error": None}  # fmt: skip
    batches = [{"data": [{"object": "trace", "id": "tr"}]}, {"data": [span]}]
    c = open_cassette(write(tmp_path, batches))
    assert (c.tool(0), c.entry_view(0).args, c.entry_view(0).response) == (
        "f",
        {"a": 1},
        "1",  # the text the model read, as cassette_agent records a str output
    )
    fn["name"] = None
    with pytest.raises(CassetteFormatError) as bad:
        open_cassette(write(tmp_path, batches, "bad.json"))
    assert bad.value.field == "span s1.span_data.name"


def test_smolagents_step_whose_observations_cannot_be_split(tmp_path: Path) -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": {"i": i}}}
        for i in (1, 2)
    ]
    steps = [
        {"task": "go"},
        {"step_number": 1, "tool_calls": calls, "observations": "one line only",
         "model_output": "", "error": None},
    ]  # fmt: skip
    c = open_cassette(write(tmp_path, steps))
    assert responses(c) == [{"text": "one line only"}] * 2
    assert all(c.entry_view(i).extra["observations_shared"] for i in range(2))


def test_langchain_tool_error_status_is_an_error(tmp_path: Path) -> None:
    messages = [
        {
            "type": "ai",
            "data": {"content": "", "tool_calls": [{"name": "f", "args": {}, "id": "x"}]},
        },
        {"type": "tool", "data": {"content": "boom", "tool_call_id": "x", "status": "error"}},
    ]
    entry = open_cassette(write(tmp_path, messages)).entry_view(0)
    assert entry.error == {"type": "ToolError", "message": "boom"}


@given(st.permutations(range(5)), st.integers(min_value=1, max_value=5))
def test_unique_ids_pair_each_result_with_its_call_in_any_order(
    order: list[int], calls: int
) -> None:
    """Parallel calls answered in any order: each call gets its own answer, in call order."""
    from cassette_tui.core.importers._openai_chat import entries_from_messages

    ids = [f"call_{i}" for i in range(calls)]
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": i,
                    "type": "function",
                    "function": {"name": "f", "arguments": f'{{"n": {n}}}'},
                }
                for n, i in enumerate(ids)
            ],
        }
    ]
    for n in (k for k in order if k < calls):
        messages.append({"role": "tool", "tool_call_id": ids[n], "content": f'{{"answer": {n}}}'})
    entries = entries_from_messages(messages, path=None)
    assert [e.args["n"] for e in entries] == list(range(calls))
    assert [e.response["answer"] for e in entries] == list(range(calls))


def test_smolagents_run_that_only_answered_imports_as_no_call(tmp_path: Path) -> None:
    """A final_answer call is the outcome, not an entry: 0 entries, and no error."""
    answer = {"id": "c1", "type": "function",
              "function": {"name": "final_answer", "arguments": {"answer": "42"}}}  # fmt: skip
    steps = [{"task": "go"}, {"step_number": 1, "tool_calls": [answer], "observations": "42"}]
    c = open_cassette(write(tmp_path, steps))
    assert len(c) == 0 and c.metadata["run_outcome"]["final_answer"] == "42"
