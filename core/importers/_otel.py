"""OpenTelemetry GenAI spans (``execute_tool``), as cassettes: one run per trace.

What pydantic-ai and Logfire (and other instrumented agents) emit under the GenAI
semantic conventions: a tool call is a span with ``gen_ai.operation.name =
"execute_tool"``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result`` (older pydantic-ai:
``tool_arguments`` / ``tool_response``); the model's turns are ``chat`` spans
(``gen_ai.output.messages``: its text and calls), the run an ``invoke_agent`` span
(``final_result``). Files read:

- **OTLP JSON**: ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`` (an
  ``ExportTraceServiceRequest``; attributes as ``[{"key", "value": {"stringValue": ...}}]``,
  times in ``startTimeUnixNano``), one document or one per line (the collector's file
  exporter).
- **the SDK's span JSON** (``ReadableSpan.to_json()``, what ``ConsoleSpanExporter``
  prints): ``{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time",
  "attributes": {...}, "status", "events"}``, as a JSON list, JSON Lines, or objects one
  after another.

Each ``execute_tool`` span is an entry, in start-time order: a retried call is one entry
per attempt (each attempt is its own span). ``args`` = the parsed arguments (text that is
not valid JSON, or pydantic-ai's ``{"INVALID_JSON": <text>}``, is kept as the text with
``arguments_error``); ``response`` = the result as ``CassetteCapability`` records it
(``_result``: JSON text of an object or array as that value, other text as the string;
a number, ``true`` or ``null`` a tool returned is text in the span and stays text, a
``str`` of JSON text becomes its value: ``diff`` against the recording shows both as a
type drift); a span with status
``ERROR`` is an ``error`` ``{"type": <exception.type>, "message": <exception.message or
status description>}`` (the result text kept as ``content``). Results need no pairing:
each span holds its call and its answer (``pairing``: ``"span"``). Extras:
``tool_call_id``, ``span_id``. The words: the last ``chat`` span of the trace that ended
before the tool span started gives ``context.assistant`` (its output text); the outcome's
``final_answer`` is the ``invoke_agent`` span's ``final_result``, ``steps`` the number of
``chat`` spans. A file whose ``chat`` spans show tool calls but that holds no
``execute_tool`` span is an error (the calls and results are not in it), never 0 entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.context import CONTEXT_FIELD, RunOutcome, attach_outcome
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from . import Imported, json_result, loads_json, of_traces
from ._openai_chat import parse_arguments

NAME = "otel"

_TOOL_OP = "execute_tool"
_INVALID = "INVALID_JSON"  # pydantic-ai's wrapper for arguments it could not parse


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: str | int
    end: str | int
    attributes: dict[str, Any]
    error: bool
    status_message: str | None
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def operation(self) -> Any:
        return self.attributes.get("gen_ai.operation.name")


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` holds OpenTelemetry spans, else why not."""
    try:
        spans = _spans(doc)
    except ValueError as exc:
        return str(exc)
    if not spans:
        return "no spans"
    if not any(s.operation is not None or s.name.startswith(_TOOL_OP) for s in spans):
        return "spans without gen_ai.operation.name (not GenAI spans)"
    return None


