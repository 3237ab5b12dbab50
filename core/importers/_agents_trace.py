"""The OpenAI Agents SDK's trace export (function spans), as cassettes: one run per trace.

The SDK's tracing exports each trace and span as ``export()`` makes it: ``{"object":
"trace", "id", "workflow_name", ...}`` and ``{"object": "trace.span", "id", "trace_id",
"parent_id", "started_at", "ended_at", "span_data": {...}, "error": ...}``; the backend
exporter sends them as ``{"data": [...]}``, a custom ``TracingProcessor`` writes them as a
JSON list or JSON Lines. A ``function`` span (``span_data: {"type": "function", "name",
"input", "output"}``) is one tool call; the SDK's ``turn`` spans (``custom`` spans with
``data.sdk_span_type = "turn"``, the parents of a turn's function spans) number the
agent's turns.

Each function span is an entry, in start order: ``args`` = the parsed ``input`` (kept as
text with ``arguments_error`` when not valid JSON), ``response`` = the output as the
``cassette_agent`` adapter records it, so a recorded run and its trace agree: the span
keeps ``str()`` of the tool's output (the text the model read), so a ``str`` stays that
string (JSON text too) and a dict or list whose ``str()`` the text is exactly becomes that
value (``_output_value``); a pydantic model, a dataclass or a ``datetime`` inside a dict
cannot be read back from its ``str()`` and stays text (``diff`` of the recording against
the trace shows that call as a type drift); an output that is not text goes through
``json_result``; or ``error`` ``{"type": "ToolError", "message": error.message,
"details": error.data}`` when the span has an ``error`` (the output the model saw kept as
``content``). A retried call is one entry per span. Extras: ``turn`` (the turn number),
``span_id``, ``agent`` (the agent span's name). Results need no pairing (``pairing``:
``"span"``). The outcome's ``steps`` is the number of turns; the trace holds no final
answer unless a ``response`` / ``generation`` span carries one.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from ..format.context import RunOutcome, attach_outcome
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from ..format.jsonvalue import roundtrip_change
from . import Imported, json_result, of_traces
from ._openai_chat import parse_arguments

NAME = "openai-agents"


def _items(doc: Any) -> Any:
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        return doc["data"]
    if (
        isinstance(doc, list)
        and doc
        and all(isinstance(d, dict) and isinstance(d.get("data"), list) for d in doc)
    ):
        return [item for d in doc for item in d["data"]]  # several exported batches
    return doc


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is an Agents SDK trace export, else why not."""
    items = _items(doc)
    if not isinstance(items, list) or not items:
        return "not a list of exported traces and spans nor {'data': [...]}"
    if not all(isinstance(i, dict) and i.get("object") in ("trace", "trace.span") for i in items):
        return "not every item is an exported trace or span ('object': 'trace' / 'trace.span')"
    if not any(i.get("object") == "trace.span" for i in items):
        return "no span"
    return None


def read(doc: Any, path: Path) -> Imported:
    """A trace export (see ``looks_like``) as an ``Imported`` with one run per trace.

    Raises:
        CassetteFormatError: not one, or a function span without a name.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    items = _items(doc)
    names = {i.get("id"): i.get("workflow_name") for i in items if i.get("object") == "trace"}
    traces: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        if item.get("object") == "trace.span":
            traces.setdefault(str(item.get("trace_id")), []).append(item)
    built = [_trace(spans, path, names.get(trace_id)) for trace_id, spans in traces.items()]
    return of_traces(NAME, path, traces, built)


def _trace(
    spans: list[dict[str, Any]], path: Path, workflow: Any
) -> tuple[list[Entry], dict[str, Any]]:
    by_id = {s.get("id"): s for s in spans}
    order = sorted(enumerate(spans), key=lambda p: (str(p[1].get("started_at") or ""), p[0]))
    entries: list[Entry] = []
    turns: set[int] = set()
    for _, span in order:
        data = span.get("span_data") or {}
        turn = _turn(span, by_id)
        if turn is not None:
            turns.add(turn)
        if not isinstance(data, dict) or data.get("type") != "function":
            continue
        entries.append(_entry(span, data, len(entries) + 1, path, turn, by_id))
    for span in spans:
        data = span.get("span_data") or {}
        if isinstance(data, dict) and (data.get("data") or {}).get("sdk_span_type") == "turn":
            turns.add(data["data"].get("turn"))
    outcome = RunOutcome(steps=len(turns) or None)
    attach_outcome(entries, outcome)
    meta = {
        "trace_id": spans[0].get("trace_id"),
        "workflow_name": workflow,
        "spans": len(spans),
        "pairing": "span",
        "run_outcome": outcome.to_json(),
    }
    return entries, meta


def _entry(
    span: dict[str, Any],
    data: dict[str, Any],
    seq: int,
    path: Path,
    turn: int | None,
    by_id: dict[Any, dict[str, Any]],
) -> Entry:
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise CassetteFormatError(
            path, None, f"span {span.get('id')}.span_data.name", "a function span with no name"
        )
    args, fields = parse_arguments(data.get("input"), f"span {span.get('id')} span_data.input")
    fields = {"span_id": span.get("id"), **fields}
    if turn is not None:
        fields["turn"] = turn
    agent = _agent(span, by_id)
    if agent is not None:
        fields["agent"] = agent
    error = span.get("error")
    if isinstance(error, dict):
        fields["content"] = data.get("output")
        failure: dict[str, Any] = {"type": "ToolError", "message": str(error.get("message", ""))}
        if error.get("data") is not None:
            failure["details"] = error["data"]
        return Entry(seq=seq, tool=name, args=args, error=failure, extra=fields)
    output = data.get("output")
    response = _output_value(output) if isinstance(output, str) else json_result(output)
    return Entry(seq=seq, tool=name, args=args, response=response, extra=fields)


def _output_value(text: str) -> Any:
    """The tool's output as the ``cassette_agent`` adapter records it, from the ``str()``
    the span keeps: a dict or list whose ``str()`` is exactly ``text`` (a ``-> dict``
    tool's output: ``"{'city': 'Porto'}"``) is that value; any other text (JSON text a
    tool returned as a ``str`` included: its ``str()`` is not the text) stays the string."""
    if text[:1] not in ("{", "["):
        return text
    try:  # literals only: no code runs
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    if isinstance(value, dict | list) and str(value) == text and roundtrip_change(value) is None:
        return value
    return text


def _ancestors(span: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[Any] = set()
    parent = by_id.get(span.get("parent_id"))
    while parent is not None and parent.get("id") not in seen:
        seen.add(parent.get("id"))
        out.append(parent)
        parent = by_id.get(parent.get("parent_id"))
    return out


def _turn(span: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> int | None:
    for parent in _ancestors(span, by_id):
        data = (parent.get("span_data") or {}).get("data") or {}
        if isinstance(data, dict) and data.get("sdk_span_type") == "turn":
            turn = data.get("turn")
            return turn if isinstance(turn, int) else None
    return None


def _agent(span: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> str | None:
    for parent in _ancestors(span, by_id):
        data = parent.get("span_data") or {}
        if data.get("type") == "agent" and isinstance(data.get("name"), str):
            return str(data["name"])
    return None
