"""Resources and prompts through ``mcp record`` / ``mcp replay`` with the SDK's client and
an SDK server (``support/mcp_toy_server.py``): ``resources/list``, ``resources/read``,
``prompts/list`` and ``prompts/get`` replay offline as they were answered live; a read of a
resource that was never read is a miss naming what was (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from support.mcp_session import TIMEOUT, record_cmd, replay_cmd, toy_server


def session(command: list[str], uris: list[str]) -> dict[str, Any]:
    """List templates and prompts, read ``uris``, get the prompt; every answer as JSON
    (a failed read as ``{"error": {"code", "message"}}``)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError

    out: dict[str, Any] = {"reads": []}

    async def main() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:])
        with anyio.fail_after(TIMEOUT):
            async with Client(params, read_timeout_seconds=TIMEOUT) as client:
                templates = await client.list_resource_templates()
                out["templates"] = templates.model_dump(mode="json")["resource_templates"]
                prompts = await client.list_prompts()
                out["prompts"] = prompts.model_dump(mode="json")["prompts"]
                for uri in uris:
                    try:
                        read = await client.read_resource(uri)
                    except MCPError as exc:
                        out["reads"].append(
                            {"error": {"code": exc.error.code, "message": exc.error.message}}
                        )
                    else:
                        out["reads"].append(read.model_dump(mode="json")["contents"])
                got = await client.get_prompt("greet", {"who": "Ada"})
                out["prompt"] = got.model_dump(mode="json")["messages"]

    anyio.run(main)
    return out


def test_resources_and_prompts_replay_as_answered_live(tmp_path: Path) -> None:
    run = tmp_path / "toy.jsonl"
    uris = ["toy://notes/a", "toy://notes/b", "toy://notes/a"]
    live = session(record_cmd(run, toy_server()), uris)
    assert live["reads"][0][0]["text"] == "note a: retry budget"
    assert live["prompt"][0]["content"]["text"] == "Hello Ada, be brief."
    methods = [
        x["method"] for x in json.loads((tmp_path / "toy.mcp.json").read_text())["exchanges"]
    ]
    assert {"resources/templates/list", "prompts/list", "resources/read", "prompts/get"} <= set(
        methods
    )

    report = tmp_path / "report.json"
    replayed = session(replay_cmd(run, "--report", str(report)), uris)
    assert replayed == live
    assert json.loads(report.read_text())["mcp"]["not_recorded"] == []

    other = session(replay_cmd(run, "--report", str(report)), ["toy://notes/c"])
    (miss,) = other["reads"]
    assert miss["error"]["code"] == -32010
    assert "toy://notes/a" in miss["error"]["message"]
    not_recorded = json.loads(report.read_text())["mcp"]["not_recorded"]
    assert not_recorded == [{"method": "resources/read", "params": {"uri": "toy://notes/c"}}]
