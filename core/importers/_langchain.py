"""LangChain messages (``messages_to_dict``) and LangGraph checkpoints, as a cassette.

A JSON list of LangChain messages in any of the shapes LangChain writes them:
``messages_to_dict`` (``{"type": "ai", "data": {...}}``), its serializer's ``dumpd``
(``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}``, the
shape of a LangGraph checkpoint saved as JSON) or a message's ``model_dump()`` (``{"type":
"ai", "content", "tool_calls", ...}``, as the LangGraph API returns a thread's state).
Containers: the list itself, ``{"messages": [...]}``, a state ``{"values": {"messages"}}``
and a checkpoint ``{"channel_values": {"messages"}}`` (or ``{"checkpoint": {...}}``).

An AI message's ``tool_calls`` (``{"name", "args", "id"}``) are its calls and its
``invalid_tool_calls`` (``{"name", "args": <the model's text>, "id", "error"}``) too: the
model's malformed arguments, kept as text with ``arguments_error``; a ``tool`` message
(``tool_call_id``, ``status: "error"`` for a failed tool) their results. A result's
``response`` is the tool message as the ``CassetteMiddleware`` adapter records it
(``recorded_tool_message``: its message dict without ``tool_call_id`` and ``id``), so
``diff`` of a recorded run against its own messages finds no drift; a ``status: "error"``
message is the call's ``error`` ``{"type": "ToolError", "message": content}`` (the adapter
records that message as a response: ``diff`` shows the one call as error vs response).
They are read as ``_openai_chat`` reads chat messages: paired by ``tool_call_id`` when
the ids are unique, else by position; the AI messages' text is the words (``context``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from . import Imported
from ._openai_chat import imported_from_messages

NAME = "langchain"

#: LangChain's message types (``type``, or the class in ``dumpd``'s ``id``) -> chat roles
_ROLES = {
    "human": "user",
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessage": "system",
    "function": "function",
    "FunctionMessage": "function",
    "chat": "user",
    "ChatMessage": "user",
}


def _messages(doc: Any) -> Any:
    """The message list inside ``doc`` (see the module docstring), or ``None``."""
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict):
        return None
    if "checkpoint" in doc and isinstance(doc["checkpoint"], dict):
        doc = doc["checkpoint"]
    for key in ("values", "channel_values"):
        if isinstance(doc.get(key), dict):
            return doc[key].get("messages")
    return doc.get("messages")


def _unwrap(m: Any) -> tuple[str | None, dict[str, Any]]:
    """``(LangChain type, fields)`` of one message in any of its three shapes."""
    if not isinstance(m, dict):
        return None, {}
    if m.get("lc") == 1 and isinstance(m.get("id"), list) and isinstance(m.get("kwargs"), dict):
        return str(m["id"][-1]), m["kwargs"]
    if isinstance(m.get("data"), dict) and isinstance(m.get("type"), str):
        return m["type"], m["data"]
    kind = m.get("type")
    return (kind if isinstance(kind, str) else None), m


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` holds LangChain messages, else why not."""
    messages = _messages(doc)
    if not isinstance(messages, list) or not messages:
        return "no list of LangChain messages (a list, 'messages', 'values' or 'channel_values')"
    for m in messages:
        kind, _ = _unwrap(m)
        if kind not in _ROLES:
            return f"not every item is a LangChain message (found type {kind!r:.40})"
    return None


def read(doc: Any, path: Path) -> Imported:
    """LangChain messages (see ``looks_like``) as an ``Imported`` with one run.

    Raises:
        CassetteFormatError: not such messages, or a call with a bad field, naming it.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    chat: list[dict[str, Any]] = []
    for i, m in enumerate(_messages(doc)):
        kind, fields = _unwrap(m)
        chat.append(_convert(_ROLES[kind or ""], fields, i, path))
    return imported_from_messages(NAME, path, chat, list(range(len(chat))), {})


#: a ``ToolMessage``'s fields that ``dumpd`` leaves out when they hold these defaults
#: (langchain-core 1.8.3's ``ToolMessage`` and ``BaseMessage``); ``messages_to_dict`` and
#: ``model_dump`` write every field
_TOOL_MESSAGE_DEFAULTS: dict[str, Any] = {
    "content": "",
    "additional_kwargs": {},
    "response_metadata": {},
    "type": "tool",
    "name": None,
    "artifact": None,
    "status": "success",
}


def recorded_tool_message(fields: dict[str, Any]) -> dict[str, Any]:
    """A tool message's fields as ``CassetteMiddleware`` records its response: LangChain's
    message dict (defaults filled in where ``dumpd`` left them out) without
    ``tool_call_id`` (a replay gives back the live call's) and without ``id`` (LangGraph's
    ``add_messages`` gives each tool message a random one after the tool node made it),
    so a run recorded with the adapter and its imported messages agree."""
    out = {**_TOOL_MESSAGE_DEFAULTS, **fields}
    out.pop("tool_call_id", None)
    out.pop("id", None)
    return out


def _convert(role: str, m: dict[str, Any], i: int, path: Path) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": m.get("content")}
    if role == "tool":
        message["tool_call_id"] = m.get("tool_call_id")
        message["name"] = m.get("name")
        if m.get("status") == "error":
            content = m.get("content")
            message["error"] = {"type": "ToolError", "message": str(content)}
        else:
            message["value"] = recorded_tool_message(m)
        return message
    if role == "function":
        message["name"] = m.get("name")
        return message
    calls: list[dict[str, Any]] = []
    for key in ("tool_calls", "invalid_tool_calls"):
        for j, call in enumerate(m.get(key) or ()):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise CassetteFormatError(
                    path, None, f"[{i}].{key}[{j}].name", "expected a tool name"
                )
            converted: dict[str, Any] = {
                "id": call.get("id"),
                "type": "function",
                "function": {"name": call["name"], "arguments": call.get("args")},
                "source_field": f"[{i}].{key}[{j}].args",
            }
            if key == "invalid_tool_calls" and call.get("error"):
                converted["invalid_tool_call_error"] = str(call["error"])
            calls.append(converted)
    if calls:
        message["tool_calls"] = calls
    return message
