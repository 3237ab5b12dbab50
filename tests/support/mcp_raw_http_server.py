"""A Streamable HTTP MCP server written by hand (starlette, one JSON answer a POST), for
the ``mcp record --url`` tests of what the SDK's servers never send. Run as ``python
mcp_raw_http_server.py PORT``; serves ``/mcp`` on ``127.0.0.1:PORT``:

- a body that is not JSON: ``400`` with the JSON-RPC parse error;
- a batch array: an array of answers; notifications alone: ``202``;
- ``initialize``: a fixed result; ``tools/call`` by tool name: ``echo`` answers its
  arguments as text; ``fill`` answers ``"y" * size`` as text (no escape: a big answer
  read as spans); ``slow`` the same after 1 s (first creating
  the file its ``started`` argument names, if any); ``bad_utf8`` text holding the byte
  0xFF; ``die`` ends the process at once (status 3), answering nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw-http", "version": "1"},
}


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


async def answer(req: Any) -> dict[str, Any] | None:
    if not isinstance(req, dict) or "id" not in req:
        return None
    method = req.get("method")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": req["id"], "result": INIT}
    if method != "tools/call":
        return {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no"}}
    name = req["params"]["name"]
    args = req["params"].get("arguments", {})
    if name == "die":
        os._exit(3)
    if name == "fill":
        return {"jsonrpc": "2.0", "id": req["id"], "result": text("y" * int(args["size"]))}
    if name == "slow":
        if "started" in args:  # a file the test waits for: the call is in flight
            with open(args["started"], "w", encoding="utf-8"):
                pass
        await asyncio.sleep(1)
    return {"jsonrpc": "2.0", "id": req["id"], "result": text(json.dumps(args, sort_keys=True))}


async def endpoint(request: Request) -> Response:
    body = await request.body()
    try:
        doc = json.loads(body)
    except ValueError:
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}}
        return Response(json.dumps(error), status_code=400, media_type="application/json")
    if isinstance(doc, list):
        answers = [a for a in [await answer(d) for d in doc] if a is not None]
        if not answers:
            return Response(status_code=202)
        return Response(json.dumps(answers), media_type="application/json")
    if isinstance(doc, dict) and doc.get("params", {}).get("name") == "bad_utf8":
        data = json.dumps(await answer(doc)).encode().replace(b"@", b"\xff")
        return Response(data, media_type="application/json")
    reply = await answer(doc)
    if reply is None:
        return Response(status_code=202)
    return Response(json.dumps(reply), media_type="application/json")


app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
