"""Non-finite numbers, null and absence in the headless commands (issue 10): every
``--json`` is strict JSON, NaN/Infinity/null stay four values, absent is not null."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.factory import entry, write_cassette


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"},
    )


def strict(text: str) -> Any:
    """``json.loads`` that refuses the bare NaN/Infinity strict parsers refuse."""

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: bare {name}")

    return json.loads(text, parse_constant=refuse)


def test_case_26_diff_json_is_strict_and_nan_is_not_a_number(real: Path) -> None:
    folder = real / "bugcases" / "26_nan_in_json_output"
    done = run_cli("diff", "--json", folder / "a.jsonl", folder / "b.jsonl")
    assert done.returncode == 1, done.stderr
    doc = strict(done.stdout)
    assert doc["first_divergence"]["status"] == "response_drift"
    (row,) = doc["rows"]
    (item,) = row["drift"]
    assert item["path"] == "$.loss"
    assert item["a"] == {"$numberDouble": "NaN"} and item["b"] == 0.31
    checked = run_cli("check", "--json", folder / "a.jsonl")
    strict(checked.stdout)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (float("nan"), None),
        (float("inf"), None),
        (float("-inf"), None),
        (float("nan"), float("inf")),
        (float("inf"), float("-inf")),
    ],
    ids=["nan-null", "inf-null", "-inf-null", "nan-inf", "inf--inf"],
)
def test_four_values_differ_in_diff_and_json(tmp_path: Path, a: Any, b: Any) -> None:
    pa = tmp_path / "a.jsonl"
    pb = tmp_path / "b.jsonl"
    pa.write_text(json.dumps(entry(1, "m", {"r": 1}, response={"v": a})) + "\n")
    pb.write_text(json.dumps(entry(1, "m", {"r": 1}, response={"v": b})) + "\n")
    done = run_cli("diff", "--json", pa, pb)
    assert done.returncode == 1, done.stdout
    (item,) = strict(done.stdout)["rows"][0]["drift"]
    assert item["a"] != item["b"]
    assert item["absent"] is None  # a real value on both sides, not an absence


def test_same_nan_on_both_sides_is_same(tmp_path: Path) -> None:
    body = json.dumps(entry(1, "m", {"r": 1}, response={"v": float("nan")})) + "\n"
    (tmp_path / "a.jsonl").write_text(body)
    (tmp_path / "b.jsonl").write_text(body)
    done = run_cli("diff", "--json", tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    assert done.returncode == 0, done.stdout
    assert strict(done.stdout)["first_divergence"] is None


def test_case_32_diff_keeps_absent_and_null_apart_and_proposes_nulls(real: Path) -> None:
    folder = real / "bugcases" / "32_explicit_null_vs_absent"
    human = run_cli("diff", folder / "recorded.jsonl", folder / "live.jsonl")
    assert "$.cabin absent in A, null in B" in " ".join(human.stdout.split())
    assert "+ null (absent in A)" in human.stdout
    doc = strict(run_cli("diff", "--json", folder / "recorded.jsonl", folder / "live.jsonl").stdout)
    items = {d["path"]: d for d in doc["rows"][0]["drift"]}
    assert items["$.cabin"]["absent"] == "a" and items["$.cabin"]["b"] is None
    (miss,) = [f for f in doc["findings"] if f["kind"] == "args_miss"]
    assert miss["evidence"]["presets"] == ["nulls"]


def test_written_cassette_is_strict_and_reads_back_nan(tmp_path: Path) -> None:
    src = write_cassette(
        tmp_path / "src.jsonl",
        entry(1, "m", {"x": float("nan")}, response={"v": float("-inf"), "n": None}),
    )
    out = tmp_path / "out" / "imported.jsonl"
    # import (native cassettes pass through) writes the cassette with save()
    from cassette_tui.core import load, save

    save(load(src), out)
    line = out.read_text(encoding="utf-8")
    record = strict(line)
    assert record["args"] == {"x": {"$numberDouble": "NaN"}}
    assert record["response"] == {"v": {"$numberDouble": "-Infinity"}, "n": None}
    back = load(out)
    assert back.key(0) == load(src).key(0)  # the same args digest: NaN read back as NaN
    assert back[0].response["v"] == float("-inf") and back[0].response["n"] is None
