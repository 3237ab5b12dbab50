"""OpenAI chat messages (and inspect_ai's variant) as cassettes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers import RunSelectionError, json_result
from cassette_tui.core.importers._openai_chat import (
    count_calls,
    entries_from_messages,
    pairing_of,
)
from cassette_tui.core.importers.sources import list_runs, open_cassette


def call(name: str, arguments, call_id: str = "call_1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool(content, call_id: str = "call_1", **more) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **more}


def assistant(*calls: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def test_pairs_by_position_when_ids_are_reused() -> None:
    messages = [
        {"role": "user", "content": "book it"},
        assistant(call("search", '{"q": "a"}', "call_X")),
        tool('{"hits": 1}', "call_X"),
        assistant(call("calculate", '{"expression": "1+1"}', "call_X")),
        tool("2.0", "call_X"),
    ]
    entries = entries_from_messages(messages, path=None)
    assert [(e.seq, e.tool, e.args, e.response) for e in entries] == [
        (1, "search", {"q": "a"}, {"hits": 1}),
        (2, "calculate", {"expression": "1+1"}, {"text": "2.0"}),
    ]
    assert [e.extra["tool_call_id"] for e in entries] == ["call_X", "call_X"]
    assert [e.extra["message_index"] for e in entries] == [1, 3]
    assert count_calls(messages) == 2


def test_parallel_calls_answered_out_of_order_pair_by_unique_id() -> None:
    """Issue 25: ids unique in the run, so each parallel call keeps its own answer."""
    messages = [
        assistant(call("get", '{"id": 1}', "a"), call("get", {"id": 2}, "b")),
        tool("two", "b"),  # answered in the other order
        tool("one", "a"),
    ]
    assert pairing_of(messages) == "id"
    entries = entries_from_messages(messages, path=None)
    assert [(e.seq, e.args, e.response) for e in entries] == [
        (1, {"id": 1}, {"text": "one"}),
        (2, {"id": 2}, {"text": "two"}),
    ]
    assert all("answer_tool_call_id" not in e.extra for e in entries)


def test_by_id_a_result_before_its_call_is_a_result_alone() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "a", "name": "get", "content": "early"},
        assistant(call("get", '{"id": 1}', "a")),
    ]
    assert pairing_of(messages) == "id"
    entries = entries_from_messages(messages, path=None)
    assert [
        (e.seq, e.args, e.extra.get("unpaired_result"), e.extra.get("unanswered")) for e in entries
    ] == [
        (1, None, True, None),
        (2, {"id": 1}, None, True),
    ]


def test_parallel_calls_with_a_repeated_id_pair_by_position() -> None:
    messages = [
        assistant(call("get", '{"id": 1}', "a"), call("get", {"id": 2}, "a")),
        tool("one", "a"),
        tool("two", "a"),
        assistant(call("get", '{"id": 3}', "c")),
        tool("three", "b"),  # names no call: position decides for the whole run
    ]
    assert pairing_of(messages) == "position"
    entries = entries_from_messages(messages, path=None)
    assert [(e.args, e.response) for e in entries] == [
        ({"id": 1}, {"text": "one"}),
        ({"id": 2}, {"text": "two"}),
        ({"id": 3}, {"text": "three"}),
    ]
    assert entries[2].extra["answer_tool_call_id"] == "b"


def test_results() -> None:
    assert json_result('{"a": 1}') == {"a": 1}
    assert json_result("  [1, 2]") == [1, 2]
    assert json_result("329.0") == {"text": "329.0"}
    assert json_result("") == {"text": ""}
    assert json_result("Error: no such flight") == {"text": "Error: no such flight"}
    assert json_result("{not json") == {"text": "{not json"}
    assert json_result([{"type": "text", "text": '{"a"'}, {"type": "text", "text": ": 2}"}]) == {
        "a": 2
    }
    assert json_result(None) == {"content": None}


def test_arguments_forms_and_loss_free_oddities() -> None:
    messages = [
        assistant(call("a", ""), call("b", None), call("c", "{broken"), call("d", {"k": [1]})),
        tool("1"),
        tool("2"),
        tool("3"),
    ]
    entries = entries_from_messages(messages, path=None)
    assert [e.args for e in entries] == [{}, {}, "{broken", {"k": [1]}]
    assert entries[0].extra["arguments_text"] == ""
    assert "not valid JSON" in entries[2].extra["arguments_error"]
    # the fourth call has no answer: an error entry, never a made-up response
    assert entries[3].is_error and entries[3].error["type"] == "NoToolResult"
    assert entries[3].extra["unanswered"] is True


def test_unpaired_result_and_tool_error() -> None:
    messages = [
        tool("...", "bash_1", function="bash", error={"type": "timeout", "message": "120 s"}),
    ]
    (entry,) = entries_from_messages(messages, path=None)
    assert entry.tool == "bash" and entry.args is None
    assert entry.error == {"type": "timeout", "message": "120 s"}
    assert entry.extra["unpaired_result"] is True and entry.extra["content"] == "..."


def test_legacy_function_call() -> None:
    messages = [
        {"role": "assistant", "function_call": {"name": "f", "arguments": '{"x": 1}'}},
        {"role": "function", "name": "f", "content": '{"y": 2}'},
    ]
    (entry,) = entries_from_messages(messages, path=None)
    assert (entry.tool, entry.args, entry.response) == ("f", {"x": 1}, {"y": 2})


def test_files_list_object_and_jsonl(tmp_path: Path) -> None:
    messages = [assistant(call("search", '{"q": "x"}')), tool('{"ok": true}')]
    as_list = tmp_path / "log.json"
    as_list.write_text(json.dumps(messages))
    as_obj = tmp_path / "obj.json"
    as_obj.write_text(json.dumps({"model": "gpt-4o", "messages": messages}))
    as_lines = tmp_path / "log.jsonl"
    as_lines.write_text("\n".join(json.dumps(m) for m in messages) + "\n")
    for path in (as_list, as_obj, as_lines):
        c = open_cassette(path)
        assert c.metadata["format"] == "openai", path
        assert [(e.tool, e.args, e.response) for e in c] == [("search", {"q": "x"}, {"ok": True})]
    assert open_cassette(as_obj).metadata["log"] == {"model": "gpt-4o"}
    runs = list_runs(as_list)
    assert [(r.task, r.trial, r.calls) for r in runs] == [(None, None, 1)]
    with pytest.raises(RunSelectionError, match="single run"):
        open_cassette(as_list, task=1, trial=0)


def test_bad_message_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(
        json.dumps([{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}])
    )
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path)
    assert info.value.field == "[0].tool_calls[0].function.name"
    assert info.value.path == str(path)


def test_inspect_ai_logs(real: Path) -> None:
    base = real / "inspect_ai/tests"
    errors = base / "log/test_eval_log/log_tool_call_error.json"
    browser = base / "analysis/test_logs/2025-05-12T20-27-36-04-00_browser.json"
    streaming = base / "log/test_eval_log/log_streaming.eval"
    if not (errors.is_file() and browser.is_file() and streaming.is_file()):
        pytest.skip("inspect_ai logs absent")
    c = open_cassette(errors)  # one sample: no selector needed
    assert c.metadata["format"] == "inspect" and len(c) == 11
    assert all(e.is_error and e.tool == "bash" for e in c)
    assert c[-1].error == {
        "type": "output_limit",
        "message": "The tool output limit of 10 MiB was exceeded.",
    }
    b = open_cassette(browser)
    assert [e.tool for e in b][:2] == ["web_browser_go", "web_browser_click"]
    assert b[0].args == {"url": "https://www.aisi.gov.uk/"}  # arguments already an object
    assert isinstance(b[0].response["text"], str)
    runs = list_runs(streaming)
    assert [(r.task, r.trial, r.reward) for r in runs] == [
        ("1", 1, 0.0),
        ("1", 2, 1.0),
        ("2", 1, 1.0),
        ("2", 2, 1.0),
    ]
    s = open_cassette(f"{streaming}#task=1,trial=2")
    assert s.metadata["sample_id"] == 1 and s.metadata["epoch"] == 2 and len(s) == 0
