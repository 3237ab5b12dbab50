"""Issue 26: ``mcp record`` honours ``[redact] record = true`` (the cassette and its
server-facts sidecar), and ``check`` / ``redact`` cover sidecars (bugcase 45)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import SCRIPT

KEY = "sk-live-4f9a8B2c7D1e6F3a9B8c7D6e5F4a3B2c1D0e"  # fake
WHSEC = "whsec_FAKEfakeFAKEfake0000EXAMPLE"  # fake (in the bugcase's server)


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("CASSETTE_CONFIG", None)
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_bugcase_45_mcp_record_redacts_cassette_and_sidecar(real: Path, tmp_path: Path) -> None:
    case = real / "bugcases" / "45_mcp_record_bypasses_redaction"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    script = json.dumps(
        [
            ["call", "get_contact", {"contact_id": "C-5", "api_key": KEY}],
            ["resources/read", {"uri": "crm://config"}],
        ]
    )
    runs = tmp_path / "runs"
    recorded = _run(
        [
            sys.executable, "host.py", script, "--",
            str(SCRIPT), "mcp", "record", "--config", "cassette.toml",
            "-o", str(runs / "crm.jsonl"), "--",
            sys.executable, "fake_server.py", "--api-key", KEY,
        ],
        case,
        timeout=180,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassette = (runs / "crm.jsonl").read_text(encoding="utf-8")
    sidecar = (runs / "crm.mcp.json").read_text(encoding="utf-8")
    assert '"api_key":"<redacted:secret:e5cfd71f>"' in cassette
    for text in (cassette, sidecar):
        assert KEY not in text and WHSEC not in text
    facts = json.loads(sidecar)
    assert facts["server"]["command"][-1] == "<redacted:secret:e5cfd71f>"
    clean = _run([str(SCRIPT), "check", "--secrets", str(runs)], tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "crm.mcp.json: 3 exchanges, no findings" in clean.stdout
    assert "checked 2 files" in clean.stdout


def _leaky_sidecar(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": "cassette-tui/mcp-server-facts",
        "version": 1,
        "cassette": "crm.jsonl",
        "server": {"command": ["python", "server.py", "--api-key", KEY]},
        "exchanges": [
            {
                "method": "resources/read",
                "params": {"uri": "crm://config"},
                "result": {"contents": [{"text": json.dumps({"webhook_secret": WHSEC})}]},
            }
        ],
    }
    path = folder / "crm.mcp.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def test_check_finds_a_sidecars_secrets_masked(tmp_path: Path) -> None:
    side = _leaky_sidecar(tmp_path / "runs")
    done = _run([str(SCRIPT), "check", "--secrets", "--json", str(side)], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = json.loads(done.stdout)["findings"]
    assert {r["path"] for r in rows} == {
        "$.server.command[3]",
        "$.exchanges[0].result.contents[0].text",
    }
    assert KEY not in done.stdout and WHSEC not in done.stdout
    folder = _run([str(SCRIPT), "check", "--secrets", str(tmp_path / "runs")], tmp_path)
    assert folder.returncode == 1 and "crm.mcp.json: 1 exchange, 2 findings" in folder.stdout


def test_redact_a_cassette_redacts_its_sidecar_too(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    side = _leaky_sidecar(runs)
    line = {"seq": 1, "tool": "t", "args": {"api_key": KEY}, "response": {"ok": True}}
    (runs / "crm.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    env_cache = tmp_path / "cache"
    done = subprocess.run(
        [str(SCRIPT), "redact", str(runs / "crm.jsonl"), "--in-place"],
        env={**os.environ, "XDG_CACHE_HOME": str(env_cache), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "its sidecar: 2 secret(s) replaced" in done.stdout
    for path in (side, runs / "crm.jsonl"):
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and WHSEC not in text
    assert sorted(p.name for p in runs.iterdir()) == ["crm.jsonl", "crm.mcp.json"]
    kept = sorted(p.name for p in (env_cache / "cassette-tui" / "backups").iterdir())
    assert len(kept) == 2 and kept[1] == kept[0] + ".mcp.json"  # both originals, outside
    again = _run([str(SCRIPT), "check", "--secrets", str(runs)], tmp_path)
    assert again.returncode == 0, again.stdout


def test_redact_a_sidecar_alone(tmp_path: Path) -> None:
    side = _leaky_sidecar(tmp_path / "runs")
    out = tmp_path / "clean.mcp.json"
    done = _run([str(SCRIPT), "redact", str(side), "-o", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 secret(s) replaced" in done.stdout
    text = out.read_text(encoding="utf-8")
    assert KEY not in text and WHSEC not in text and "<redacted:" in text
    refused = _run([str(SCRIPT), "redact", str(side), "-o", str(out)], tmp_path)
    assert refused.returncode == 2


def test_redact_refuses_an_existing_sidecar_before_writing(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _leaky_sidecar(runs)
    line = {"seq": 1, "tool": "t", "args": {"api_key": KEY}, "response": {"ok": True}}
    (runs / "crm.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (tmp_path / "out.mcp.json").write_text("{}", encoding="utf-8")
    done = _run([str(SCRIPT), "redact", str(runs / "crm.jsonl"), "-o", "out.jsonl"], tmp_path)
    assert done.returncode == 2 and "out.mcp.json: exists" in done.stderr
    assert not (tmp_path / "out.jsonl").exists()  # nothing written
