"""OpenAI Responses API items (``function_call`` / ``function_call_output``), as a cassette.

The items a Responses conversation is made of, as the OpenAI Agents SDK's
``result.to_input_list()`` returns them and as a Responses request's ``input`` or a
response's ``output`` holds them: a JSON list (or JSON Lines, or ``{"input": [...]}`` /
``{"output": [...]}``) of ``{"type": "message", "role", "content"}`` (the role alone for
the first user input), ``{"type": "function_call", "call_id", "name", "arguments"}``,
``{"type": "function_call_output", "call_id", "output"}`` and ``{"type": "reasoning",
"summary": [...]}``. ``custom_tool_call`` / ``custom_tool_call_output`` (free-form
``input``) are read as calls too.

The items are converted to chat messages (the ``function_call`` items after an assistant
message become its ``tool_calls``, so parallel calls share their words) and read as
``_openai_chat`` reads them: each call one entry, ``args`` = the parsed ``arguments``
(kept as text with ``arguments_error`` when not valid JSON), ``response`` =
``json_result(output)``; paired by ``call_id`` when the ids are unique, else by position.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..format.errors import CassetteFormatError
from . import Imported
from ._openai_chat import imported_from_messages

NAME = "openai-responses"

_CALL = ("function_call", "custom_tool_call")
_OUTPUT = ("function_call_output", "custom_tool_call_output")
_KNOWN = (*_CALL, *_OUTPUT, "message", "reasoning")


def _items(doc: Any) -> Any:
    if isinstance(doc, dict):
        for key in ("input", "output", "items"):
            if isinstance(doc.get(key), list):
                return doc[key]
    return doc


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` is a list of Responses items with a call, else why not."""
    items = _items(doc)
    if not isinstance(items, list) or not items:
        return "not a list of Responses items nor an object with an 'input'/'output' list"
    if not all(isinstance(it, dict) and ("type" in it or "role" in it) for it in items):
        return "not every item is a Responses item (an object with 'type' or 'role')"
    if not any(it.get("type") in (*_CALL, *_OUTPUT) for it in items):
        return "no 'function_call' or 'function_call_output' item"
    return None


def read(doc: Any, path: Path) -> Imported:
    """Responses items (see ``looks_like``) as an ``Imported`` with one run.

    Raises:
        CassetteFormatError: not such a list, or an item with a bad field, naming it
            (``[3].name``).
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    chat: list[dict[str, Any]] = []
    origin: list[int] = []
    names: dict[str, str] = {}
    reasoning: list[str] = []
    joins = False  # a call now joins the last chat message (an assistant's)
    for i, item in enumerate(_items(doc)):
        kind = item.get("type", "message")
        was_joining, joins = joins, False
        if kind in _CALL:
            call = _call(item, i, path, names)
            joins = True
            if was_joining:  # right after the assistant's message or its other calls
                chat[-1].setdefault("tool_calls", []).append(call)
            else:
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
                origin.append(i)
                _take_reasoning(chat[-1], reasoning)
        elif kind in _OUTPUT:
            chat.append(_output(item, i, path, names))
            origin.append(i)
        elif kind == "reasoning":
            reasoning.extend(_summary(item))
            joins = was_joining
        elif kind == "message" or "role" in item:
            chat.append(
                {"role": item.get("role", "user"), "content": _content(item.get("content"))}
            )
            origin.append(i)
            if chat[-1]["role"] == "assistant":
                _take_reasoning(chat[-1], reasoning)
                joins = True
    return imported_from_messages(NAME, path, chat, origin, {"items": len(_items(doc))})


def _call(item: dict[str, Any], i: int, path: Path, names: dict[str, str]) -> dict[str, Any]:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise CassetteFormatError(path, None, f"[{i}].name", "expected a tool name")
    call_id = item.get("call_id")
    if isinstance(call_id, str):
        names[call_id] = name
    raw = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
    if item.get("type") == "custom_tool_call":
        raw = {"input": raw}
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": raw},
        "source_field": f"[{i}].{'arguments' if item.get('type') == 'function_call' else 'input'}",
    }


def _output(item: dict[str, Any], i: int, path: Path, names: dict[str, str]) -> dict[str, Any]:
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        raise CassetteFormatError(path, None, f"[{i}].call_id", "expected the call's id")
    output = item.get("output")
    if isinstance(output, list):  # [{"type": "input_text", "text": ...}]
        output = _content(output)
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "name": names.get(call_id, "(unknown tool)"),
        "content": output,
    }


def _content(content: Any) -> Any:
    """Responses content parts (``input_text``, ``output_text``) as chat ``text`` parts."""
    if not isinstance(content, list):
        return content
    return [
        {"type": "text", "text": p.get("text")}
        if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")
        else p
        for p in content
    ]


def _summary(item: dict[str, Any]) -> list[str]:
    parts = item.get("summary") or item.get("content") or []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _take_reasoning(message: dict[str, Any], reasoning: list[str]) -> None:
    if reasoning:
        message["reasoning"] = "\n".join(reasoning)
        reasoning.clear()
