"""Bugcases of parallel calls, run from ``../shared/real/bugcases`` (skipped without it):

- 52: 24 lookups recorded from a thread pool of 8, then a summary: every call recorded
  once, seqs 1..25 unique, and three replays serve every call (no miss, nothing unused);
  lint finds nothing. The recorder now numbers calls as they are issued, so the
  lines may stand in completion order; the load reads them in seq order.
- 29: the same three parallel lookups in another order. Marked as the recorder marks
  parallel calls (``batch``) and with one answer changed, every alignment shows that call
  as response drift beside its twin, never as a call one run did not make.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.constants import BATCH_FIELD
from cassette_tui.core.scan.lint import lint


def _agent(folder: Path, tmp_path: Path, mode: str, cassette: Path, report: Path | None) -> str:
    env = {**os.environ, "CASSETTE_MODE": mode, "CASSETTE_PATH": str(cassette)}
    env.pop("CASSETTE_REPORT", None)
    if report is not None:
        env["CASSETTE_REPORT"] = str(report)
    done = subprocess.run(
        [sys.executable, str(folder / "agent.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_case_52_threaded_fanout_records_and_replays_every_call(real: Path, tmp_path: Path) -> None:
    folder = real / "bugcases" / "52_threaded_fanout_record"
    rec = tmp_path / "rec.jsonl"
    live_out = _agent(folder, tmp_path, "record", rec, None)
    assert "'n': 24" in live_out
    lines = [json.loads(x) for x in rec.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 25
    assert sorted(r["seq"] for r in lines) == list(range(1, 26))
    skus = [r["args"]["sku"] for r in lines if r["tool"] == "get_price"]
    assert sorted(skus) == sorted(f"SKU-{i}" for i in range(24))
    cassette = load(rec)
    assert cassette.seqs == list(range(1, 26))
    assert cassette[-1].tool == "summarize"  # issued after every lookup returned
    assert BATCH_FIELD not in cassette[-1].extra
    # a lookup that ran beside others names the first call of its batch, issued no later
    for e in cassette:
        if BATCH_FIELD in e.extra:
            assert 1 <= e.extra[BATCH_FIELD] <= e.seq and e.tool == "get_price"
    for i in range(3):
        report = tmp_path / f"rep{i}.json"
        assert "'n': 24" in _agent(folder, tmp_path, "replay", rec, report)
        data = json.loads(report.read_text(encoding="utf-8"))
        assert data["misses"] == [] and data["unused_seqs"] == []
    assert lint(load(rec)) == []  # what ``check`` reports: lines in completion order are fine


def _marked(source: Path, target: Path, answers: dict[str, int] | None = None) -> Path:
    """``source`` with its parallel ``get_weather`` calls marked as the recorder marks
    them, and some answers changed (``answers``: city -> temperature)."""
    out = []
    for text in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(text)
        if record["tool"] == "get_weather":
            record[BATCH_FIELD] = 1
            city = record["args"]["city"]
            if answers and city in answers:
                record["response"] = {"temp_c": answers[city]}
        out.append(json.dumps(record))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("align", ["auto", "seq", "key"])
def test_case_29_reordered_batch_with_a_flaky_answer_is_drift_side_by_side(
    real: Path, tmp_path: Path, align: str
) -> None:
    folder = real / "bugcases" / "29_parallel_calls_reordered"
    a = _marked(folder / "a.jsonl", tmp_path / "a.jsonl")
    b = _marked(folder / "b.jsonl", tmp_path / "b.jsonl", {"Oslo": 5})
    result = diff_cassettes(load(a), load(b), align)
    assert not {r.status for r in result.rows} & {Status.ONLY_A, Status.ONLY_B}
    drift = [r for r in result.rows if r.status is Status.RESPONSE_DRIFT]
    assert [(r.a_seq, r.b_seq) for r in drift] == [(2, 3)]  # Oslo beside Oslo
    first = result.findings[0]
    assert first.kind == "first_divergence" and first.evidence.get("parallel_order") is True
    assert not any("did not" in f.action for f in result.findings)
    # the same reorder without a changed answer stays the same run
    same = diff_cassettes(load(a), load(_marked(folder / "b.jsonl", tmp_path / "c.jsonl")), align)
    assert same.is_same and same.first_divergence is None
