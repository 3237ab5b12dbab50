"""A tiny MCP agent for the gate tests: an MCP client (official SDK) that asks
``mcp-server-time`` for the time in Paris and passes when it got a Paris time.

It obeys the environment contract the way an MCP host would, by choosing which server
command to launch: ``CASSETTE_MODE=record`` launches ``cassette-tui mcp record --
mcp-server-time``, ``replay`` launches ``cassette-tui mcp replay`` (both read
``CASSETTE_PATH``; replay writes its report to ``CASSETTE_REPORT``), ``live`` the server.

``--own-clock RUN``: the verdict also depends on something outside the tool layer (here the
parity of the run number, as a date in a prompt or a sampling seed would): odd runs fail.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

CLI = [sys.executable, "-m", "cassette_tui.tui.cli"]
SERVER = [str(Path(sys.executable).parent / "mcp-server-time"), "--local-timezone", "UTC"]


def server_command() -> list[str]:
    """The server to launch; the cassette and the report reach ``mcp record`` / ``mcp
    replay`` through ``CASSETTE_PATH`` and ``CASSETTE_REPORT`` in its environment."""
    mode = os.environ.get("CASSETTE_MODE", "live")
    if mode == "record":
        return [*CLI, "mcp", "record", "--", *SERVER]
    if mode == "replay":
        return [*CLI, "mcp", "replay"]
    return SERVER


async def ask() -> str:
    command = server_command()
    # the SDK passes only a few variables to a server: hand over the CASSETTE_* ones
    env = {k: v for k, v in os.environ.items() if k.startswith("CASSETTE_")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with anyio.fail_after(60):
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("get_current_time", {"timezone": "Europe/Paris"})
    return str((result.structured_content or {}).get("datetime", ""))


def main() -> int:
    answer = anyio.run(ask)
    ok = answer.endswith(("+01:00", "+02:00"))
    if "--own-clock" in sys.argv:
        run = int(sys.argv[sys.argv.index("--own-clock") + 1])
        ok = ok and run % 2 == 0
    print(f"Paris: {answer} -> {'pass' if ok else 'fail'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
