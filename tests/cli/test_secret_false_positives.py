"""Issue 26, measured: no false alarm of the secret scan on real recordings, those of other
people in ../shared/real (tau-bench, VCR, inspect_ai, the bug cases) and a recording of
the README's own mcp-server-git example made here (git object ids in git's output)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import is_multi_run, list_runs, open_cassette
from cassette_tui.core.scan.secrets import scan_entry, scan_value
from support.mcp_session import git_repo, installed, record_cmd, sdk_session
from support.paths import SCRIPT

#: the real secrets in the real data, each a finding on purpose: (file, path, why)
TRUE_POSITIVES = {
    ("bugcases/11_secret_in_args/recorded.jsonl", "$.args.headers.Authorization"): "planted",
    ("bugcases/11_secret_in_args/recorded.jsonl", "$.response.access_token"): "planted",
    # a Cloudflare session cookie pydantic-ai left in a request; its value holds "xxx",
    # which once made it pass for a mask
    (
        "vcr/pydantic-ai/tests/models/cassettes/test_openai/test_multiple_agent_tool_calls.yaml",
        "$.request_headers.cookie[0]",
    ): "a real cookie",
}
_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".eval")


def _specs(path: Path) -> list[str]:
    try:
        if is_multi_run(path):
            return [f"{path}{run.spec_suffix()}" for run in list_runs(path)]
    except Exception:  # noqa: BLE001 - a file no importer reads is not a recording
        return []
    return [str(path)]


def test_no_false_positive_on_the_real_recordings(real: Path) -> None:
    entries = 0
    found: dict[tuple[str, str], str] = {}
    for path in sorted(p for p in real.rglob("*") if p.suffix in _SUFFIXES and p.is_file()):
        for spec in _specs(path):
            try:
                cassette = open_cassette(spec)
            except Exception:  # noqa: BLE001 - the hostile bug cases are refused on purpose
                continue
            for i in range(len(cassette)):
                try:
                    entry = cassette[i]
                except Exception:  # noqa: BLE001 - a bad line further on
                    break
                entries += 1
                for hit in scan_entry(entry):
                    found[(str(path.relative_to(real)), hit.path)] = hit.detector
    if entries == 0:
        pytest.skip(f"no recording under {real} could be read")
    assert entries > 1000  # tau-bench alone has 200 runs
    false_positives = {k: v for k, v in found.items() if k not in TRUE_POSITIVES}
    print(f"{entries} real entries, {len(false_positives)} false positives")
    assert false_positives == {}
    assert set(found) == set(TRUE_POSITIVES)  # and the real secrets are still found


GIT_CALLS = [
    ("git_status", {"repo_path": "repo"}),
    ("git_log", {"repo_path": "repo"}),
    ("git_show", {"repo_path": "repo", "revision": "HEAD"}),
    ("git_diff", {"repo_path": "repo", "target": "HEAD~1"}),
    ("git_branch", {"repo_path": "repo", "branch_type": "local"}),
]


def test_an_mcp_git_recording_is_not_flagged(tmp_path: Path) -> None:
    """The README's mcp-server-git example, recorded for real: git's commit ids (40 hex)
    are in the responses, and neither ``check`` nor the scan of the sidecar flags them."""
    git_repo(tmp_path)
    server = [installed("mcp-server-git"), "--repository", "repo"]
    run = tmp_path / "git.jsonl"
    session = sdk_session(record_cmd(run, server), GIT_CALLS, cwd=tmp_path)
    texts = json.dumps(session["calls"])
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert len(head) == 40 and head in texts  # the commit id is in the recording

    done = subprocess.run(
        [str(SCRIPT), "check", "--json", str(run)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    doc = json.loads(done.stdout)
    rows = doc if isinstance(doc, list) else doc.get("findings", [])
    assert [r for r in rows if r.get("kind") == "secret"] == [], done.stdout
    facts = json.loads((tmp_path / "git.mcp.json").read_text())
    assert scan_value(facts, ("facts",)) == []
