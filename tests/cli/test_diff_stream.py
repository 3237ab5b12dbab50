"""``diff --json`` streams its rows (issue 8): the document is the one ``to_json`` builds,
byte for byte, the same under any PYTHONHASHSEED, and the diff runs as a job with progress
and cancellation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cassette_tui.core import load
from cassette_tui.core.diff.result import diff_cassettes, diff_job
from cassette_tui.core.format.jobs import Cancelled, CancelToken, run_job
from cassette_tui.tui.commands._output import json_text
from support.factory import entry, write_cassette


def _pair(tmp_path, n: int = 300):
    a = write_cassette(
        tmp_path / "a.jsonl",
        *(
            entry(i, "search" if i % 3 else "read", {"q": f"t{i % 7}"}, response={"v": i, "s": "a"})
            for i in range(1, n + 1)
        ),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        *(
            entry(i, "search" if i % 3 else "read", {"q": f"t{i % 5}"}, response={"v": i, "s": "b"})
            for i in range(1, n + 1)
        ),
    )
    return a, b


def _diff_json(a, b, *extra: str, seed: str = "0") -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(a), str(b), "--json", *extra],
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("align", ["seq", "key"])
def test_streamed_json_is_the_built_document(tmp_path, align) -> None:
    a, b = _pair(tmp_path)
    out = _diff_json(a, b, "--align", align)
    built = diff_cassettes(load(a), load(b), align).to_json()
    assert json.loads(out) == json.loads(json_text(built))
    assert json.loads(out)["rows"]
    # indented like every --json document: a row's fields on lines of their own
    assert b'\n      "status": ' in out


def test_json_does_not_change_with_the_hash_seed(tmp_path) -> None:
    a, b = _pair(tmp_path)
    outputs = {_diff_json(a, b, "--align", "key", seed=seed) for seed in ("0", "1", "123")}
    assert len(outputs) == 1


def test_diff_job_reports_progress_and_cancels(tmp_path) -> None:
    a, b = _pair(tmp_path, 5000)
    events = []
    result = run_job(diff_job(load(a), load(b), "key"), events.append)
    assert len(result.rows) >= 5000
    assert {"keys", "outcomes", "align"} <= {e.stage for e in events}
    token = CancelToken()
    job = diff_job(load(a), load(b), "seq", token)
    next(job)
    token.cancel()
    with pytest.raises(Cancelled):
        run_job(job)


def test_rows_json_job_emits_rows_without_caching_drift(tmp_path) -> None:
    a, b = _pair(tmp_path)
    result = diff_cassettes(load(a), load(b))
    rows: list = []
    count = run_job(result.rows_json_job(rows.append))
    assert count == len(rows) == sum(1 for r in result.rows if r.status.value != "same")
    assert result._drift == {}


def test_the_text_of_every_row_keeps_no_drift_and_counts_the_rest(tmp_path) -> None:
    """``diff --limit 0`` writes each row's drift and lets it go (memory does not grow with
    the rows); a limit still says how many rows are left out."""
    from cassette_tui.core.diff.model import Status
    from cassette_tui.tui.commands._output import Layout
    from cassette_tui.tui.commands.diff import _rows_lines

    a, b = _pair(tmp_path)
    result = diff_cassettes(load(a), load(b))
    differ = len(result.rows) - result.counts[Status.SAME]
    lines = [line.plain for line in _rows_lines(result, 0, False, Layout(100, False))]
    row_lines = lines[3:]  # after the blank line, the title and the column heads
    assert sum(1 for line in row_lines if not line.startswith(" ")) == differ > 0
    assert result._drift == {}  # nothing kept
    cut = [line.plain for line in _rows_lines(result, 5, False, Layout(100, False))]
    assert cut[-1].startswith(f"... {differ - 5} more rows")
