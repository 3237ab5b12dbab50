"""``cassette_tui.core.mcp.host.server_params``: an SDK host records and replays a real
server (mcp-server-time) by changing one line, with ``CASSETTE_*`` passed to the proxy
through ``env`` (the SDK's stdio client passes only a few variables on) (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from cassette_tui.core.mcp.host import server_params
from support.mcp_session import TIMEOUT, installed


def host(mode: str | None, path: Path | None = None) -> list[Any]:
    """The README recipe's host: two calls to the server through ``server_params``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    out: list[Any] = []

    async def main() -> None:
        server = StdioServerParameters(
            command=installed("mcp-server-time"), args=["--local-timezone", "UTC"]
        )
        params = server_params(server, mode=mode, path=path)
        with anyio.fail_after(TIMEOUT):
            async with Client(params, read_timeout_seconds=TIMEOUT) as client:
                for zone in ("Europe/Paris", "Asia/Tokyo"):
                    result = await client.call_tool("get_current_time", {"timezone": zone})
                    out.append(result.model_dump(mode="json", by_alias=True))

    anyio.run(main)
    return out


def test_record_then_replay_through_the_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "time.jsonl"
    report = tmp_path / "report.json"
    # the contract's variables: the helper carries CASSETTE_REPORT through env
    monkeypatch.setenv("CASSETTE_REPORT", str(report))
    recorded = host("record", run)
    assert [e["tool"] for e in map(json.loads, run.read_text().splitlines())] == [
        "get_current_time"
    ] * 2
    assert json.loads(report.read_text())["mode"] == "record"
    # replay: mode and path from the environment, as under `cassette-tui replay`
    monkeypatch.setenv("CASSETTE_MODE", "replay")
    monkeypatch.setenv("CASSETTE_PATH", str(run))
    assert host(None) == recorded
    doc = json.loads(report.read_text())
    assert doc["mode"] == "replay" and doc["misses"] == [] and doc["unused_seqs"] == []


def test_live_leaves_the_parameters_alone_and_bad_modes_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp.client.stdio import StdioServerParameters

    monkeypatch.delenv("CASSETTE_MODE", raising=False)
    monkeypatch.delenv("CASSETTE_PATH", raising=False)
    params = StdioServerParameters(command="mcp-server-time")
    assert server_params(params) is params
    with pytest.raises(ValueError, match="needs a cassette"):
        server_params(params, mode="record")
    with pytest.raises(ValueError, match="unknown mode 'replya'"):
        server_params(params, mode="replya", path="x.jsonl")


def readme_recipe() -> str:
    """The README's SDK host block (the one that calls ``server_params``)."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```python\n")[1:]
    (recipe,) = [b.split("```")[0] for b in blocks if "server_params(server)" in b]
    return recipe


def test_the_readme_recipe_records_and_replays(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(readme_recipe())
    run = tmp_path / "runs" / "time.jsonl"
    # mcp-server-time on PATH, as the recipe names it
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env |= {"CASSETTE_MODE": "record", "CASSETTE_PATH": str(run)}
    recorded = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert recorded.returncode == 0, recorded.stderr
    assert '"timezone": "Europe/Paris"' in recorded.stdout
    assert run.exists() and run.with_name("time.mcp.json").exists()
    env["CASSETTE_MODE"] = "replay"
    env["PATH"] = "/usr/bin:/bin"  # the real server is out of reach: the cassette answers
    replayed = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
