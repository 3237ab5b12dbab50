"""An MCP host built on the SDK's ``ClientSession`` for the MCP user's walk: the agent of
a refund desk that talks to ``mcp_shop_server.py`` over stdio or Streamable HTTP.

    python mcp_shop_host.py --transcript OUT.json --stdio "python mcp_shop_server.py"
    python mcp_shop_host.py --transcript OUT.json --url http://127.0.0.1:P/mcp

Over stdio the server parameters go through ``cassette_tui.core.mcp.host.server_params``
(the README's recipe), so ``CASSETTE_MODE``/``CASSETTE_PATH`` put the server behind ``mcp
record`` or the cassette in its place; over HTTP ``server_url`` does the same for a URL.

The host answers sampling with a fixed text and elicitation with "confirm", re-lists the
tools when the server says they changed, and refunds 500 cents. It exits 0 when the
refund went through, 1 when the tool refused it (a server whose contract changed).
``--transcript`` receives every JSON-RPC message the host's session read, in order, as
the SDK parsed it (ids included), plus what the host made of each call: what it saw, to
compare a live run with its replay.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
from cassette_tui.core.mcp.host import server_params, server_url
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

TIMEOUT = 60.0


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def agent(read: Any, write: Any, seen: list[Any], again: bool) -> types.CallToolResult:
    """The refund desk's steps; returns the refund's result."""
    changed = anyio.Event()

    async def sampling(_ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        seen.append({"sampling": dump(params)})
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Order A-1 is 9 days late."),
            model="desk-model",
        )

    async def elicitation(_ctx: Any, params: types.ElicitRequestParams) -> Any:
        seen.append({"elicitation": dump(params)})
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def logging(params: types.LoggingMessageNotificationParams) -> None:
        seen.append({"log": dump(params)})

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append({"progress": [value, total, message]})

    async with ClientSession(
        read,
        write,
        read_timeout_seconds=TIMEOUT,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        logging_callback=logging,
        message_handler=on_message,
    ) as session:
        init = await session.initialize()
        seen.append({"server": dump(init.server_info)})
        seen.append({"tools": [t.name for t in (await session.list_tools()).tools]})
        seen.append({"resources": dump(await session.list_resources())})
        seen.append({"read": dump(await session.read_resource("shop://policy"))})
        seen.append({"read": dump(await session.read_resource("shop://orders/A-1"))})
        seen.append({"read": dump(await session.read_resource("shop://config"))})
        seen.append({"prompts": dump(await session.list_prompts())})
        seen.append({"prompt": dump(await session.get_prompt("apology", {"customer": "Ana"}))})
        # a read-only tool asked twice, as an agent re-checks before acting
        for _ in range(2):
            seen.append({"call": dump(await session.call_tool("get_order", {"order_id": "A-1"}))})
        result = await session.call_tool("sync_catalog", {}, progress_callback=progress)
        seen.append({"call": dump(result)})
        # the catalogue changed: the host waits for the server's word (over HTTP it comes on
        # the GET stream, racing the call's answer), then lists the tools again
        with anyio.move_on_after(10):
            await changed.wait()
        if changed.is_set():
            seen.append({"tools again": [t.name for t in (await session.list_tools()).tools]})
        seen.append({"call": dump(await session.call_tool("summarize", {"order_id": "A-1"}))})
        confirm = await session.call_tool("confirm_cancel", {"order_id": "A-1"})
        seen.append({"call": dump(confirm)})
        refund = await session.call_tool("refund", {"order_id": "A-1", "amount_cents": 500})
        seen.append({"call": dump(refund)})
        for _ in range(2):  # idempotent: the desk sets the status again after a retry
            status = {"order_id": "A-1", "status": "refunded"}
            seen.append({"call": dump(await session.call_tool("set_status", status))})
        if again:  # past the recording: read-only and idempotent calls once more
            seen.append({"call": dump(await session.call_tool("get_order", {"order_id": "A-1"}))})
            status = {"order_id": "A-1", "status": "refunded"}
            seen.append({"call": dump(await session.call_tool("set_status", status))})
        return refund


async def spy(read: Any, messages: list[Any]) -> Any:
    """A read stream that notes every message the session reads, then hands it on."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

    async def pump() -> None:
        # the transport closes its stream when the host leaves: the pump ends there
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with send:
                async for item in read:
                    if isinstance(item, SessionMessage):
                        messages.append(dump(item.message))
                    else:
                        messages.append({"exception": repr(item)})
                    await send.send(item)

    return receive, pump


async def main(args: argparse.Namespace) -> int:
    seen: list[Any] = []
    messages: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        if args.stdio:
            command = shlex.split(args.stdio)
            params = server_params(StdioServerParameters(command=command[0], args=command[1:]))
            transport: Any = stdio_client(params)
        else:
            transport = None
        async with anyio.create_task_group() as tg:
            if transport is not None:
                async with transport as (read, write):
                    receive, pump = await spy(read, messages)
                    tg.start_soon(pump)
                    refund = await agent(receive, write, seen, args.again)
            else:
                with server_url(args.url) as url:
                    async with streamable_http_client(url) as (read, write):
                        receive, pump = await spy(read, messages)
                        tg.start_soon(pump)
                        refund = await agent(receive, write, seen, args.again)
    if args.transcript:
        Path(args.transcript).write_text(json.dumps({"seen": seen, "messages": messages}))
    if refund.is_error:
        print(f"refund refused: {json.dumps(dump(refund))}")
        return 1
    print("refund went through")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", help="the server's command line")
    parser.add_argument("--url", help="the server's Streamable HTTP URL")
    parser.add_argument("--transcript")
    parser.add_argument("--again", action="store_true", help="re-check the order at the end")
    sys.exit(anyio.run(main, parser.parse_args()))
