"""Normalization rules, config loading and their analysis (core/keys/normalize.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import Cassette, Entry, NormalizationRules, load, load_rules
from cassette_tui.core.format.digest import digest
from cassette_tui.core.keys._rules import DropRule
from cassette_tui.core.keys.normalize import NormalizationConfigError
from cassette_tui.core.keys.rule_check import misses_turned_hits, over_normalization
from cassette_tui.core.scan.lint import lint
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

UUID_A = "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11"
UUID_B = "b2e94f10-77c3-4a8e-8d2b-5c6a1f0e9d32"


def rules(**table: object) -> NormalizationRules:
    return NormalizationRules.from_mapping(table)


def test_empty_rules_are_the_identity() -> None:
    r = NormalizationRules()
    args = {"a": [1, {"b": 2}]}
    assert r.is_empty and r.apply("t", args) is args
    assert str(r) == "no rules (strict)"


@pytest.mark.parametrize(
    ("path", "args", "expected"),
    [
        ("metadata.request_id", {"metadata": {"request_id": 1, "k": 2}}, {"metadata": {"k": 2}}),
        ("*.timestamp", {"a": {"timestamp": 1}, "timestamp": 2}, {"a": {}, "timestamp": 2}),
        ("**.timestamp", {"a": {"b": [{"timestamp": 1}]}, "timestamp": 2}, {"a": {"b": [{}]}}),
        ("items.*.id", {"items": [{"id": 1, "n": 1}, {"id": 2}]}, {"items": [{"n": 1}, {}]}),
        ("items.0", {"items": ["x", "y"]}, {"items": ["y"]}),
        ("absent.path", {"a": 1}, {"a": 1}),
    ],
)
def test_drop_paths(path: str, args: dict, expected: dict) -> None:
    assert rules(drop=[path]).apply("t", args) == expected


def test_drop_scoped_to_a_tool() -> None:
    r = rules(drop=["search_docs:since"])
    assert r.apply("search_docs", {"q": 1, "since": 2}) == {"q": 1}
    assert r.apply("read_file", {"q": 1, "since": 2}) == {"q": 1, "since": 2}
    assert r.describe() == ["drop search_docs:since"]


def test_rules_never_mutate_the_args() -> None:
    args = {"metadata": {"request_id": "req_12345678"}, "id": UUID_A, "items": [{"id": 1}]}
    snapshot = repr(args)
    r = rules(drop=["metadata.request_id", "items.*.id"], presets=["uuid"])
    r.apply("t", args)
    assert repr(args) == snapshot


def test_regex_replacement_everywhere_or_at_a_path() -> None:
    everywhere = rules(replace=[{"pattern": r"session-[0-9a-f]+", "replacement": "session-X"}])
    assert everywhere.apply("t", {"a": "session-abc1", "b": ["session-ff"]}) == {
        "a": "session-X",
        "b": ["session-X"],
    }
    scoped = rules(replace=[{"pattern": r"\d+", "replacement": "N", "path": "q", "tool": "search"}])
    assert scoped.apply("search", {"q": "page 12", "other": "12"}) == {"q": "page N", "other": "12"}
    assert scoped.apply("read", {"q": "page 12"}) == {"q": "page 12"}
    assert str(scoped.rules[0]) == r"replace '\\d+' -> 'N' at search:q"
    table_form = rules(replace={"a+": "A"})
    assert table_form.apply("t", {"x": "baa"}) == {"x": "bA"}


def test_transport_fields_are_dropped_at_the_top_level_only() -> None:
    r = rules(transport=["timeout", "http_get:stream"])
    assert r.apply("http_get", {"url": "u", "timeout": 3, "stream": True, "o": {"timeout": 1}}) == {
        "url": "u",
        "o": {"timeout": 1},
    }
    assert r.apply("other", {"stream": True}) == {"stream": True}


def test_presets() -> None:
    r = NormalizationRules.from_presets(
        ["uuid", "timestamp", "request_id", "path"], root="/srv/app"
    )
    out = r.apply(
        "t",
        {
            "id": UUID_A,
            "text": f"ticket {UUID_B}",
            "since": "2024-05-15T15:00:03Z",
            "epoch": 1715785203,
            "ms": 1715785203123,
            "small": 42,
            "rid": "req_8f3a9c01d2",
            "file": "/srv/app/src/main.py",
            "root": "/srv/app",
            "cmd": "pytest /srv/app/tests",
            "tmp": "/tmp/pytest-of-ana/pytest-3/out.txt",
            "flag": True,
        },
    )
    assert out == {
        "id": "<uuid>",
        "text": "ticket <uuid>",
        "since": "<timestamp>",
        "epoch": "<epoch>",
        "ms": "<epoch>",
        "small": 42,
        "rid": "<request_id>",
        "file": "src/main.py",
        "root": ".",
        "cmd": "pytest tests",
        "tmp": "<tmp>/out.txt",
        "flag": True,
    }
    assert r.describe() == ["preset uuid", "preset timestamp", "preset request_id", "preset path"]


def test_rules_apply_in_a_fixed_order_whatever_the_config_order() -> None:
    r = NormalizationRules((DropRule("a"), *NormalizationRules.from_presets(["uuid"]).rules))
    assert r.describe() == ["drop a", "preset uuid"]


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ({"dorp": ["a"]}, "normalize.dorp"),
        ({"drop": "a"}, "normalize.drop"),
        ({"drop": ["a..b"]}, "normalize.drop[0]"),
        ({"presets": ["uuid", "guid"]}, "normalize.presets[1]"),
        ({"replace": [{"pattern": "(", "replacement": ""}]}, "normalize.replace[0].pattern"),
        ({"replace": [{"pattern": "a"}]}, "normalize.replace[0].replacement"),
        ({"transport": ["a.b"]}, "normalize.transport[0]"),
    ],
)
def test_bad_config_names_the_field(table: dict, field: str) -> None:
    with pytest.raises(NormalizationConfigError) as info:
        NormalizationRules.from_mapping(table, source="cassette.toml")
    assert info.value.field == field
    assert "cassette.toml" in str(info.value) and field in str(info.value)


def test_load_rules_from_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.cassette.normalize]\npresets = ["uuid"]\n'
        'drop = ["search_docs:since"]\n',
        encoding="utf-8",
    )
    sub = tmp_path / "agent"
    sub.mkdir()
    monkeypatch.chdir(sub)
    r = load_rules()
    assert r.describe() == ["drop search_docs:since", "preset uuid"]
    assert r.source == str(tmp_path / "pyproject.toml")


def test_load_rules_from_cassette_toml_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    (tmp_path / "cassette.toml").write_text('[normalize]\npresets = ["timestamp"]\n', "utf-8")
    assert load_rules(root=tmp_path).describe() == ["preset timestamp"]
    other = tmp_path / "other.toml"
    other.write_text('[normalize]\ndrop = ["x"]\n', encoding="utf-8")
    monkeypatch.setenv("CASSETTE_CONFIG", str(other))
    assert load_rules(root=tmp_path).describe() == ["drop x"]
    assert load_rules(tmp_path / "cassette.toml").describe() == ["preset timestamp"]


def test_no_config_means_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert load_rules(root=tmp_path).is_empty


def test_config_errors_name_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(NormalizationConfigError, match="config file not found"):
        load_rules(tmp_path / "missing.toml")
    bad = tmp_path / "cassette.toml"
    bad.write_text('[normalize]\npresets = ["uuid"] x\n', encoding="utf-8")
    with pytest.raises(NormalizationConfigError) as info:
        load_rules(bad)
    assert info.value.line == 2 and str(bad) in str(info.value)


def make(*calls: tuple[str, dict, object]) -> Cassette:
    return Cassette.from_entries(
        Entry(i, tool, args, response=resp) for i, (tool, args, resp) in enumerate(calls, 1)
    )


def test_over_normalization_finds_merged_calls_with_different_responses() -> None:
    c = make(
        ("get", {"id": UUID_A}, {"name": "Ana"}),
        ("get", {"id": UUID_B}, {"name": "Bo"}),
        ("get", {"id": UUID_A}, {"name": "Ana"}),
        ("tick", {"at": "2024-05-15T15:00:03Z"}, "ok"),
        ("tick", {"at": "2024-05-16T15:00:03Z"}, "ok"),  # merged, same response: harmless
        ("poll", {"j": 1}, "running"),
        ("poll", {"j": 1}, "done"),  # same key already: a retry, not a merge
    )
    found = over_normalization(c, NormalizationRules.from_presets(["uuid", "timestamp"]))
    assert len(found) == 1
    (merge,) = found
    assert merge.tool == "get"
    assert merge.seqs == (1, 2, 3)
    assert (merge.distinct_calls, merge.distinct_responses) == (2, 2)
    assert merge.digest == digest({"id": "<uuid>"})
    assert over_normalization(c, NormalizationRules()) == []


def test_misses_turned_hits() -> None:
    c = make(("get", {"id": UUID_A, "q": 1}, "r"), ("get", {"id": UUID_A, "q": 2}, "s"))
    live = [
        ("get", {"id": UUID_A, "q": 1}),  # strict hit: not listed
        {"tool": "get", "args": {"id": UUID_B, "q": 2}},  # turned into a hit
        ("get", {"id": UUID_B, "q": 3}),  # still a miss
    ]
    (hit,) = misses_turned_hits(c, live, NormalizationRules.from_presets(["uuid"]))
    assert (hit.n, hit.tool, hit.seqs) == (2, "get", (2,))
    assert hit.strict_digest == digest({"id": UUID_B, "q": 2})


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
json_args = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=12,
)


@given(json_args)
def test_rules_are_idempotent_and_never_mutate(args: object) -> None:
    r = rules(presets=["uuid", "timestamp", "request_id"], drop=["**.id"])
    before = repr(args)
    once = r.apply("t", args)
    assert repr(args) == before
    assert r.apply("t", once) == once


def test_a_replacement_naming_a_missing_group_is_a_config_error(tmp_path: Path) -> None:
    """``re`` checks a replacement only at its first match: the config reader expands it
    at once, so a bad rule is an error naming the file and field, never a traceback in the
    middle of a diff (found by a tester)."""
    config = tmp_path / "cassette.toml"
    for replacement, why in [
        ("\\\\9", "invalid group reference 9"),
        ("\\\\g<x>", "unknown group name"),
    ]:
        config.write_text(
            f'[normalize]\nreplace = [{{pattern = "(?P<n>a)", replacement = "{replacement}"}}]\n'
        )
        with pytest.raises(NormalizationConfigError) as info:
            load_rules(config)
        assert info.value.field == "normalize.replace[0].replacement" and why in str(info.value)
    config.write_text(
        '[normalize]\nreplace = [{pattern = "(?i)(?P<n>a)(b)", replacement = "\\\\g<n>-\\\\2"}]\n'
    )
    assert load_rules(config).apply("t", {"q": "AB"}) == {"q": "A-B"}


def test_rules_that_merge_only_equal_answers_are_fine(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "s", {"q": "a", "trace": "t1"}),
        entry(2, "s", {"q": "a", "trace": "t2"}),
    )
    rules = NormalizationRules.from_mapping({"drop": ["trace"]})
    assert [f.kind for f in lint(load(path, rules=rules))] == ["repeated_key"]
