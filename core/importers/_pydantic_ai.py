"""pydantic-ai message history (``result.all_messages_json()``), as a cassette.

A JSON list of ``ModelMessage``s: ``{"kind": "request", "parts": [...]}`` (what was sent
to the model: ``user-prompt``, ``system-prompt``, ``tool-return`` and ``retry-prompt``
parts) and ``{"kind": "response", "parts": [...]}`` (what the model answered: ``text``,
``thinking`` and ``tool-call`` parts, each ``{"tool_name", "args", "tool_call_id"}``,
``args`` an object or the model's JSON text). ``builtin-tool-call`` /
``builtin-tool-return`` parts (tools run by the provider) are read the same way.

The parts are converted to chat messages and read as ``_openai_chat`` reads them: each
tool call one entry, ``args`` parsed (kept as text with ``arguments_error`` when the
model's JSON is not valid), ``response`` = the ``tool-return`` content as it is: the
history keeps the tool's return value as JSON (a ``str`` return stays a string, a
``float`` a number), the value the ``CassetteCapability`` adapter records, so a recorded
run and its imported history agree; a ``retry-prompt`` part, or a ``tool-return`` whose
``outcome`` is not ``"success"`` (pydantic-ai 2 marks a rejected call ``"retried"``),
is the call's ``error`` ``{"type": <its retry cause or "RetryPrompt">, "message": ...}``,
but a tool's own ``ModelRetry`` (cause ``model_retry``) reads as the adapter records it:
``{"type": "ModelRetry", "message", "module": "pydantic_ai.exceptions", "attrs":
{"message"}}`` (the attempt is the entry's place among the key's entries).
Each attempt of a retried call is its own entry. Paired by ``tool_call_id`` when unique.
The run's outcome: the last response's text is the final answer, and ``steps`` counts the
model's responses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from . import Imported
from ._openai_chat import imported_from_messages

NAME = "pydantic-ai"

_CALLS = ("tool-call", "builtin-tool-call")
_RETURNS = ("tool-return", "builtin-tool-return")


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is a pydantic-ai message list, else why not."""
    if not isinstance(doc, list) or not doc:
        return "not a list of pydantic-ai messages"
    for m in doc:
        if not (isinstance(m, dict) and m.get("kind") in ("request", "response")):
            return "not every item is a pydantic-ai message (with kind 'request' or 'response')"
        if not isinstance(m.get("parts"), list):
            return "a pydantic-ai message without a 'parts' list"
    return None


def read(doc: Any, path: Path) -> Imported:
    """A pydantic-ai message list (see ``looks_like``) as an ``Imported`` with one run.

    Raises:
        CassetteFormatError: not one, or a part with a bad field, naming it
            (``[1].parts[0].tool_name``).
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    chat: list[dict[str, Any]] = []
    origin: list[int] = []
    for i, m in enumerate(doc):
        converted = _response(m, i, path) if m["kind"] == "response" else _request(m, i, path)
        chat.extend(converted)
        origin.extend([i] * len(converted))
    meta: dict[str, Any] = {}
    runs = {m.get("run_id") for m in doc if m.get("run_id")}
    if runs:
        meta["run_ids"] = sorted(runs)
    return imported_from_messages(NAME, path, chat, origin, meta)


def _response(m: dict[str, Any], i: int, path: Path) -> list[dict[str, Any]]:
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(m["parts"]):
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if kind == "text":
            texts.append({"type": "text", "text": part.get("content")})
        elif kind == "thinking":
            texts.append({"type": "thinking", "thinking": part.get("content")})
        elif kind in _CALLS:
            name = part.get("tool_name")
            if not isinstance(name, str) or not name:
                raise CassetteFormatError(
                    path, None, f"[{i}].parts[{j}].tool_name", "expected a tool name"
                )
            calls.append(
                {
                    "id": part.get("tool_call_id"),
                    "type": "function",
                    "function": {"name": name, "arguments": part.get("args")},
                    "source_field": f"[{i}].parts[{j}].args",
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": texts}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _request(m: dict[str, Any], i: int, path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in m["parts"]:
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if kind == "user-prompt":
            out.append({"role": "user", "content": _text(part.get("content"))})
        elif kind == "system-prompt":
            out.append({"role": "system", "content": part.get("content")})
        elif kind in _RETURNS or (kind == "retry-prompt" and part.get("tool_name")):
            out.append(_result(part, kind))
    return out


def _result(part: dict[str, Any], kind: str) -> dict[str, Any]:
    content = part.get("content")
    message: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": part.get("tool_call_id"),
        "name": part.get("tool_name"),
        "content": content if isinstance(content, str) else json.dumps(content, default=str),
        # the return value already as JSON: taken as is, never re-read as text
        "value": content,
    }
    outcome = part.get("outcome", "success")
    if kind == "retry-prompt" or outcome not in (None, "success"):
        given = part.get("retry")
        retry: dict[str, Any] = given if isinstance(given, dict) else {}
        cause = retry.get("cause") or ("RetryPrompt" if kind == "retry-prompt" else outcome)
        text = content if isinstance(content, str) else json.dumps(content, default=str)
        if cause == "model_retry":  # the tool raised ModelRetry: as CassetteCapability records it
            message["error"] = {
                "type": "ModelRetry",
                "message": text,
                "module": "pydantic_ai.exceptions",
                "attrs": {"message": text},
            }
            return message
        message["error"] = {"type": str(cause), "message": text}
        if retry:
            message["error"]["retry"] = retry
    return message


def _text(content: Any) -> Any:
    if isinstance(content, list):  # multi-modal prompt: its text items
        return "\n".join(c for c in content if isinstance(c, str))
    return content
