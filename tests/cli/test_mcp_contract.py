"""Bugcase 48 through ``cassette-tui diff``: two ``mcp record`` runs whose server changed
a tool's description and input schema; the text and ``--json`` name the change first and
blame the failed call on it (issue 27). Runs the case's files from ``../shared/real``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.mcp_session import CLI


def test_bugcase_48_diff_names_the_changed_contract(real: Path) -> None:
    case = real / "bugcases" / "48_mcp_tool_contract_changed"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    args = [*CLI, "diff", "fail.jsonl", "pass.jsonl"]
    text = subprocess.run(
        args, cwd=case, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert text.returncode == 1, text.stderr
    findings = text.stdout.split("Findings", 1)[1]
    assert findings.index("contract_change") < findings.index("first_divergence")
    flat = " ".join(text.stdout.split())
    assert 'serverInfo.version "0.4" (A) vs "0.3" (B)' in flat
    assert "find_contact: inputSchema changed at $.properties.query.pattern" in flat
    assert "satisfy B's input schema, not A's" in flat
    assert "A transient failure" not in flat
    out = subprocess.run(
        [*args, "--json"], cwd=case, env=env, capture_output=True, timeout=120, check=False
    )
    doc = json.loads(out.stdout)
    (found,) = [f for f in doc["findings"] if f["kind"] == "contract_change"]
    kinds = {(c["kind"], c.get("tool")) for c in found["evidence"]["changes"]}
    assert kinds == {
        ("server", None),
        ("description", "find_contact"),
        ("input_schema", "find_contact"),
    }
    assert found["evidence"]["sidecars"] == {"a": "fail.mcp.json", "b": "pass.mcp.json"}
