"""More of issue 10's diff-blame kinds: numeric drift size and tolerance, URL spellings
and the url preset, the user's rules checked against the data, domain dates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, NormalizationRules, Replayer, diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.refine import numeric_drift
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.keys.urls import canonical_url, is_url_spelling
from cassette_tui.core.keys.volatile import difference_kind, volatile_kind
from cassette_tui.core.scan.lint import lint
from support.factory import entry, make_cassette, write_cassette


# -- numbers --------------------------------------------------------------------------------------
def test_numeric_drift_size_and_tolerance() -> None:
    a = make_cassette([("embed", {"t": 1}, {"v": [0.1000001, 0.2]}), ("s", {"q": 1}, {"top": "a"})])
    b = make_cassette([("embed", {"t": 1}, {"v": [0.1000003, 0.2]}), ("s", {"q": 1}, {"top": "b"})])
    plain = diff_cassettes(a, b)
    assert plain.first_divergence == 0
    numbers = numeric_drift(plain.drift(0))
    assert numbers is not None and numbers["count"] == 1
    assert numbers["max_abs_delta"] == pytest.approx(2e-7)
    loose = diff_cassettes(a, b, tolerance=1e-6)
    assert loose.rows[0].status is Status.SAME
    assert loose.first_divergence == 1  # noise is never the first divergence
    assert diff_cassettes(a, b, tolerance=1e-9).rows[0].status is Status.RESPONSE_DRIFT


def test_diff_cli_tolerance_and_numbers_line(tmp_path: Path) -> None:
    pa = write_cassette(tmp_path / "a.jsonl", entry(1, "m", {"r": 1}, response={"score": 0.91}))
    pb = write_cassette(
        tmp_path / "b.jsonl", entry(1, "m", {"r": 1}, response={"score": 0.9100004})
    )

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cassette_tui.tui.cli", "diff", *extra, str(pa), str(pb)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    strict = run()
    assert strict.returncode == 1 and "numbers: 1 differ, largest |Δ| 4e-07" in strict.stdout
    assert run("--tolerance", "1e-6").returncode == 0


# -- URLs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://x.test/s?b=2&a=1", "https://x.test/s?a=1&b=2", True),
        ("https://x.test/s?q=a+b", "https://x.test/s?q=a%20b", True),
        ("https://x.test/a%2fb", "https://x.test/a%2Fb", True),
        ("https://X.TEST:443/", "https://x.test/", True),
        ("http://x.test:80/%7Eu", "http://x.test/~u", True),
        ("https://x.test/a%2Fb", "https://x.test/a/b", False),
        ("https://x.test/s?q=1", "https://x.test/s?q=2", False),
        ("https://x.test:8443/", "https://x.test/", False),
    ],
)
def test_url_spellings(a: str, b: str, same: bool) -> None:
    assert (canonical_url(a) == canonical_url(b)) is same
    assert is_url_spelling(a, b) is same
    assert (difference_kind(a, b) == "url spelling") is same


def test_url_miss_is_named_and_the_url_preset_turns_it_into_a_hit(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl", entry(1, "http_get", {"url": "https://API.test:443/s?q=a+b&l=en"})
    )
    live = {"url": "https://api.test/s?l=en&q=a%20b"}
    with pytest.raises(CassetteMiss, match=r"\[url spelling\]"):
        Replayer(load(path))("http_get", live)
    rules = NormalizationRules.from_presets(["url"])
    assert Replayer(load(path, rules=rules))("http_get", live) == {"hits": 1}
    other = write_cassette(tmp_path / "o.jsonl", entry(1, "http_get", live))
    result = diff_cassettes(load(path), load(other))
    (miss,) = [f for f in result.findings if f.kind == "args_miss"]
    assert miss.evidence["presets"] == ["url"]
    assert "spellings of one URL" in miss.message


# -- the user's rules against the data ------------------------------------------------------------
def test_check_reports_over_normalization_and_rules_matching_nothing(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "search", {"q": "refund", "n": 1}, response={"top": "a"}),
        entry(2, "search", {"q": "shipping", "n": 1}, response={"top": "b"}),
        entry(3, "search", {"q": "x", "n": 5}, response={"top": "c"}),
        entry(4, "search", {"q": "x", "n": 6}, response={"top": "c"}),
    )
    config = tmp_path / "cassette.toml"
    config.write_text('[normalize]\ndrop = ["q", "n", "serch:id"]\n', encoding="utf-8")
    rules = load_rules(config)
    kinds = {(f.kind, f.seqs) for f in lint(load(path, rules=rules))}
    assert ("over_normalization", (1, 2, 3, 4)) in kinds
    assert not any(k == "repeated_key" for k, _ in kinds)
    unused = [f for f in lint(load(path, rules=rules)) if f.kind == "unused_rule"]
    assert [f.evidence["rule"] for f in unused] == ["drop serch:id"]
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "check", "--config", str(config), str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "over_normalization" in done.stdout and "unused_rule" in done.stdout


def test_rules_that_merge_only_equal_answers_are_fine(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "s", {"q": "a", "trace": "t1"}),
        entry(2, "s", {"q": "a", "trace": "t2"}),
    )
    rules = NormalizationRules.from_mapping({"drop": ["trace"]})
    assert [f.kind for f in lint(load(path, rules=rules))] == ["repeated_key"]


# -- domain dates ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("2024-06-01", None),
        ("1986-03-14", None),
        ("2024-06-01T10:00:00Z", "timestamp"),
        (1715785203, "epoch"),
        ("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "uuid"),
    ],
)
def test_bare_dates_are_domain_data(value: object, kind: str | None) -> None:
    assert volatile_kind(value) == kind


def test_tau_bench_task_11_dates_are_not_volatile(real: Path, tmp_path: Path) -> None:
    out = tmp_path / "t11.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "import",
         str(real / "tau-bench" / "gpt-4o-airline.json"), "--task", "11", "--trial", "2",
         "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    findings = lint(load(out))
    assert len(findings) == 1  # 16 before: 15 were flight and birth dates
    assert not any("date" in (f.path or "") or "dob" in (f.path or "") for f in findings)
