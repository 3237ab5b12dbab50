"""Issue 10: response paths ignored by a user rule (``ignore_response`` under
``[tool.cassette.normalize]`` / ``[normalize]``): a change there is metadata drift in
``diff``, ``diff --json`` and the app's rows, never the first divergence nor a stale
recording; ``check`` reports such a rule that matches nothing. Bugcase 28 where
../shared/real is present."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import NormalizationRules, diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.keys.normalize import NormalizationConfigError
from cassette_tui.core.keys.rule_check import rule_findings
from cassette_tui.tui.text.marks import STATUS_MARKS
from cassette_tui.tui.text.rows import PairRows
from support.factory import entry, make_cassette, write_cassette

CONFIG = """\
[normalize]
ignore_response = ["$.took_ms", "search:$.meta.trace", "**.cache_hit"]
"""


def _pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Row 1: only took_ms and a nested cache_hit differ; row 2: only search's
    meta.trace; row 3: the answer itself."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get", {"id": 1}, response={"v": 1, "took_ms": 12, "x": {"cache_hit": True}}),
        entry(2, "search", {"q": "a"}, response={"hits": ["d1"], "meta": {"trace": "t-1"}}),
        entry(3, "get", {"id": 2}, response={"v": 2, "took_ms": 9}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "get", {"id": 1}, response={"v": 1, "took_ms": 30, "x": {"cache_hit": False}}),
        entry(2, "search", {"q": "a"}, response={"hits": ["d1"], "meta": {"trace": "t-2"}}),
        entry(3, "get", {"id": 2}, response={"v": 3, "took_ms": 9}),
    )
    config = tmp_path / "cassette.toml"
    config.write_text(CONFIG)
    return a, b, config


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_rules_parse_and_never_touch_args() -> None:
    rules = NormalizationRules.from_mapping({"ignore_response": ["$.took_ms", "search:meta.trace"]})
    assert rules.is_empty  # no args rule: keys are strict
    assert rules.apply("search", {"took_ms": 1}) == {"took_ms": 1}
    assert rules.strip_metadata("search", {"took_ms": 1, "meta": {"trace": "t", "n": 2}}) == {
        "meta": {"n": 2}
    }
    assert rules.strip_metadata("get", {"meta": {"trace": "t"}}) == {"meta": {"trace": "t"}}
    assert rules.describe() == ["ignore_response $.took_ms", "ignore_response search:meta.trace"]
    with pytest.raises(NormalizationConfigError) as info:
        NormalizationRules.from_mapping({"ignore_response": ["$"]})
    assert info.value.field == "normalize.ignore_response[0]"


@pytest.mark.parametrize("align", ["seq", "key", "auto"])
def test_ignored_paths_are_metadata_drift_not_the_divergence(tmp_path: Path, align: str) -> None:
    pa, pb, config = _pair(tmp_path)
    rules = load_rules(config)
    d = diff_cassettes(load(pa, rules=rules), load(pb, rules=rules), align)
    assert [r.status for r in d.rows] == [
        Status.METADATA_DRIFT,
        Status.METADATA_DRIFT,
        Status.RESPONSE_DRIFT,
    ]
    assert d.first_divergence == 2
    assert {i.path for i in d.drift(0)} == {"$.took_ms", "$.x.cache_hit"}  # still shown
    (stale,) = [f for f in d.findings if f.kind == "stale_response"]
    assert stale.seqs == {"a": [3], "b": [3]}
    # the app's rows: the metadata mark on rows 1 and 2, the response-drift mark on row 3
    rows = PairRows(d)
    quiet, real = STATUS_MARKS[Status.METADATA_DRIFT], STATUS_MARKS[Status.RESPONSE_DRIFT]
    assert [f" {quiet.glyph} " in rows.render(i, 80, {}).plain for i in range(3)] == [
        True,
        True,
        False,
    ]
    assert f" {real.glyph} " in rows.render(2, 80, {}).plain
    # without the rule, row 1 and row 2 are real drift
    strict = diff_cassettes(load(pa), load(pb), align)
    assert strict.first_divergence == 0


def test_diff_cli_text_and_json(tmp_path: Path) -> None:
    pa, pb, config = _pair(tmp_path)
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
    pa, _pb, _config = _pair(tmp_path)
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


def test_an_in_memory_pair_with_rules(tmp_path: Path) -> None:
    rules = NormalizationRules.from_mapping({"ignore_response": ["$.at"]})
    a = make_cassette([("t", {"q": 1}, {"at": "noon", "n": 1})]).with_rules(rules)
    b = make_cassette([("t", {"q": 1}, {"at": "dusk", "n": 1})]).with_rules(rules)
    d = diff_cassettes(a, b)
    assert d.rows[0].status is Status.METADATA_DRIFT and d.is_same


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
