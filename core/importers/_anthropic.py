"""Anthropic Messages (``tool_use`` / ``tool_result`` content blocks), as a cassette.

The Messages API's conversation: ``{"model", "system", "messages": [...]}`` (a request
body, or a saved history), or the bare list of messages, each ``{"role": "user" |
"assistant", "content": text | [blocks]}`` (the SDK's ``Message.model_dump()`` for the
assistant's turns). An assistant message's ``tool_use`` blocks (``{"id", "name",
"input"}``) are its calls; the next user message's ``tool_result`` blocks (``{"tool_use_id",
"content", "is_error"}``) their results. ``text`` and ``thinking`` blocks are the words
(``context``); ``server_tool_use`` blocks (web search, code execution run by Anthropic)
are calls too, answered by their ``*_tool_result`` block.

The blocks are converted to chat messages and read as ``_openai_chat`` reads them: each
call one entry, ``args`` = ``input``, ``response`` = ``json_result(content)``, or ``error``
``{"type": "ToolError", "message": ...}`` when ``is_error`` is true; paired by
``tool_use_id`` when ids are unique (they are, in the API), else by position. An
``input`` that is text, not an object (a partial ``input_json_delta`` saved as it
streamed) is parsed, and kept with ``arguments_error`` when it is not valid JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from . import Imported
from ._openai_chat import imported_from_messages

NAME = "anthropic"

_CALLS = ("tool_use", "server_tool_use")


def _messages(doc: Any) -> Any:
    return doc.get("messages") if isinstance(doc, dict) else doc


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is an Anthropic conversation with tool blocks, else why not."""
    messages = _messages(doc)
    if not isinstance(messages, list) or not messages:
        return "not a list of messages nor an object with a 'messages' list"
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        return "not every item is a message (an object with 'role')"
    for m in messages:
        for block in m.get("content") if isinstance(m.get("content"), list) else ():
            if isinstance(block, dict) and (
                block.get("type") in _CALLS or block.get("type") == "tool_result"
            ):
                return None
    return "no message holds a 'tool_use' or 'tool_result' content block"


def read(doc: Any, path: Path) -> Imported:
    """An Anthropic conversation (see ``looks_like``) as an ``Imported`` with one run.

    Raises:
        CassetteFormatError: not one, or a block with a bad field, naming it
            (``messages[1].content[1].name``).
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    where = "messages" if isinstance(doc, dict) else ""
    chat: list[dict[str, Any]] = []
    origin: list[int] = []
    names: dict[str, str] = {}
    for i, m in enumerate(_messages(doc)):
        for converted in _convert(m, f"{where}[{i}]", path, names):
            chat.append(converted)
            origin.append(i)
    meta: dict[str, Any] = {}
    if isinstance(doc, dict):
        meta["log"] = {k: v for k, v in doc.items() if k not in ("messages", "system", "tools")}
    return imported_from_messages(NAME, path, chat, origin, meta)


def _convert(
    m: dict[str, Any], where: str, path: Path, names: dict[str, str]
) -> list[dict[str, Any]]:
    """Message ``m`` as chat messages: an assistant message with ``tool_calls``; a user
    message's results as ``tool`` messages, then its other blocks as a user message."""
    content = m.get("content")
    if not isinstance(content, list):
        return [{"role": m["role"], "content": content}]
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    rest: list[Any] = []
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        field = f"{where}.content[{j}]"
        if kind in _CALLS:
            calls.append(_call(block, field, path, names))
        elif kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
            results.append(_result(block, field, path, names))
        elif kind == "thinking":
            rest.append({"type": "thinking", "thinking": block.get("thinking")})
        else:
            rest.append(block)
    out: list[dict[str, Any]] = list(results)
    if calls or rest or not results:
        message: dict[str, Any] = {"role": m["role"], "content": rest}
        if calls:
            message["tool_calls"] = calls
        out.append(message)
    return out


def _call(block: dict[str, Any], field: str, path: Path, names: dict[str, str]) -> dict[str, Any]:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        raise CassetteFormatError(path, None, f"{field}.name", "expected a tool name")
    call_id = block.get("id")
    if isinstance(call_id, str):
        names[call_id] = name
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": block.get("input")},
        "source_field": f"{field}.input",
    }


def _result(block: dict[str, Any], field: str, path: Path, names: dict[str, str]) -> dict[str, Any]:
    use_id = block.get("tool_use_id")
    if not isinstance(use_id, str):
        raise CassetteFormatError(path, None, f"{field}.tool_use_id", "expected the call's id")
    content = block.get("content")
    message: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": use_id,
        "name": names.get(use_id, "(unknown tool)"),
        "content": content,
    }
    if block.get("is_error"):
        text = content if isinstance(content, str) else _text_of(content)
        message["error"] = {"type": "ToolError", "message": text}
    return message


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return "" if content is None else str(content)
