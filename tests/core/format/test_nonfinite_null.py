"""NaN, Infinity, -Infinity and null are four values in every comparison; absent is not
null in miss messages; written files and reports are strict JSON (issue 10)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import (
    CassetteMiss,
    NormalizationRules,
    Recorder,
    Replayer,
    load,
    wrap_dispatcher,
)
from cassette_tui.core.diff._drift import value_drift
from cassette_tui.core.format.jsontext import sorted_json_bytes
from cassette_tui.core.format.jsonvalue import decode_nonfinite, dumps_strict, encode_nonfinite
from cassette_tui.core.keys.nearest import leaf_differences
from hypothesis import given
from hypothesis import strategies as st
from support.factory import entry, write_cassette

FOUR = [math.nan, math.inf, -math.inf, None]


def strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"bare {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("j", range(4))
def test_four_values_in_every_comparison(i: int, j: int) -> None:
    a, b = {"v": FOUR[i], "k": 1}, {"v": FOUR[j], "k": 1}
    same = i == j
    assert (sorted_json_bytes(a) == sorted_json_bytes(b)) is same
    assert (value_drift(a, b) == []) is same
    assert (list(leaf_differences(a, b)) == []) is same
    # nested with another change: a NaN equal on both sides is not reported
    drift = value_drift({**a, "k": 1}, {**b, "k": 2})
    assert [d.path for d in drift] == (["$.k"] if same else ["$.k", "$.v"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_strict_encoding_round_trips(value: Any) -> None:
    text = dumps_strict(value)
    back = decode_nonfinite(strict(text))
    assert sorted_json_bytes(back) == sorted_json_bytes(value)
    assert encode_nonfinite(back) == strict(text)


def test_recorded_nan_is_strict_on_disk_and_replays_as_nan(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Recorder(path) as rec:
        rec.wrap(lambda t, a: {"loss": math.nan, "best": math.inf})("m", {"lr": math.nan})
    (line,) = path.read_text().splitlines()
    assert strict(line)["response"] == {
        "loss": {"$numberDouble": "NaN"},
        "best": {"$numberDouble": "Infinity"},
    }
    got = Replayer(load(path))("m", {"lr": math.nan})  # the NaN args digest matches
    assert math.isnan(got["loss"]) and got["best"] == math.inf


def test_replay_report_is_strict_json(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "m", {"r": 1}))
    report = tmp_path / "r.json"
    dispatch = wrap_dispatcher(lambda t, a: None, mode="replay", path=path, report=report)
    with pytest.raises(CassetteMiss):
        dispatch("m", {"r": math.inf})
    from cassette_tui.core.replay.report_sink import flush_all

    flush_all()
    doc = strict(report.read_text())
    assert doc["misses"][0]["args"] == {"r": {"$numberDouble": "Infinity"}}


def test_miss_keeps_absent_and_null_apart_and_proposes_the_nulls_preset(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "s", {"a": 1, "gone": None}))
    live = {"a": 1, "cabin": None}
    with pytest.raises(CassetteMiss) as info:
        Replayer(load(path))("s", live)
    text = str(info.value)
    assert "$.cabin: absent in the recording, null in the live call [missing]" in text
    assert "$.gone: null in the recording, absent in the live call [missing]" in text
    assert info.value.proposed_rule == "preset nulls"
    diffs = {d["path"]: d for d in info.value.nearest[0]["differences"]}
    assert diffs["$.cabin"]["absent"] == "recorded" and diffs["$.gone"]["absent"] == "live"
    loose = NormalizationRules.from_presets(["nulls"])
    assert Replayer(load(path, rules=loose))("s", live) == {"hits": 1}


def test_a_real_value_against_absent_proposes_nothing(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "s", {"a": 1}))
    with pytest.raises(CassetteMiss) as info:
        Replayer(load(path))("s", {"a": 1, "b": 0})
    assert info.value.proposed_rule is None
    assert "$.b: absent in the recording, live 0 [missing]" in str(info.value)


def test_case_32_agent_miss_says_absent_and_null(real: Path) -> None:
    folder = real / "bugcases" / "32_explicit_null_vs_absent"
    done = subprocess.run(
        [sys.executable, "agent.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "CASSETTE_REPORT": ""},
    )
    assert done.returncode == 1
    assert "$.cabin: absent in the recording, null in the live call" in done.stdout
    assert "'nulls' preset" in done.stdout
    line = done.stdout.split("nearest[0].differences = ", 1)[1]
    diffs = strict(line)
    assert [(d["path"], d["absent"], d["live"]) for d in diffs] == [
        ("$.cabin", "recorded", None),
        ("$.max_stops", "recorded", None),
    ]


def test_a_bare_nan_in_args_digests_as_the_live_call(tmp_path: Path) -> None:
    """Python's json writes bare NaN; the load's digest must be the canonical one (orjson
    would write NaN as null and give the digest of a null arg)."""
    from cassette_tui.core.format.digest import digest

    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"seq": 1, "tool": "m", "args": {"x": math.nan}, "response": 1}) + "\n"
    )
    assert load(path).key(0) == ("m", digest({"x": math.nan}))
    null = tmp_path / "n.jsonl"
    null.write_text(json.dumps({"seq": 1, "tool": "m", "args": {"x": None}, "response": 1}) + "\n")
    assert load(null).key(0) != load(path).key(0)
