"""VCR.py / pytest-recording YAML cassettes as cassettes: hand-made inputs in tmp_path,
every real cassette under ../shared/real/vcr (skipped where absent), and the request
headers that change the answer being part of an imported call's key (a shared key that
differs in one is named, not a retry storm)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from cassette_tui.core import Replayer
from cassette_tui.core.format.cassette import load, save
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers._vcr import is_binary_envelope, parse_sse
from cassette_tui.core.importers.sources import detect_format, open_cassette
from cassette_tui.core.scan.lint import lint
from support.factory import entry, write_cassette

SSE = (
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
    '{"name":"get_temp","arguments":""}}]}}]}\n\n'
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
    '{"arguments":"{\\"city\\""}}]}}]}\n\n'
    "event: done\ndata: [DONE]\n\n"
)

HAND_MADE = f"""\
interactions:
- request:
    body: '{{"model": "gpt-4o", "messages": [{{"role": "user", "content": "hi"}}]}}'
    headers:
      Content-Type:
      - !!binary |
        YXBwbGljYXRpb24vanNvbg==
      authorization:
      - AUTHORIZATION-XXX
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: {json.dumps(SSE)}
    headers:
      Content-Type:
      - text/event-stream
    status:
      code: 200
      message: OK
- request:
    body: null
    headers: {{}}
    method: GET
    uri: https://example.com/logo.png
  response:
    body:
      string: !!binary |
        iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==
    headers: {{}}
    status:
      code: 200
      message: OK
- request:
    method: POST
    uri: https://api.example.com/v1/things
    parsed_body:
      name: x
  response:
    parsed_body:
      error:
        message: rate limited
    status:
      code: 429
      message: Too Many Requests
    url: https://api.example.com/v1/things
