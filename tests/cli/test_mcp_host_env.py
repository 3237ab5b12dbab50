"""An MCP host that starts ``cassette-tui mcp record`` with the MCP SDK's stdio client
passes the server only a few of its environment variables (``HOME``, ``PATH``...): a
``CASSETTE_PATH`` exported in the host never arrives, and the error names the variable and
how to pass it (``env=``). With ``env=`` it records. ``mcp replay`` names the recorded
calls it left unused, and ``--strict`` fails on them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.mcp_session import CLI, HANDSHAKE, tool_call, toy_server

pytest.importorskip("mcp", reason="the MCP SDK (the [mcp] extra) is not installed")


def start_with_sdk_client(args: list[str], errlog: Path, env: dict[str, str] | None) -> Any:
    """Start ``CLI + args`` as the SDK's stdio client does, list the tools, return them
    (``None`` when the server went away)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], *args], env=env)
    out: dict[str, Any] = {"tools": None}

    async def main() -> None:
        with anyio.fail_after(60), errlog.open("w") as log:
            try:
                async with (
                    stdio_client(params, errlog=log) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    out["tools"] = [t.name for t in (await session.list_tools()).tools]
            except Exception:  # noqa: BLE001 - the server exited: its stderr says why
                return

    anyio.run(main)
    return out["tools"]


def test_cassette_path_from_the_hosts_shell_never_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "git.jsonl"
    monkeypatch.setenv("CASSETTE_PATH", str(cassette))  # the host's own environment
    errlog = tmp_path / "server.stderr"
    tools = start_with_sdk_client(["mcp", "record", "--", *toy_server()], errlog, env=None)
    assert tools is None and not cassette.exists()
    said = errlog.read_text()
    assert (
        "cassette-tui mcp record: no cassette to record to: pass -o FILE or set CASSETTE_PATH"
        in said
    )
    assert "passes it only HOME, LOGNAME, PATH, SHELL, TERM and USER" in said
    assert 'env={"CASSETTE_PATH": ' in said
    # passed in env=, as the message says, it records
    env = {"CASSETTE_PATH": str(cassette), "PATH": os.environ.get("PATH", "")}
    tools = start_with_sdk_client(["mcp", "record", "--", *toy_server()], errlog, env=env)
    assert tools and "echo" in tools
    assert cassette.exists()


def test_mcp_replay_without_a_cassette_says_how_to_pass_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    done = subprocess.run(
        [*CLI, "mcp", "replay"], capture_output=True, text=True, env=env, timeout=60,
        check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no cassette to replay: pass CASSETTE or set CASSETTE_PATH" in done.stderr
    assert "env=" in done.stderr


def test_mcp_replay_names_unused_recordings_and_strict_fails(tmp_path: Path) -> None:
    cassette = tmp_path / "toy.jsonl"
    lines = [
        json.dumps({"seq": 1, "tool": "echo", "args": {"text": "hi"},
                    "response": {"content": [{"type": "text", "text": "hi"}], "isError": False}}),
        json.dumps({"seq": 2, "tool": "echo", "args": {"text": "never asked"},
                    "response": {"content": [{"type": "text", "text": "x"}], "isError": False}}),
    ]  # fmt: skip
    cassette.write_text("\n".join(lines) + "\n")
    messages = [*HANDSHAKE, tool_call(2, "echo", {"text": "hi"})]
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    for strict, status in ((False, 0), (True, 1)):
        done = subprocess.run(
            [*CLI, "mcp", "replay", str(cassette), *(["--strict"] if strict else [])],
            input=stdin, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == status, done.stderr
        tail = " (--strict: the replay fails)" if strict else ""
        assert f"cassette-tui mcp replay: unused entries: seq 2{tail}" in done.stderr
