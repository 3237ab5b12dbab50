"""A small MCP server for the ``mcp record``/``mcp replay`` tests, built on the official
SDK's ``MCPServer`` and run as a script over stdio (``python mcp_toy_server.py``).

Tools:
- ``echo(text)``: ``{"echo": text}`` (structured content plus its JSON text);
- ``fail(reason)``: a tool failure, answered as an ``isError`` result;
- ``reject(reason)``: a JSON-RPC error (code -32001) instead of a result;
- ``progress(steps)``: sends ``steps`` progress notifications, then ``{"steps": steps}``;
- ``counter()``: 1, 2, 3... on successive calls (the same key answering differently);
- ``die(status)``: the process exits at once with ``status``, answering nothing;
- ``stall(seconds)``: answers after ``seconds``.

For ``verify`` (the tools' annotations and a world that changes between runs):
- ``lookup(key)``: annotated ``readOnlyHint``; the value of ``key`` in the JSON file
  ``--data PATH`` names (``{"key", "value"}``; ``value`` null when absent or no file);
- ``append_note(text)``: annotated ``readOnlyHint: false`` (a write): appends ``text`` to
  the ``--data`` file's ``notes`` list;
- ``--log PATH``: every call of these two (and of ``counter``) appends a line
  ``{"tool", "args"}`` to PATH, so a test can say which calls the server saw.

A resource template ``toy://notes/{name}`` and a prompt ``greet(who)``.

``--http PORT`` serves Streamable HTTP on ``127.0.0.1:PORT`` (``/mcp``) instead of stdio.
``--ignore-sigterm`` makes the process ignore SIGTERM and stdin EOF (only SIGKILL ends it),
for the shutdown tests; ``--pid-file PATH`` writes the process id there.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations

server = MCPServer("toy", version="1.0")
_count = {"n": 0}


@server.tool()
def echo(text: str) -> dict[str, str]:
    """Echo the text back."""
    return {"echo": text}


@server.tool()
def fail(reason: str) -> str:
    """Fail as a tool (an isError result)."""
    raise ToolError(f"failed: {reason}")


@server.tool()
def reject(reason: str) -> str:
    """Fail as a protocol error (a JSON-RPC error)."""
    raise MCPError(code=-32001, message=f"rejected: {reason}", data={"reason": reason})


@server.tool()
async def progress(steps: int, ctx: Context) -> dict[str, int]:
    """Report progress ``steps`` times."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return {"steps": steps}


def _option(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def _seen(tool: str, args: dict[str, object]) -> None:
    """One line ``{"tool", "args"}`` appended to ``--log PATH`` (when given)."""
    log = _option("--log")
    if log is not None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": tool, "args": args}) + "\n")


def _data() -> dict[str, object]:
    path = _option("--data")
    if path is None or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        loaded = json.load(fh)
    return loaded if isinstance(loaded, dict) else {}


@server.tool()
def counter() -> int:
    """1, 2, 3... on successive calls."""
    _seen("counter", {})
    _count["n"] += 1
    return _count["n"]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(key: str) -> dict[str, object]:
    """The value of ``key`` in the data file (read only)."""
    _seen("lookup", {"key": key})
    return {"key": key, "value": _data().get(key)}


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def append_note(text: str) -> dict[str, int]:
    """Append a note to the data file (a write)."""
    _seen("append_note", {"text": text})
    data = _data()
    notes = data.setdefault("notes", [])
    assert isinstance(notes, list)
    notes.append(text)
    path = _option("--data")
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
    return {"notes": len(notes)}


@server.tool()
def die(status: int) -> str:
    """Exit the process at once."""
    sys.stdout.flush()
    os._exit(status)


@server.tool()
async def stall(seconds: float) -> str:
    """Answer after a while."""
    await anyio.sleep(seconds)
    return "done"


@server.resource("toy://notes/{name}")
def note(name: str) -> str:
    """A note by name (a resource template)."""
    return f"note {name}: retry budget"


@server.prompt()
def greet(who: str) -> str:
    """A prompt that greets ``who``."""
    return f"Hello {who}, be brief."


if __name__ == "__main__":
    if "--pid-file" in sys.argv:
        with open(sys.argv[sys.argv.index("--pid-file") + 1], "w") as fh:
            fh.write(str(os.getpid()))
    if "--ignore-sigterm" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # keep the process alive past stdin EOF until SIGKILL
        threading.Thread(target=lambda: threading.Event().wait(), daemon=False).start()
    if "--http" in sys.argv:  # Streamable HTTP on 127.0.0.1:PORT
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run("stdio")
