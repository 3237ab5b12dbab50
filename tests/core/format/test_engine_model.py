"""The engine's one-of-each model: the line parser, the outcome model and row builder, the
JSON-path syntax and walker, the finding type (issue 8, "One of each")."""

from __future__ import annotations

import json
import math

import pytest
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.findings import Finding
from cassette_tui.core.format.jsonpath import (
    ANY,
    ANY_DEPTH,
    JSONPathError,
    KeyOrIndex,
    format_path,
    iter_leaves,
    parse_path,
)
from cassette_tui.core.format.jsontext import (
    DuplicateKey,
    JSONTooDeep,
    parse_json,
    sorted_json_bytes,
)
from cassette_tui.core.format.outcome import outcome_index
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.scan.lint import LintFinding, lint
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

# -- the bugs of issue 8, each failing on the model before it ----------------------------


def test_seq_and_key_agree_on_a_24_digit_integer(tmp_path) -> None:
    a = write_cassette(tmp_path / "a.jsonl", entry(1, response={"id": 123456789012345678901234}))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, response={"id": 123456789012345678901235}))
    by_seq = diff_cassettes(load(a), load(b), "seq")
    by_key = diff_cassettes(load(a), load(b), "key")
    assert [r.status for r in by_seq.rows] == [Status.RESPONSE_DRIFT]
    assert [r.status for r in by_key.rows] == [Status.RESPONSE_DRIFT]
    assert by_seq.is_same is by_key.is_same is False


def test_big_integers_differ_past_2000_differing_rows(tmp_path) -> None:
    n = 2001
    a = write_cassette(
        tmp_path / "a.jsonl", *(entry(i, response={"n": 2**64}) for i in range(1, n + 1))
    )
    b = write_cassette(
        tmp_path / "b.jsonl", *(entry(i, response={"n": 2**64 + 1}) for i in range(1, n + 1))
    )
    for how in ("seq", "key"):
        result = diff_cassettes(load(a), load(b), how)
        assert result.counts[Status.RESPONSE_DRIFT] == n, how
        assert result.counts[Status.SAME] == 0, how


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_response_is_not_null(tmp_path, value) -> None:
    a = write_cassette(tmp_path / "a.jsonl", json.dumps(entry(1, response=value)))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, response=None))
    for how in ("seq", "key"):
        result = diff_cassettes(load(a), load(b), how)
        assert [r.status for r in result.rows] == [Status.RESPONSE_DRIFT], how
    assert sorted_json_bytes(value) != sorted_json_bytes(None)
    assert sorted_json_bytes({"x": [value]}) != sorted_json_bytes({"x": [None]})


def test_outcome_index_and_entry_fingerprint_agree(tmp_path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, response={"id": 2**70}),
        json.dumps(entry(2, response=[float("nan")])),
        entry(3, error={"type": "E", "message": "m"}),
        entry(4, response={"b": 1, "a": [1.0, None]}),
    )
    c = load(path)
    fps = outcome_index(c).fingerprints
    assert fps == [load(path).fingerprint(i) for i in range(len(c))]


# -- the one line parser -------------------------------------------------------------------


def test_parser_keeps_integers_exact_and_non_finite_numbers() -> None:
    value = parse_json(b'{"a": 123456789012345678901234, "b": [NaN, Infinity, -Infinity]}')
    assert value["a"] == 123456789012345678901234 and type(value["a"]) is int
    assert math.isnan(value["b"][0]) and value["b"][1:] == [math.inf, -math.inf]


@pytest.mark.parametrize(
    ("raw", "key", "path"),
    [
        (b'{"a": 1, "a": 2}', "a", "$"),
        (b'{"x": {"y": [{"k": 1, "k": 2}]}}', "k", "$.x.y[0]"),
        (b'{"s": "\\u003a", "s": 1}', "s", "$"),
        (b'{"n": NaN, "n": 1}', "n", "$"),
    ],
)
def test_parser_rejects_duplicate_keys(raw, key, path) -> None:
    with pytest.raises(DuplicateKey) as caught:
        parse_json(raw)
    assert caught.value.key == key and caught.value.path == path


def test_parser_accepts_colons_inside_strings() -> None:
    assert parse_json(b'{"a": "b:c", "d": {"e:f": ":"}}') == {"a": "b:c", "d": {"e:f": ":"}}


def test_parser_depth_is_a_value_error_never_recursion() -> None:
    for raw in (b"[" * 5000 + b"]" * 5000, b"[NaN," + b"[" * 5000 + b"]" * 5001):
        with pytest.raises(JSONTooDeep):
            parse_json(raw)


def test_duplicate_key_in_a_cassette_names_file_line_and_field(tmp_path) -> None:
    good = json.dumps(entry(1))
    path = write_cassette(
        tmp_path / "d.jsonl",
        good,
        '{"seq": 2, "tool": "t", "args": {"q": 1, "q": 2}, "response": 1}',
    )
    with pytest.raises(CassetteFormatError) as caught:
        list(load(path))
    err = caught.value
    assert (err.path, err.line, err.field) == (str(path), 2, "args")
    assert "duplicate key 'q'" in str(err)


def test_duplicate_key_in_a_response_is_reported_on_access(tmp_path) -> None:
    path = write_cassette(
        tmp_path / "d.jsonl", '{"seq": 1, "tool": "t", "args": {}, "response": {"x": 1, "x": 2}}'
    )
    with pytest.raises(CassetteFormatError) as caught:
        load(path)[0]
    assert (caught.value.line, caught.value.field) == (1, "response")


