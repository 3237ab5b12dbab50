"""OpenAI chat messages with tool calls, as a cassette.

The format of most agent logs: a list of ``{"role", "content", ...}`` messages where an
assistant message carries ``tool_calls`` (``[{"id", "type": "function", "function":
{"name", "arguments"}}]``, ``arguments`` a JSON string or an object) and each ``tool``
message carries one result. Accepted containers: a JSON list of messages, an object
``{"messages": [...]}``, or JSON Lines with one message per line. inspect_ai's variant
(``"function": "<name>"`` and ``"arguments": {...}`` on the call, ``"error"`` on the tool
message) and the legacy ``function_call`` / ``role: "function"`` pair are read too.

Pairing rule (issues 5 and 25, ``pairing_of``): when every call of the run has an id,
no id repeats and every tool message names one of them, a tool message answers the
waiting call with its ``tool_call_id`` (**by id**: parallel calls answered out of order
keep their own answers). Otherwise a call is answered by the tool message in its position
after the call (the first tool message answers the first pending call, and so on; **by
position**): real logs reuse ids (49 of tau-bench's 200 gpt-4o airline runs send the same
id for different calls), where pairing by id attaches wrong responses. The run's
metadata says which (``pairing``: ``"id"`` or ``"position"``).

Each call becomes an entry: ``tool`` = the function name, ``args`` = the parsed
arguments, ``response`` = ``json_result(content)`` (JSON objects and arrays as JSON, other
text as ``{"text": ...}``; a converted message whose result is already a typed JSON
value, as pydantic-ai's history keeps it, carries it as ``value`` and it is taken as
is), or ``error`` = ``{"type", "message"}`` when the tool message has an ``error``
(inspect_ai). Extra fields keep what is not part of the call:
``tool_call_id`` (the call's id, even when empty), ``message_index`` (0-based position of
the calling message), ``answer_tool_call_id`` when the answer names another id,
``arguments_error`` and the raw text when ``arguments`` is not valid JSON, ``content``
of an error message, and ``unanswered`` / ``unpaired_result`` for a call without an
answer (an ``error`` entry of type ``NoToolResult``) and a result without a call
(``args`` = ``null``).

The words (``core/format/context.py``): each call's entry carries ``context`` (the calling
message's text and reasoning, and the message it answered: a user message's text, or the
seqs of the tool results right before it), and the last entry ``run_outcome``
(``chat_outcome``: the final answer and the number of agent turns).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from ..format.context import CONTEXT_FIELD, RunOutcome, attach_outcome, message_text
from ..format.entry import Entry
from ..format.errors import CassetteFormatError
from ..format.jsontext import json_error_text
from . import Imported, RunInfo, json_result, loads_json

NAME = "openai"

_NO_RESULT = {
    "type": "NoToolResult",
    "message": "no tool message answers this call in the log",
}


def looks_like(doc: Any) -> str | None:
    """``None`` when ``doc`` (parsed JSON) is a chat log, else why it is not."""
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list):
        return "not a JSON list of chat messages nor an object with a 'messages' list"
    if not messages:
        return "an empty list: no chat messages"
    bad = next((i for i, m in enumerate(messages) if not _is_message(m)), None)
    if bad is not None:
        return f"item {bad} is not a chat message (an object with 'role')"
    for i, m in enumerate(messages):
        kind = _foreign_block(m)
        if kind is not None:
            return (
                f"message {i} holds a {kind!r} content block ({FOREIGN_BLOCKS[kind]}), "
                "which the openai importer does not read"
            )
    return None


#: content blocks that carry tool calls in other providers' message formats (bugcase 50:
#: read as OpenAI chat they were dropped, and the import made 0 entries)
FOREIGN_BLOCKS = {
    "tool_use": "the Anthropic Messages format",
    "tool_result": "the Anthropic Messages format",
    "server_tool_use": "the Anthropic Messages format",
    "functionCall": "the Gemini format",
    "functionResponse": "the Gemini format",
    "toolUse": "the Bedrock Converse format",
    "toolResult": "the Bedrock Converse format",
}


def _foreign_block(m: dict[str, Any]) -> str | None:
    """The first content block of ``m`` whose type or key is in ``FOREIGN_BLOCKS``."""
    for key in ("content", "parts"):
        blocks = m.get(key)
        if not isinstance(blocks, list):
            continue
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if isinstance(kind, str) and kind in FOREIGN_BLOCKS:
                return kind
            hit = next((k for k in block if k in FOREIGN_BLOCKS), None)
            if hit is not None:
                return hit
    return None


def _is_message(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("role"), str)


def count_calls(messages: list[Any]) -> int:
    """The number of entries ``entries_from_messages`` makes (calls plus unpaired results)."""
    pending = 0
    total = 0
    for m in messages:
        if not isinstance(m, dict):
            continue
        calls = _calls_of(m)
        if calls:
            total += pending  # unanswered calls still count
            pending = len(calls)
        elif m.get("role") in ("tool", "function"):
            if pending:
                pending -= 1
            total += 1
    return total + pending


def _calls_of(m: dict[str, Any]) -> list[Any]:
    calls = m.get("tool_calls")
    if isinstance(calls, list) and calls:
        return calls
    fc = m.get("function_call")
    if isinstance(fc, dict):
        return [{"id": None, "function": fc, "_legacy": True}]
    return []


def entries_from_messages(
    messages: list[Any],
    *,
    path: str | Path | None,
    where: str = "messages",
    extra: dict[str, Any] | None = None,
    origin: list[int] | None = None,
) -> list[Entry]:
    """The tool calls in ``messages`` as entries, seq 1.. in call order.

    Args:
        messages: the chat messages (dicts with ``role``).
        path: the source file, for error messages.
        where: the JSON location of ``messages`` in the file (``"[17].traj"``), used as
            the field of errors.
        extra: fields added to every entry's extras (``run`` for tau-bench).
        origin: for messages converted from another format (Anthropic, pydantic-ai, ...),
            the index in the source of each message, kept as ``message_index``.

    Raises:
        CassetteFormatError: a message or call that is not well formed, naming the field
            (``[17].traj[5].tool_calls[0].function.name``).
    """
    pairing = _Pairing(messages, path, where, extra or {}, by_id=pairing_of(messages) == BY_ID)
    pairing.origin = origin
    for i, m in enumerate(messages):
        if not _is_message(m):
            raise CassetteFormatError(
                path, None, f"{where}[{i}]", "not a chat message (an object with 'role')"
            )
        calls = _calls_of(m)
        if calls:
            pairing.calls(i, calls)
        elif m["role"] in ("tool", "function"):
            pairing.result(i, m)
    pairing.flush()
    return pairing.out


BY_ID = "id"
BY_POSITION = "position"


def pairing_of(messages: list[Any]) -> str:
    """``"id"`` when the results of ``messages`` can be paired with their calls by id (every
    call has an id, no id repeats, every tool message names one of them), else
    ``"position"`` (see the module docstring)."""
    ids: set[Any] = set()
    answers: list[Any] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        for call in _calls_of(m):
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str) or not call_id or call_id in ids:
                return BY_POSITION
            ids.add(call_id)
        if not _calls_of(m) and m.get("role") in ("tool", "function"):
            answers.append(m.get("tool_call_id"))
    return BY_ID if ids and all(a in ids for a in answers) else BY_POSITION


class _Pairing:
    """The entries of one chat log as its messages are read: the calls waiting for their
    answer (in order), and what the words of each call need."""

    def __init__(
        self,
        messages: list[Any],
        path: str | Path | None,
        where: str,
        run_extra: dict[str, Any],
        *,
        by_id: bool = False,
    ) -> None:
        self.by_id = by_id
        #: by id: each call id -> the first tool message answering it (index, message)
        self.answers: dict[Any, tuple[int, dict[str, Any]]] = {}
        if by_id:
            for k, m in reversed(list(enumerate(messages))):
                if isinstance(m, dict) and m.get("role") in ("tool", "function"):
                    self.answers[m.get("tool_call_id")] = (k, m)
        self.origin: list[int] | None = None
        self.messages = messages
        self.path = path
        self.where = where
        self.run_extra = run_extra
        self.out: list[Entry] = []
        self.pending: deque[tuple[int, int, dict[str, Any]]] = deque()
        self.contexts: dict[int, dict[str, Any]] = {}  # calling message -> the words before it
        self.seq_of_result: dict[int, int] = {}  # tool message -> the seq of the entry it answered

    def emit(
        self,
        tool: str,
        args: Any,
        fields: dict[str, Any],
        *,
        response: Any = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        self.out.append(
            Entry(
                seq=len(self.out) + 1,
                tool=tool,
                args=args,
                response=response,
                error=error,
                extra={**self.run_extra, **fields},
            )
        )

    def calls(self, i: int, calls: list[Any]) -> None:
        """Message ``i`` makes ``calls``: the calls still waiting go unanswered."""
        self.flush()
        self.contexts[i] = _context(self.messages, i, self.seq_of_result)
        for j, call in enumerate(calls):
            self.pending.append((i, j, call))
        if self.by_id:  # each call with its own answer, in call order
            while self.pending:
                item = self.pending.popleft()
                answer = self.answers.pop(item[2].get("id"), None)
                if answer is None:
                    self.pending.appendleft(item)
                    self.flush()
                else:
                    self._answer(item, *answer)

    def _parsed(self, i: int, j: int, call: Any) -> tuple[str, Any, dict[str, Any]]:
        """Call ``j`` of message ``i``: its tool, args and extra fields."""
        at = self.origin[i] if self.origin else i
        tool, args, fields = _parse_call(call, self.path, f"{self.where}[{at}]", j)
        fields["message_index"] = self.origin[i] if self.origin else i
        if self.contexts.get(i):
            fields[CONTEXT_FIELD] = self.contexts[i]
        return tool, args, fields

    def flush(self) -> None:
        """Every waiting call as an unanswered entry."""
        while self.pending:
            tool, args, fields = self._parsed(*self.pending.popleft())
            self.emit(tool, args, {**fields, "unanswered": True}, error=dict(_NO_RESULT))

    def result(self, i: int, m: dict[str, Any]) -> None:
        """Tool message ``i``: the answer of the waiting call it names (by id) or of the
        first waiting call (by position), else a result alone."""
        if self.by_id:
            if i not in self.seq_of_result:  # not taken by a call before it: alone
                if self.answers.get(m.get("tool_call_id"), (None,))[0] == i:
                    del self.answers[m.get("tool_call_id")]  # its call comes later, if at all
                self._emit_result(i, m, *self._unpaired(i, m))
            return
        if self.pending:
            self._answer(self.pending.popleft(), i, m)
        else:
            self._emit_result(i, m, *self._unpaired(i, m))

    def _answer(self, waiting: tuple[int, int, dict[str, Any]], i: int, m: dict[str, Any]) -> None:
        """The call ``waiting`` answered by tool message ``i``."""
        tool, args, fields = self._parsed(*waiting)
        answer_id = m.get("tool_call_id")
        if answer_id is not None and answer_id != fields.get("tool_call_id"):
            fields["answer_tool_call_id"] = answer_id
        self._emit_result(i, m, tool, args, fields)

    def _emit_result(
        self, i: int, m: dict[str, Any], tool: str, args: Any, fields: dict[str, Any]
    ) -> None:
        err = m.get("error")
        if err:
            error = _error_of(err)
            fields["content"] = m.get("content")
            self.emit(tool, args, fields, error=error)
        else:
            response = m["value"] if "value" in m else json_result(m.get("content"))
            self.emit(tool, args, fields, response=response)
        self.seq_of_result[i] = len(self.out)

    def _unpaired(self, i: int, m: dict[str, Any]) -> tuple[str, Any, dict[str, Any]]:
        tool = m.get("name") or m.get("function")
        if not isinstance(tool, str) or not tool:
            raise CassetteFormatError(
                self.path,
                None,
                f"{self.where}[{i}]",
                "a tool result with no call before it and no tool name ('name' or 'function')",
            )
        index = self.origin[i] if self.origin else i
        fields: dict[str, Any] = {"unpaired_result": True, "message_index": index}
        if m.get("tool_call_id") is not None:
            fields["tool_call_id"] = m["tool_call_id"]
        return tool, None, fields


def _context(messages: list[Any], i: int, seq_of_result: dict[int, int]) -> dict[str, Any]:
    """The ``context`` field of the calls of message ``i`` (``core.context``): its text and
    reasoning, and the message it answered (the one before it; for tool results, the seqs
    of every result right before it)."""
    text, reasoning = message_text(messages[i])
    out: dict[str, Any] = {}
    if text is not None:
        out["assistant"] = text
    if reasoning is not None:
        out["reasoning"] = reasoning
    if i == 0:
        return out
    before = messages[i - 1]
    role = before.get("role")
    if role in ("tool", "function"):
        seqs = []
        k = i - 1
        while (
            k >= 0 and _is_message(messages[k]) and messages[k].get("role") in ("tool", "function")
        ):
            if k in seq_of_result:
                seqs.append(seq_of_result[k])
            k -= 1
        out["answered"] = {"role": "tool", "seqs": sorted(seqs)}
    elif role == "system":  # the prompt: long, and the same for every run; named only
        out["answered"] = {"role": "system"}
    else:
        said, _ = message_text(before)
        out["answered"] = {"role": role, "text": said or ""}
    return out


def chat_outcome(messages: list[Any]) -> RunOutcome:
    """What a chat log says about how its run ended: ``steps`` (the assistant messages),
    ``final_answer`` (the text of the last assistant message, when that message makes no
    tool call and none comes after it), and nothing about a reward or a limit (a bare log
    does not say: ``limit_reached`` stays ``None``). An importer that knows more
    (tau-bench, inspect) adds it."""
    steps = 0
    final: str | None = None
    for m in messages:
        if not _is_message(m):
            continue
        if m["role"] == "assistant":
            steps += 1
            final = None if _calls_of(m) else message_text(m)[0]
        elif _calls_of(m):
            final = None
    return RunOutcome(final_answer=final, steps=steps)


def _parse_call(
    call: Any, path: str | Path | None, where: str, j: int
) -> tuple[str, Any, dict[str, Any]]:
    """``(tool, args, extra fields)`` of one tool call."""
    legacy = isinstance(call, dict) and call.get("_legacy")
    field = f"{where}.function_call" if legacy else f"{where}.tool_calls[{j}]"
    if not isinstance(call, dict):
        raise CassetteFormatError(path, None, field, "a tool call must be an object")
    fn = call.get("function")
    if isinstance(fn, dict):  # OpenAI: {"function": {"name", "arguments"}}
        name, raw, name_field = fn.get("name"), fn.get("arguments"), f"{field}.function.name"
        args_field = f"{field}.function.arguments"
    elif isinstance(fn, str):  # inspect_ai: {"function": "name", "arguments": {...}}
        name, raw, name_field = fn, call.get("arguments"), f"{field}.function"
        args_field = f"{field}.arguments"
    else:
        name, raw, name_field = call.get("name"), call.get("arguments"), f"{field}.name"
        args_field = f"{field}.arguments"
    if not isinstance(name, str) or not name:
        raise CassetteFormatError(
            path, None, name_field, f"expected a non-empty tool name, got {name!r:.40}"
        )
    if isinstance(call.get("source_field"), str):  # a converted call: its field in the source
        args_field = call["source_field"]
    fields: dict[str, Any] = {}
    if not legacy:
        fields["tool_call_id"] = call.get("id")
    args, arg_fields = parse_arguments(raw, args_field)
    fields.update(arg_fields)
    if isinstance(call.get("invalid_tool_call_error"), str):  # LangChain's own verdict
        fields.setdefault("arguments_error", f"{args_field}: {call['invalid_tool_call_error']}")
    return name, args, fields


def parse_arguments(raw: Any, args_field: str) -> tuple[Any, dict[str, Any]]:
    """``(args, extra fields)`` of a call's arguments as the model sent them: a JSON text
    is parsed, ``None`` or blank text is ``{}``, any other value is kept. Text that is not
    valid JSON (the model's own mistake: a stray newline, a truncated string) is kept as
    the args, and ``arguments_error`` names ``args_field`` and the parse error; ``check``
    reports it (``malformed_args``) and ``diff`` names it as the cause of a divergence."""
    if raw is None:
        return {}, {}
    if not isinstance(raw, str):
        return raw, {}
    if raw.strip() == "":
        return {}, {"arguments_text": raw}
    try:
        return loads_json(raw), {}
    except ValueError as exc:
        # kept as the agent sent it; the key is the text itself
        return raw, {"arguments_error": f"{args_field}: not valid JSON ({exc})"}


#: fields of the cassette's ``error`` object an importer may give as they are (format.md,
#: "The error field"): a class's ``module`` (a str) and its JSON ``attrs`` (an object)
_ERROR_FIELDS = {"module": str, "attrs": dict}


def _error_of(err: Any) -> dict[str, Any]:
    if isinstance(err, dict):
        out: dict[str, Any] = {
            "type": str(err.get("type", "Error")),
            "message": str(err.get("message", "")),
        }
        for name, kind in _ERROR_FIELDS.items():
            if isinstance(err.get(name), kind):
                out[name] = err[name]
        rest = {k: v for k, v in err.items() if k not in ("type", "message", *out)}
        if rest:
            out["details"] = rest
        return out
    return {"type": "Error", "message": str(err)}


def read(doc: Any, path: Path) -> Imported:
    """One chat log (see ``looks_like``) as an ``Imported`` with a single run.

    Raises:
        CassetteFormatError: not a chat log (the reason from ``looks_like``), or a bad
            message or call.
    """
    why = looks_like(doc)
    if why is not None:
        raise CassetteFormatError(path, None, None, why)
    if isinstance(doc, dict):
        messages, where = doc["messages"], "messages"
        meta = {k: v for k, v in doc.items() if k != "messages"}
    else:
        messages, where, meta = doc, "", {}
    entries = entries_from_messages(messages, path=path, where=where)
    run = RunInfo(task=None, trial=None, reward=None, calls=len(entries))
    outcome = chat_outcome(messages)
    attach_outcome(entries, outcome)

    def build(index: int) -> tuple[list[Entry], dict[str, Any]]:
        return entries, {
            "messages": len(messages),
            "pairing": pairing_of(messages),
            "run_outcome": outcome.to_json(),
            **({"log": meta} if meta else {}),
        }

    return Imported(NAME, path, [run], build)


def read_jsonl(data: bytes, path: Path) -> Imported:
    """Chat messages as JSON Lines (one message per line).

    Raises:
        CassetteFormatError: a line that is not JSON (naming the line), or see ``read``.
    """
    messages = []
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            messages.append(loads_json(raw))
        except ValueError as exc:
            reason = f"not valid JSON: {json_error_text(exc)}"
            raise CassetteFormatError(path, lineno, None, reason) from None
    return read(messages, path)


def imported_from_messages(
    name: str,
    path: Path,
    messages: list[dict[str, Any]],
    origin: list[int],
    meta: dict[str, Any],
    outcome: RunOutcome | None = None,
) -> Imported:
    """One run of another message format, already converted to chat ``messages`` (each
    from source message ``origin[i]``), as an ``Imported`` named ``name``: the same
    entries, pairing and words as a chat log; ``outcome`` when the format knows more than
    ``chat_outcome`` does; ``meta`` joins the run's metadata."""
    entries = entries_from_messages(messages, path=path, where="", origin=origin)
    outcome = outcome or chat_outcome(messages)
    attach_outcome(entries, outcome)
    run = RunInfo(task=None, trial=None, reward=outcome.reward, calls=len(entries))
    run_meta = {
        "messages": len(set(origin)),
        "pairing": pairing_of(messages),
        "run_outcome": outcome.to_json(),
        **meta,
    }
    return Imported(name, path, [run], lambda index: (entries, run_meta))
