"""The pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself in a real git
repository: a commit that adds a cassette with a secret fails, a clean one passes.

The hook is used as ``repo: local`` with ``language: system`` and the manifest's own
``entry`` and ``files``, so no network is needed (``language: python`` would have
pre-commit install this package into a fresh environment)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.paths import ROOT, SCRIPT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

TOKEN = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def manifest() -> list[dict]:
    from pre_commit.clientlib import load_manifest

    return load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))


def test_manifest_is_valid_for_pre_commit() -> None:
    hooks = {h["id"]: h for h in manifest()}
    assert hooks["cassette-secrets"]["entry"] == "cassette-tui check --secrets"
    assert hooks["cassette-check"]["entry"] == "cassette-tui check"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "project"
    work.mkdir()
    env = {
        **os.environ,
        "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(tmp_path),
        "NO_COLOR": "1",
    }
    env.pop("CASSETTE_CONFIG", None)
    assert run(["git", "init", "-q", "-b", "main"], work, env).returncode == 0
    hook = next(h for h in manifest() if h["id"] == "cassette-secrets")
    config = {
        "repos": [
            {
                "repo": "local",
                "hooks": [
                    {
                        "id": hook["id"],
                        "name": hook["name"],
                        "entry": hook["entry"],
                        "language": "system",
                        "files": hook["files"],
                        "types": hook["types"],
                    }
                ],
            }
        ]
    }
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    installed = run([sys.executable, "-m", "pre_commit", "install"], work, env)
    assert installed.returncode == 0, installed.stderr
    return work, env


def commit(work: Path, env: dict[str, str], name: str, record: dict) -> subprocess.CompletedProcess:
    runs = work / "runs"
    runs.mkdir(exist_ok=True)
    (runs / name).write_text(json.dumps(record) + "\n")
    assert run(["git", "add", "-A"], work, env).returncode == 0
    return run(["git", "commit", "-q", "-m", f"add {name}"], work, env)


def test_commit_with_a_secret_fails_and_a_clean_one_passes(repo: tuple[Path, dict]) -> None:
    work, env = repo
    clean = {"seq": 1, "tool": "search_docs", "args": {"q": "retry budget"}, "response": {"n": 3}}
    ok = commit(work, env, "clean.jsonl", clean)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    leaky = {
        "seq": 1,
        "tool": "call_api",
        "args": {"headers": {"Authorization": f"Bearer {TOKEN}"}},
        "response": {"ok": True},
    }
    failed = commit(work, env, "leaky.jsonl", leaky)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0
    assert "secrets in cassettes" in out and "Failed" in out
    assert "runs/leaky.jsonl" in out and "$.args.headers.Authorization" in out
    assert TOKEN not in out  # masked in the hook's output too
    log = run(["git", "log", "--oneline"], work, env).stdout
    assert len(log.splitlines()) == 1  # the leaky commit did not happen

    # redacted, the same cassette commits
    redacted = run(["cassette-tui", "redact", "runs/leaky.jsonl", "--in-place"], work, env)
    assert redacted.returncode == 0, redacted.stderr
    assert not (work / "runs" / "leaky.jsonl.bak").exists()  # the backup is outside the repo
    assert run(["git", "add", "-A"], work, env).returncode == 0
    again = run(["git", "commit", "-q", "-m", "redacted"], work, env)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_sidecar_or_a_backup_with_a_secret_is_not_committed(repo: tuple[Path, dict]) -> None:
    """Issue 26: every file the tool writes is covered by the hook: an MCP server-facts
    sidecar (``*.mcp.json``) and a cassette backup (``*.jsonl.bak``)."""
    work, env = repo
    sidecar = {
        "format": "cassette-tui/mcp-server-facts",
        "version": 1,
        "cassette": "crm.jsonl",
        "server": {"command": ["python", "server.py", "--api-key", TOKEN]},
        "exchanges": [],
    }
    failed = commit(work, env, "crm.mcp.json", sidecar)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0, out
    assert "runs/crm.mcp.json" in out and "$.server.command[3]" in out
    assert TOKEN not in out
    run(["git", "reset", "-q"], work, env)
    (work / "runs" / "crm.mcp.json").unlink()
    leaky = {"seq": 1, "tool": "t", "args": {"token": TOKEN}, "response": {"ok": True}}
    failed = commit(work, env, "leaky.jsonl.bak", leaky)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0, out
    assert "runs/leaky.jsonl.bak" in out and TOKEN not in out
