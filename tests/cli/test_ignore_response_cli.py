"""Response paths ignored by a user rule (``ignore_response`` under ``[normalize]``) in
the commands: ``diff`` and ``diff --json`` call such changes metadata drift, ``check``
reports a rule that matches nothing. Bugcase 28 where ../shared/real is present. The diff
itself is held in tests/core/diff/test_ignore_response.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cassette_tui.core import NormalizationRules, load
from cassette_tui.core.keys.rule_check import rule_findings
from support.cases import ignore_response_pair


def test_diff_cli_text_and_json(tmp_path: Path) -> None:
    pa, pb, config = ignore_response_pair(tmp_path)
    out = _cli("diff", "--config", str(config), "--json", str(pa), str(pb))
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert doc["first_divergence"]["row"] == 3
    assert [r["status"] for r in doc["rows"]] == [
        "metadata_drift",
        "metadata_drift",
        "response_drift",
    ]
    assert [f["kind"] for f in doc["findings"]].count("stale_response") == 1
    text = _cli("diff", "--config", str(config), str(pa), str(pb)).stdout
    assert "first divergence: row 3" in text and "2 metadata only" in text
    # every difference ignored: the runs are the same
    (tmp_path / "all.toml").write_text('[normalize]\nignore_response = ["**.took_ms", "$.v",'
                                       ' "**.cache_hit", "$.meta"]\n')  # fmt: skip
    same = _cli("diff", "--config", str(tmp_path / "all.toml"), str(pa), str(pb))
    assert same.returncode == 0, same.stdout


def test_check_reports_a_rule_that_matches_no_response(tmp_path: Path) -> None:
    pa, _pb, _config = ignore_response_pair(tmp_path)
    rules = NormalizationRules.from_mapping(
        {"ignore_response": ["$.took_ms", "search:$.took_ms", "nosuch:$.x", "$.tokk_ms"]}
    )
    found = rule_findings(load(pa, rules=rules))
    unused = sorted(f.evidence["rule"] for f in found if f.kind == "unused_rule")
    assert unused == [
        "ignore_response $.tokk_ms",
        "ignore_response nosuch:$.x",
        "ignore_response search:$.took_ms",
    ]
    config = tmp_path / "typo.toml"
    config.write_text('[normalize]\nignore_response = ["$.tokk_ms"]\n')
    out = _cli("check", "--config", str(config), "--json", str(pa))
    assert out.returncode == 1, out.stdout
    kinds = [(f["kind"], f["message"]) for f in json.loads(out.stdout)["findings"]]
    assert any(k == "unused_rule" and "ignore_response $.tokk_ms" in m for k, m in kinds)
    config.write_text('[normalize]\nignore_response = ["$.took_ms"]\n')
    clean = _cli("check", "--config", str(config), "--json", str(pa))
    assert "unused_rule" not in clean.stdout


def test_case_28_answer_path_ignored_by_rule(real: Path, tmp_path: Path) -> None:
    """Bugcase 28: row 3's answer differs; a rule that ignores the answer's text makes
    that row metadata drift too, so the runs are the same (exit 0)."""
    folder = real / "bugcases" / "28_volatile_response_metadata"
    config = tmp_path / "cassette.toml"
    config.write_text('[normalize]\nignore_response = ["llm_chat:$.choices"]\n')
    out = _cli("diff", "--config", str(config), "--json", str(folder / "a.jsonl"),
               str(folder / "b.jsonl"))  # fmt: skip
    assert out.returncode == 0, out.stdout
    doc = json.loads(out.stdout)
    assert doc["first_divergence"] is None
    assert [r["status"] for r in doc["rows"]] == ["metadata_drift", "metadata_drift"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
