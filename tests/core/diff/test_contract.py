"""The ``contract_change`` finding: two ``mcp record`` runs whose server-facts sidecars
differ (serverInfo, tools added, removed, renamed; a description, a schema, annotations
changed) are diagnosed with the change first, and a failed call of a changed tool is blamed
on it, not on a transient failure (issue 27, bugcase 48)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import diff_cassettes, load
from support.factory import entry, write_cassette

SEARCH = {
    "name": "search",
    "description": "Search by name.",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
}


def run(folder: Path, name: str, tools: list[dict[str, Any]], version: str, failed: bool) -> Path:
    path = write_cassette(
        folder / f"{name}.jsonl",
        entry(
            1,
            "search",
            {"q": "ana"},
            response={"content": [{"type": "text", "text": "x"}], "isError": failed},
        ),
    )
    facts = {
        "format": "cassette-tui/mcp-server-facts",
        "version": 1,
        "cassette": path.name,
        "server": {"command": ["crm"]},
        "exchanges": [
            {
                "method": "initialize",
                "params": {},
                "result": {"serverInfo": {"name": "crm", "version": version}},
            },
            {"method": "tools/list", "params": {}, "result": {"tools": tools}},
        ],
    }
    (folder / f"{name}.mcp.json").write_text(json.dumps(facts))
    return path


def changes(tmp_path: Path, tools_a: list[dict], tools_b: list[dict], version_b: str = "1"):
    a = run(tmp_path, "a", tools_a, "1", failed=True)
    b = run(tmp_path, "b", tools_b, version_b, failed=False)
    result = diff_cassettes(load(a), load(b))
    found = [f for f in result.findings if f.kind == "contract_change"]
    return result, found


def test_a_schema_change_is_named_first_and_blamed_for_the_failure(tmp_path: Path) -> None:
    strict = {
        **SEARCH,
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string", "pattern": "^C-[0-9]+$"}},
        },
    }
    result, (found,) = changes(tmp_path, [strict], [SEARCH], version_b="0.9")
    assert result.findings[0] is found
    kinds = [(c["kind"], c.get("tool")) for c in found.evidence["changes"]]
    assert kinds == [("server", None), ("input_schema", "search")]
    assert found.evidence["changes"][1]["paths"] == ["$.properties.q.pattern"]
    assert 'serverInfo.version "1" (A) vs "0.9" (B)' in found.message
    assert found.seqs == {"a": [1], "b": [1]}
    (error,) = [f for f in result.findings if f.kind == "error_response"]
    assert "contract changed" in error.action and "transient" not in error.action.split("(")[0]
    assert "satisfy B's input schema, not A's" in error.action


@pytest.mark.parametrize(
    ("tools_a", "tools_b", "expected"),
    [
        ([SEARCH, {**SEARCH, "name": "delete"}], [SEARCH], [("tool_added", "delete")]),
        ([SEARCH], [SEARCH, {"name": "old", "inputSchema": {}}], [("tool_removed", "old")]),
        ([{**SEARCH, "name": "find"}], [SEARCH], [("tool_renamed", "find")]),
        (
            [{**SEARCH, "annotations": {"readOnlyHint": False}}],
            [{**SEARCH, "annotations": {"readOnlyHint": True}}],
            [("annotations", "search")],
        ),
        ([{**SEARCH, "description": "Search by id."}], [SEARCH], [("description", "search")]),
    ],
)
def test_each_kind_of_tool_change(
    tmp_path: Path, tools_a: list[dict], tools_b: list[dict], expected: list[tuple]
) -> None:
    _, (found,) = changes(tmp_path, tools_a, tools_b)
    assert [(c["kind"], c.get("tool")) for c in found.evidence["changes"]] == expected


def test_no_finding_without_a_sidecar_or_with_equal_contracts(tmp_path: Path) -> None:
    result, found = changes(tmp_path, [SEARCH], [SEARCH])
    assert found == []
    (error,) = [f for f in result.findings if f.kind == "error_response"]
    # without a contract change, the action is the one of the kind of failure ("x": unknown)
    assert error.evidence["error_kind"] == "unknown" and "contract" not in error.action
    (tmp_path / "b.mcp.json").unlink()
    result = diff_cassettes(load(tmp_path / "a.jsonl"), load(tmp_path / "b.jsonl"))
    assert [f for f in result.findings if f.kind == "contract_change"] == []