version: 1
"""


def _write(tmp_path: Path, text: str, name: str = "cassette.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_hand_made_cassette(tmp_path: Path) -> None:
    path = _write(tmp_path, HAND_MADE)
    assert detect_format(path) == "vcr"
    c = open_cassette(path)
    assert len(c) == 3 and [e.tool for e in c] == ["http"] * 3
    starts = [n for n, text in enumerate(HAND_MADE.splitlines(), 1) if text.startswith("- ")]
    assert [e.line for e in c] == starts
    first = c[0]
    assert first.args == {
        "method": "POST",
        "uri": "https://api.openai.com/v1/chat/completions",
        "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
    }
    # request headers stay out of the key, kept as an extra; !!binary header -> envelope
    ctype = first.extra["request_headers"]["Content-Type"][0]
    assert is_binary_envelope(ctype) and base64.b64decode(ctype["data"]) == b"application/json"
    sse = first.response["body"]
    assert sse["_sse"] is True and sse["text"] == SSE
    assert [e.get("event") for e in sse["events"]] == [None, None, "done"]
    assert sse["events"][1]["data"]["choices"][0]["delta"]["tool_calls"][0]["function"] == {
        "arguments": '{"city"'
    }
    assert sse["events"][2]["data"] == "[DONE]"
    assert first.response["status"] == 200 and first.response["reason"] == "OK"

    png = c[1].response["body"]
    raw = yaml.safe_load(HAND_MADE)["interactions"][1]["response"]["body"]["string"]
    assert is_binary_envelope(png) and base64.b64decode(png["data"]) == raw
    assert c[1].args == {"method": "GET", "uri": "https://example.com/logo.png", "body": None}

    limited = c[2]
    assert limited.args["body"] == {"name": "x"}
    assert limited.response == {
        "status": 429,
        "reason": "Too Many Requests",
        "headers": {},
        "body": {"error": {"message": "rate limited"}},
    }
    assert limited.extra["vcr_extra"] == {"response": {"url": "https://api.example.com/v1/things"}}
    assert c.metadata["vcr"] == {"version": 1}


def test_round_trip_through_a_cassette_file(tmp_path: Path) -> None:
    c = open_cassette(_write(tmp_path, HAND_MADE))
    out = save(c, tmp_path / "out.jsonl")
    back = load(out)
    assert [(e.args, e.response, e.extra) for e in back] == [
        (e.args, e.response, e.extra) for e in c
    ]
    assert not [f for f in lint(back) if f.kind == "binary_as_text"]


def test_sse_parser() -> None:
    events = parse_sse(": comment\r\nevent: a\r\nid: 7\r\ndata: x\r\ndata: y\r\n\r\ndata: {}\n")
    assert events == [{"event": "a", "id": "7", "data": "x\ny"}, {"data": {}}]


@pytest.mark.parametrize(
    ("text", "line", "field", "reason"),
    [
        (
            "interactions:\n- request: {uri: u}\n  response: {status: {code: 200}}\n",
            2,
            "interactions[0].request.method",
            "HTTP method",
        ),
        (
            "interactions:\n- request: {method: GET, uri: u}\n  response: {status: {code: x}}\n",
            2,
            "interactions[0].response.status",
            "status code",
        ),
        (
            "interactions:\n- request: {method: GET, uri: u}\n",
            2,
            "interactions[0].response",
            "missing",
        ),
        ("interactions:\n- request: [unclosed\n", 3, None, "not valid YAML"),
        ("interactions:\n- !!python/object:os.system {}\n", 2, None, "not valid YAML"),
    ],
)
def test_bad_input_names_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None, reason: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(CassetteFormatError) as info:
        open_cassette(path, fmt="vcr")
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert reason in str(err)


def test_vcrpy_json_serializer(tmp_path: Path) -> None:
    doc = {
        "interactions": [
            {
                "request": {"method": "GET", "uri": "https://x", "body": None, "headers": {}},
                "response": {
                    "status": {"code": 500, "message": "boom"},
                    "headers": {},
                    "body": {"string": "oops"},
                },
            }
        ],
        "version": 1,
    }
    path = _write(tmp_path, json.dumps(doc), "c.json")
    c = open_cassette(path)
    assert c.metadata["format"] == "vcr"
    assert c[0].response["status"] == 500 and c[0].response["body"] == "oops"


# -- the real cassettes ------------------------------------------------------------------


def _real_yaml(real: Path) -> list[Path]:
    files = sorted((real / "vcr").rglob("*.yaml"))
    if not files:
        pytest.skip(f"no VCR cassettes under {real / 'vcr'}")
    return files


def test_every_real_cassette_imports(real: Path) -> None:
    files = _real_yaml(real)
    assert len(files) == 9
    for path in files:
        raw = yaml.load(path.read_text(), Loader=yaml.SafeLoader)  # independent count
        c = open_cassette(path)
        assert detect_format(path) == "vcr"
        assert len(c) == len(raw["interactions"]), path
        for got, item in zip(c, raw["interactions"], strict=True):
            assert got.args["method"] == item["request"]["method"]
            assert got.args["uri"] == item["request"]["uri"]
            assert got.response["status"] == item["response"]["status"]["code"]
        json.dumps([e.to_record("x") for e in c])  # all JSON, no bytes or dates left


def test_real_binary_body_round_trips(real: Path, tmp_path: Path) -> None:
    path = (
        real
        / "vcr/pydantic-ai/tests/models/cassettes/test_download_item"
        / "test_download_item_application_octet_stream.yaml"
    )
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    raw = yaml.safe_load(path.read_text())["interactions"][0]["response"]["body"]["string"]
    assert isinstance(raw, bytes) and len(raw) == 122
    body = open_cassette(path)[0].response["body"]
    assert is_binary_envelope(body) and base64.b64decode(body["data"]) == raw
    written = load(save(open_cassette(path), tmp_path / "bin.jsonl"))
    assert base64.b64decode(written[0].response["body"]["data"]) == raw


def test_real_crewai_binary_headers_and_sse(real: Path) -> None:
    base = real / "vcr/crewAI/lib/crewai/tests/cassettes"
    bedrock = (
        base
        / "agents/TestBedrockNativeToolCalling.test_bedrock_agent_kickoff_with_tools_mocked.yaml"
    )
    stream = (
        base / "llms/TestOpenAIToolCallStreaming.test_openai_streaming_emits_tool_call_events.yaml"
    )
    if not (bedrock.is_file() and stream.is_file()):
        pytest.skip("crewAI cassettes absent")
    c = open_cassette(bedrock)
    header = c[0].extra["request_headers"]["amz-sdk-request"][0]
    assert base64.b64decode(header["data"]) == b"attempt=1"
    assert c[0].args["body"]["toolConfig"]["tools"][0]["toolSpec"]["name"] == "calculator"
    s = open_cassette(stream)[0].response["body"]
    assert s["_sse"] is True
    fragments = [
        tc["function"].get("arguments", "")
        for ev in s["events"]
        if isinstance(ev["data"], dict)
        for ch in ev["data"].get("choices", [])
        for tc in ch.get("delta", {}).get("tool_calls") or []
    ]
    assert json.loads("".join(fragments)) == {"city": "San Francisco"}
    assert s["events"][-1]["data"] == "[DONE]"


def test_real_empty_tool_call_id_and_http_error(real: Path) -> None:
    base = real / "vcr/pydantic-ai/tests/models/cassettes"
    no_id = base / "test_openai/test_compatible_api_with_tool_calls_without_id.yaml"
    error = base / "test_openai_responses/test_openai_responses_model_http_error.yaml"
    if not (no_id.is_file() and error.is_file()):
        pytest.skip("pydantic-ai cassettes absent")
    c = open_cassette(no_id)
    call = c[0].response["body"]["choices"][0]["message"]["tool_calls"][0]
    assert call == {
        "function": {"arguments": "{}", "name": "get_current_time"},
        "id": "",
        "type": "function",
    }
    raw = yaml.safe_load(error.read_text())["interactions"][0]
    e = open_cassette(error)[0]
    assert e.response["status"] == 400 and e.response["reason"] == "Bad Request"
    assert e.response["body"] == raw["response"]["parsed_body"]
    assert e.response["headers"] == raw["response"]["headers"]
    assert e.args["body"] == raw["request"]["parsed_body"]
    assert not e.is_error  # an HTTP error is the server's response, kept as recorded


# -- answer-changing request headers in an imported HTTP call ---------------------------------
URI = "https://api.example.test/v1/report?month=2024-05"


def _vcr(tmp_path: Path, headers: list[dict[str, list[str]]], bodies: list[str]) -> Path:
    interactions = [
        {
            "request": {"body": None, "headers": h, "method": "GET", "uri": URI},
            "response": {
                "body": {"string": body},
                "headers": {"Content-Type": ["text/plain"]},
                "status": {"code": 200, "message": "OK"},
            },
        }
        for h, body in zip(headers, bodies, strict=True)
    ]
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


IDENTITY = [
    ("Accept", "application/json", "text/csv"),
    ("Range", "bytes=0-99", "bytes=100-199"),
    ("Accept-Language", "en", "fr"),
    ("X-Api-Version", "2023-01-01", "2024-06-01"),
    ("anthropic-version", "2023-06-01", "2024-10-22"),
]


@pytest.mark.parametrize(("header", "first", "second"), IDENTITY)
def test_answer_changing_header_is_part_of_the_imported_calls_key(
    tmp_path: Path, header: str, first: str, second: str
) -> None:
    agent = {"User-Agent": ["python-requests/2.31.0"]}
    path = _vcr(
        tmp_path,
        [{header: [first], **agent}, {header: [second], **agent}],
        ["first answer", "second answer"],
    )
    c = open_cassette(path)
    assert [e.args["headers"] for e in c] == [{header: [first]}, {header: [second]}]
    assert c.key(0) != c.key(1)
    assert not [f for f in lint(c) if f.kind in ("repeated_key", "header_variants")]
    # asked in the other order, each request gets its own answer, never the other's
    replay = Replayer(c)
    assert replay("http", c[1].args) == c[1].response
    assert replay("http", c[0].args) == c[0].response
    assert c[0].response != c[1].response


def test_a_header_that_does_not_change_the_answer_stays_out_of_the_key(tmp_path: Path) -> None:
    path = _vcr(
        tmp_path,
        [{"User-Agent": ["a/1"], "X-Trace": ["t1"]}, {"User-Agent": ["b/2"], "X-Trace": ["t2"]}],
        ["same", "same"],
    )
    c = open_cassette(path)
    assert "headers" not in c[0].args and c.key(0) == c.key(1)


@pytest.mark.parametrize(("header", "first", "second"), IDENTITY)
def test_a_shared_key_differing_in_such_a_header_is_named_not_a_retry_storm(
    tmp_path: Path, header: str, first: str, second: str
) -> None:
    """A cassette written before the header joined the key (the header only in
    ``request_headers``): check names the header and the by-position replay."""
    args = {"method": "GET", "uri": URI, "body": None}
    path = write_cassette(
        tmp_path / "old.jsonl",
        entry(1, "http", args, response={"body": "one"}, request_headers={header: [first]}),
        entry(2, "http", args, response={"body": "two"}, request_headers={header: [second]}),
    )
    (finding,) = lint(load(path))
    assert finding.kind == "header_variants"
    assert header in finding.message and "by position" in finding.message
    assert "retry storm" not in finding.message
