"""A 2026-07-28 MCP host (the SDK's ``Client``) that listens for tool-list changes
(``subscriptions/listen``, SEP-2575) while it calls ``sync_catalog`` of
``mcp_shop_server.py``; prints the events it got and the call's result as JSON.

    python mcp_listen_host.py --stdio SERVER_SCRIPT     (through ``server_params``)
    python mcp_listen_host.py --url URL                 (through ``server_url``)
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from cassette_tui.core.mcp.host import server_params, server_url
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TIMEOUT = 60.0


async def listen(target: Any) -> dict[str, Any]:
    events: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with (
            Client(target, read_timeout_seconds=TIMEOUT) as client,
            client.listen(tools_list_changed=True) as sub,
        ):
            result = await client.call_tool("sync_catalog", {})
            async for event in sub:  # the change the call announced
                events.append(type(event).__name__)
                break
    return {"events": events, "result": result.structured_content}


def main() -> int:
    how, where = sys.argv[1], sys.argv[2]
    if how == "--stdio":
        params = server_params(StdioServerParameters(command=sys.executable, args=[where]))
        out = anyio.run(listen, params)
    else:
        with server_url(where) as url:
            out = anyio.run(listen, url)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
