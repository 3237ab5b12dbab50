"""Response paths ignored by a user rule (``ignore_response`` under
``[tool.cassette.normalize]`` / ``[normalize]``): a change there is metadata drift, never
the first divergence nor a stale recording; the rules never touch the args. The commands'
side is in tests/cli/test_ignore_response_cli.py, the app's rows in
tests/tui/test_ignore_response_rows.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import NormalizationRules, diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.keys.normalize import NormalizationConfigError
from support.cases import ignore_response_pair
from support.factory import make_cassette


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
    pa, pb, config = ignore_response_pair(tmp_path)
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
    # without the rule, row 1 and row 2 are real drift
    strict = diff_cassettes(load(pa), load(pb), align)
    assert strict.first_divergence == 0


def test_an_in_memory_pair_with_rules(tmp_path: Path) -> None:
    rules = NormalizationRules.from_mapping({"ignore_response": ["$.at"]})
    a = make_cassette([("t", {"q": 1}, {"at": "noon", "n": 1})]).with_rules(rules)
    b = make_cassette([("t", {"q": 1}, {"at": "dusk", "n": 1})]).with_rules(rules)
    d = diff_cassettes(a, b)
    assert d.rows[0].status is Status.METADATA_DRIFT and d.is_same
