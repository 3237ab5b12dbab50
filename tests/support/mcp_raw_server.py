"""An MCP server that speaks the stdio transport by hand, for the ``mcp record`` tests of
what the SDK's servers never send: a banner line, batch arrays, ids ``null`` and ``1.5``,
invalid UTF-8, answers out of order, server-to-host requests, dying mid-call.

Run as ``python mcp_raw_server.py``. It prints ``raw server ready`` (not JSON-RPC) first,
then answers each request line (a batch array is answered with an array):

- ``initialize``, ``tools/list``, ``resources/list``, ``resources/read``, ``prompts/list``,
  ``prompts/get``: fixed results;
- ``tools/call``, by tool name: ``echo`` answers its arguments as a text block; ``bad_utf8``
  answers text holding the byte 0xFF; ``hold`` answers only once ``release`` is called;
  ``notify`` sends ``notifications/tools/list_changed`` and a log message before its answer;
  ``ask`` sends the host a ``roots/list`` request and answers with the host's answer;
  ``chatty`` sends ``{"notes": N}`` log notifications before its answer;
  ``announce_after`` answers, then sends ``notifications/tools/list_changed`` (no request
  in flight);
  ``die`` exits at once with status 3; a call whose params are not an object is never
  answered;
- anything else: the JSON-RPC error -32601.
"""

from __future__ import annotations

import json
import sys
from typing import Any

out = sys.stdout.buffer
held: list[dict[str, Any]] = []
asked: dict[str, Any] = {}


def send(doc: Any) -> None:
    out.write(json.dumps(doc).encode() + b"\n")
    out.flush()


def result(req: dict[str, Any], value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req.get("id"), "result": value}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


FIXED = {
    "initialize": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}},
        "serverInfo": {"name": "raw", "version": "1"},
    },
    "tools/list": {
        "tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {
                "name": "clock",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            },
        ]
    },
    "resources/list": {"resources": [{"uri": "mem://a", "name": "a"}]},
    "resources/read": {"contents": [{"uri": "mem://a", "text": "alpha"}]},
    "prompts/list": {"prompts": [{"name": "greet"}]},
    "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
}


def answer(req: dict[str, Any]) -> dict[str, Any] | None:
    method = req.get("method")
    if method in FIXED:
        return result(req, FIXED[method])
    if method != "tools/call":
        return {"jsonrpc": "2.0", "id": req.get("id"), "error": {"code": -32601, "message": "no"}}
    if not isinstance(req.get("params"), dict):  # bad params: left unanswered
        held.append(req)
        return None
    name = req["params"]["name"]
    args = req["params"].get("arguments", {})
    if name == "die":
        sys.exit(3)
    if name == "hold":
        held.append(req)
        return None
    if name == "release":
        for waiting in held:
            send(result(waiting, text("held")))
        held.clear()
    if name == "notify":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "tools changed"},
            }
        )
    if name == "chatty":
        for n in range(args.get("notes", 0)):
            note = {"level": "info", "data": f"step {n}"}
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": note})
    if name == "ask":
        asked["call"] = req
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list", "params": {}})
        return None
    if name == "announce_after":  # the answer first, then a notification between calls
        send(result(req, text("announced")))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return None
    if name == "bad_utf8":
        line = json.dumps(result(req, text("caf@"))).encode().replace(b"@", b"\xff")
        out.write(line + b"\n")
        out.flush()
        return None
    return result(req, text(json.dumps(args, sort_keys=True)))


def main() -> None:
    send_line = b"raw server ready\n"
    out.write(send_line)
    out.flush()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        doc = json.loads(line)
        if isinstance(doc, list):
            answers = [a for a in map(answer, doc) if a is not None]
            if answers:
                send(answers)
            continue
        if "method" not in doc:  # the host's answer to our request
            if doc.get("id") == "srv-1" and "call" in asked:
                send(result(asked.pop("call"), text(json.dumps(doc.get("result")))))
            continue
        if "id" not in doc:
            continue
        reply = answer(doc)
        if reply is not None:
            send(reply)


if __name__ == "__main__":
    main()