def test_deep_line_is_a_format_error(tmp_path) -> None:
    deep = "[" * 3000 + "]" * 3000
    path = write_cassette(
        tmp_path / "deep.jsonl", f'{{"seq": 1, "tool": "t", "args": {deep}, "response": 1}}'
    )
    with pytest.raises(CassetteFormatError) as caught:
        load(path)
    assert caught.value.line == 1 and "deep" in str(caught.value)


# -- the one JSON-path syntax ----------------------------------------------------------------

_keys = st.one_of(st.text(max_size=8), st.integers(min_value=0, max_value=10**6))


@given(st.lists(_keys, max_size=6))
def test_format_and_parse_round_trip(parts) -> None:
    assert list(parse_path(format_path(parts))) == parts


def test_paths_address_keys_with_dots_brackets_and_stars() -> None:
    parts = ["a.b", "[x]", "*", "", 'q"', 3]
    text = format_path(parts)
    assert text == '$["a.b"]["[x]"]["*"][""]["q\\""][3]'
    assert list(parse_path(text)) == parts
    assert parse_path("items.*.id", pattern=True) == ("items", ANY, "id")
    assert parse_path("$.**.ts", pattern=True) == (ANY_DEPTH, "ts")
    assert parse_path("items.0", pattern=True) == ("items", KeyOrIndex("0"))
    with pytest.raises(JSONPathError, match="not a pattern"):
        parse_path("$.a.*")
    for bad in ("a..b", "$[", '$["a"', "$.a[x]", "$x"):
        with pytest.raises(JSONPathError):
            parse_path(bad, pattern=True)


def test_the_config_accepts_the_paths_messages_print() -> None:
    args = {"a.b": 1, "items": [{"id": 1, "k": 2}], "*": 3, "keep": 4}
    rules = NormalizationRules.from_mapping({"drop": ['$["a.b"]', "$.items[0].id", '$["*"]']})
    assert rules.apply("t", args) == {"items": [{"k": 2}], "keep": 4}
    # the dotted form still works, wildcards included
    dotted = NormalizationRules.from_mapping({"drop": ["items.*.id", "t:keep"]})
    assert dotted.apply("t", args) == {"a.b": 1, "items": [{"k": 2}], "*": 3}


def test_lint_prints_a_path_the_config_accepts(tmp_path) -> None:
    uuid = "3f2a5b9c-1d2e-4f3a-8b7c-6d5e4f3a2b1c"
    path = write_cassette(tmp_path / "v.jsonl", entry(1, args={"meta.data": {"id": uuid}}))
    found = [f for f in lint(load(path)) if f.kind == "volatile_arg"]
    assert [f.path for f in found] == ['$.args["meta.data"].id']
    printed = found[0].path.replace("$.args", "$", 1)
    rules = NormalizationRules.from_mapping({"drop": [printed]})
    assert not [f for f in lint(load(path, rules=rules)) if f.kind == "volatile_arg"]


def test_iter_leaves_walks_any_depth_in_document_order() -> None:
    value = {"a": [1, {"b": "x"}], "c": {}, "d": []}
    assert list(iter_leaves(value)) == [
        (("a", 0), 1), (("a", 1, "b"), "x"), (("c",), {}), (("d",), [])
    ]  # fmt: skip
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    assert list(iter_leaves(deep)) == [((0,) * 5000, "leaf")]


# -- the one finding type ----------------------------------------------------------------------


def test_one_finding_type_for_lint_and_diagnosis(tmp_path) -> None:
    assert LintFinding is Finding
    a = write_cassette(tmp_path / "a.jsonl", entry(1, response=1), entry(2, response=1))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, response=2), entry(2, response=1))
    result = diff_cassettes(load(a), load(b))
    assert result.findings and all(type(f) is Finding for f in result.findings)
    first = result.findings[0].to_diff_json()
    assert set(first) >= {"kind", "seqs", "message", "action"}
    lint_finding = Finding(kind="repeated_key", seq=1, message="m", seqs=(1, 2))
    assert lint_finding.to_check_json() == {
        "kind": "repeated_key", "seq": 1, "path": None, "message": "m", "seqs": [1, 2]
    }  # fmt: skip


# -- one home for runs -----------------------------------------------------------------------


def test_one_task_order_for_pairs_and_groups() -> None:
    from cassette_tui.core.format.multi_run import RunInfo, group_runs, task_order, task_pairs

    runs = [
        RunInfo(task, trial, reward, calls=3, index=i)
        for i, (task, trial, reward) in enumerate(
            [("b", 0, 1.0), ("10", 1, 0.0), ("-1", 0, 1.0), ("2", 0, 0.0), ("10", 0, 1.0),
             ("2", 1, 1.0), ("-1", 1, 0.0)]
        )
    ]  # fmt: skip
    order = ["-1", "2", "10", "b"]
    assert sorted({r.task for r in runs if r.task}, key=task_order) == order
    assert [g.task for g in group_runs(runs)] == order
    assert list(task_pairs(runs)) == order
    ten = next(g for g in group_runs(runs) if g.task == "10")
    assert [r.trial for r in ten.runs] == [0, 1]
    assert ten.pair is not None and ten.pair[0].passed is False and ten.pair[1].passed is True
