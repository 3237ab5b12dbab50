"""An MCP SDK server over Streamable HTTP with resumability (an in-memory ``EventStore``),
for the ``mcp record --url`` tests of what a resumed stream and the standalone GET stream
carry. Run as ``python mcp_http_resume_server.py PORT``; it serves ``/mcp`` on
``127.0.0.1:PORT`` with a retry interval of 50 ms. Tools:

- ``long_task(steps)``: logs ``step i`` for each step, and halfway through closes the
  call's SSE stream (``ctx.close_sse_stream()``): the client reconnects with
  ``Last-Event-ID`` and the store replays what it missed, the answer last;
- ``announce()``: sends ``notifications/tools/list_changed`` and
  ``notifications/resources/updated``, which go on the standalone GET stream (they name
  no request), then answers;
- ``announce_across_drop()``: the same across a drop of the GET stream (see its doc).
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore


class MemoryEventStore(EventStore):
    """Every event of every stream, in order; ids ``1``, ``2``, ... across streams."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(len(self.events) + 1)
        self.events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> Any:
        index = next((i for i, e in enumerate(self.events) if e[1] == last_event_id), None)
        if index is None:
            return None
        stream = self.events[index][0]
        for stream_id, event_id, message in self.events[index + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


server = MCPServer("resume", version="1")


@server.tool()
async def long_task(steps: int, ctx: Context) -> str:
    """Log each step; drop the stream halfway (the client resumes it)."""
    for i in range(steps):
        await ctx.session.send_log_message("info", f"step {i}", related_request_id=ctx.request_id)
        if i == steps // 2:
            await ctx.close_sse_stream()
    return f"done {steps}"


@server.tool()
async def announce(ctx: Context) -> str:
    """Notifications that name no request: the standalone GET stream carries them."""
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_updated("mem://news")
    return "announced"


@server.tool()
async def announce_across_drop(ctx: Context) -> str:
    """A notification on the GET stream, the stream closed (the client reconnects with
    ``Last-Event-ID``), then another, sent while no GET stream is open: the store keeps
    it and replays it on the resumed stream."""
    await ctx.session.send_tool_list_changed()
    await ctx.close_standalone_sse_stream()
    await ctx.session.send_resource_updated("mem://after-drop")
    return "announced across a drop"


if __name__ == "__main__":
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        event_store=MemoryEventStore(),
        retry_interval=50,
    )