def read(doc: Any, path: Path) -> Imported:
    """OpenTelemetry spans (see ``looks_like``) as an ``Imported`` with one run per trace.

    Raises:
        CassetteFormatError: not GenAI spans, or a tool span without a tool name.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    traces: dict[str, list[_Span]] = {}
    for span in _spans(doc):
        traces.setdefault(span.trace_id, []).append(span)
    built = [_trace(spans, path) for spans in traces.values()]
    if not any(entries for entries, _ in built):
        _refuse_calls_without_tool_spans(traces, path)
    return of_traces(NAME, path, traces, built)


def _trace(spans: list[_Span], path: Path) -> tuple[list[Entry], dict[str, Any]]:
    spans = sorted(spans, key=lambda s: (_time(s.start), _time(s.end)))
    chats = [s for s in spans if s.operation == "chat"]
    entries: list[Entry] = []
    seq_of_call: dict[Any, int] = {}
    for span in spans:
        if span.operation != _TOOL_OP:
            continue
        entry = _entry(span, len(entries) + 1, path, _words(span, chats, seq_of_call))
        entries.append(entry)
        if entry.extra.get("tool_call_id") is not None:
            seq_of_call[entry.extra["tool_call_id"]] = entry.seq
    agent = next((s for s in spans if s.operation == "invoke_agent"), None)
    final = agent.attributes.get("final_result") if agent is not None else None
    outcome = RunOutcome(final_answer=None if final is None else str(final), steps=len(chats))
    attach_outcome(entries, outcome)
    meta = {
        "trace_id": spans[0].trace_id,
        "spans": len(spans),
        "pairing": "span",
        "run_outcome": outcome.to_json(),
    }
    return entries, meta


def _refuse_calls_without_tool_spans(traces: dict[str, list[_Span]], path: Path) -> None:
    """No ``execute_tool`` span, but the model's ``chat`` spans say it called tools (the
    tools ran outside the instrumentation, or their spans were dropped): an error, never a
    run of 0 calls (issue 25)."""
    for spans in traces.values():
        for span in spans:
            if span.operation != "chat":
                continue
            calls = [
                p for _, p in _parts(span.attributes.get("gen_ai.output.messages"))
                if p.get("type") == "tool_call"
            ]  # fmt: skip
            if calls:
                raise CassetteFormatError(
                    path,
                    None,
                    f"span {span.span_id}.gen_ai.output.messages",
                    f"the model called {calls[0].get('name')!r} (a tool_call part of a chat "
                    "span) but the file holds no execute_tool span: the tool calls and their "
                    "results are not in it; export the tool spans too",
                )


def _entry(span: _Span, seq: int, path: Path, words: dict[str, Any]) -> Entry:
    a = span.attributes
    tool = a.get("gen_ai.tool.name")
    if not isinstance(tool, str) or not tool:
        raise CassetteFormatError(
            path, None, f"span {span.span_id}.gen_ai.tool.name", "an execute_tool span with no tool"
        )
    where = f"span {span.span_id} gen_ai.tool.call.arguments"
    raw = a.get("gen_ai.tool.call.arguments", a.get("tool_arguments"))
    args, fields = parse_arguments(raw, where)
    if isinstance(args, dict) and set(args) == {_INVALID} and isinstance(args[_INVALID], str):
        args, fields = parse_arguments(args[_INVALID], where)
        fields.setdefault("arguments_error", f"{where}: marked {_INVALID} by the agent")
    fields = {"tool_call_id": a.get("gen_ai.tool.call.id"), "span_id": span.span_id, **fields}
    if words:
        fields[CONTEXT_FIELD] = words
    result = a.get("gen_ai.tool.call.result", a.get("tool_response"))
    if span.error:
        fields["content"] = result
        return Entry(seq=seq, tool=tool, args=args, error=_error(span), extra=fields)
    return Entry(seq=seq, tool=tool, args=args, response=_result(result), extra=fields)


def _result(result: Any) -> Any:
    """The tool's return value as ``CassetteCapability`` records it: pydantic-ai writes a
    ``str`` return as it is and any other value as its JSON (``serialize_result``), so
    JSON text of an object or array is that value and any other text the string itself
    (``json_result`` would make it ``{"text": ...}``: a false drift against the adapter's
    recording of the same run)."""
    response = json_result(result)
    if isinstance(result, str) and response == {"text": result}:
        return result
    return response


def _error(span: _Span) -> dict[str, Any]:
    for event in span.events:
        attrs = event.get("attributes") or {}
        if event.get("name") == "exception" and isinstance(attrs, dict):
            return {
                "type": str(attrs.get("exception.type", "Error")).rsplit(".", 1)[-1],
                "message": str(attrs.get("exception.message", "")),
            }
    return {"type": "Error", "message": span.status_message or "the span's status is ERROR"}


def _words(span: _Span, chats: list[_Span], seq_of_call: dict[Any, int]) -> dict[str, Any]:
    """``context`` of a tool span: the text of the last chat span that ended before it
    started, and what that chat answered (the user's text, or the seqs of the tool
    results it was sent, by their call ids)."""
    before = [c for c in chats if _time(c.end) <= _time(span.start)]
    if not before:
        return {}
    chat = before[-1].attributes
    out: dict[str, Any] = {}
    texts = [p["content"] for _, p in _parts(chat.get("gen_ai.output.messages")) if _is_text(p)]
    if texts:
        out["assistant"] = "\n".join(texts)
    sent = _parts(chat.get("gen_ai.input.messages"))
    if sent:
        last_role = sent[-1][0]
        results = []  # the tool results at the end of the history: what the chat answered
        for _, part in reversed(sent):
            if part.get("type") != "tool_call_response":
                break
            results.append(part.get("id"))
        seqs = sorted({seq_of_call[i] for i in results if i in seq_of_call})
        if seqs:
            out["answered"] = {"role": "tool", "seqs": seqs}
        elif last_role == "user" and _is_text(sent[-1][1]):
            out["answered"] = {"role": "user", "text": sent[-1][1]["content"]}
    return out


def _parts(messages: Any) -> list[tuple[Any, dict[str, Any]]]:
    """``(role, part)`` of every part of GenAI messages (JSON text or a list)."""
    try:
        parsed = loads_json(messages) if isinstance(messages, str) else messages
    except ValueError:
        return []
    if not isinstance(parsed, list):
        return []
    return [
        (m.get("role"), p)
        for m in parsed
        if isinstance(m, dict)
        for p in m.get("parts") or ()
        if isinstance(p, dict)
    ]


def _is_text(part: dict[str, Any]) -> bool:
    return part.get("type") == "text" and isinstance(part.get("content"), str)


def _time(value: str | int) -> Any:
    """A sortable time: OTLP's nanoseconds as a number, the SDK's ISO text as it is."""
    if isinstance(value, int):
        return (0, value, "")
    if isinstance(value, str) and value.isdigit():
        return (0, int(value), "")
    return (1, 0, str(value))


# -- the two JSON shapes --------------------------------------------------------------------


def _spans(doc: Any) -> list[_Span]:
    """The spans in ``doc``: OTLP JSON request(s), or SDK span JSON objects.

    Raises:
        ValueError: neither (the message says what was found).
    """
    items = doc if isinstance(doc, list) else [doc]
    spans: list[_Span] = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("not OTLP JSON nor span JSON (an item is not an object)")
        if "resourceSpans" in item:
            spans.extend(_otlp(item))
        elif isinstance(item.get("context"), dict) and "name" in item:
            spans.append(_sdk(item))
        else:
            raise ValueError(
                "not OTLP JSON ('resourceSpans') nor the SDK's span JSON ('name', 'context')"
            )
    return spans


def _otlp(request: dict[str, Any]) -> list[_Span]:
    out: list[_Span] = []
    for resource in request.get("resourceSpans") or ():
        for scope in (resource or {}).get("scopeSpans") or ():
            for s in (scope or {}).get("spans") or ():
                status = s.get("status") or {}
                out.append(
                    _Span(
                        trace_id=str(s.get("traceId", "")),
                        span_id=str(s.get("spanId", "")),
                        parent_id=s.get("parentSpanId") or None,
                        name=str(s.get("name", "")),
                        start=str(s.get("startTimeUnixNano", "0")),
                        end=str(s.get("endTimeUnixNano", "0")),
                        attributes=_otlp_attributes(s.get("attributes")),
                        error=status.get("code") in ("STATUS_CODE_ERROR", 2),
                        status_message=status.get("message"),
                        events=[
                            {
                                "name": e.get("name"),
                                "attributes": _otlp_attributes(e.get("attributes")),
                            }
                            for e in s.get("events") or ()
                            if isinstance(e, dict)
                        ],
                    )
                )
    return out


def _otlp_attributes(attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in attrs or ():
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _any_value(kv.get("value") or {})
    return out


def _any_value(v: dict[str, Any]) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_any_value(x) for x in (v["arrayValue"] or {}).get("values") or ()]
    if "kvlistValue" in v:
        return _otlp_attributes((v["kvlistValue"] or {}).get("values"))
    return None


def _sdk(s: dict[str, Any]) -> _Span:
    status = s.get("status") or {}
    attrs = s.get("attributes")
    return _Span(
        trace_id=str(s["context"].get("trace_id", "")),
        span_id=str(s["context"].get("span_id", "")),
        parent_id=s.get("parent_id"),
        name=str(s.get("name", "")),
        start=str(s.get("start_time", "")),
        end=str(s.get("end_time", "")),
        attributes=attrs if isinstance(attrs, dict) else {},
        error=status.get("status_code") == "ERROR",
        status_message=status.get("description"),
        events=[e for e in s.get("events") or () if isinstance(e, dict)],
    )
