"""A bad run selector after a file that exists (``results.json#bogus``) says the selector
is wrong and what one looks like, never "no such file"; a file that does not exist is
still "no such file"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError
from cassette_tui.core.importers.sources import SELECTOR_HELP, open_cassette, parse_path_spec
from support.paths import SAMPLES, SCRIPT


def _tau_bench(tmp_path: Path) -> Path:
    """A small tau-bench results file: task 7, trials 0 and 1."""
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "get_order", "arguments": '{"id": "A1"}'}}],
    }  # fmt: skip
    result = {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": "{}"}
    traj = [{"role": "user", "content": "where is it"}, call, result]
    runs = [
        {"task_id": 7, "trial": 0, "reward": 1.0, "info": {}, "traj": traj},
        {"task_id": 7, "trial": 1, "reward": 0.0, "info": {}, "traj": traj},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(runs), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("suffix", "why"),
    [
        ("#bogus", "'bogus' is not a selector item"),
        ("#task=7,run=1", "'run=1' is not a selector item"),
        ("#", "nothing after '#'"),
    ],
)
def test_a_bad_selector_after_an_existing_file(tmp_path: Path, suffix: str, why: str) -> None:
    path = _tau_bench(tmp_path)
    with pytest.raises(CassetteFormatError) as info:
        parse_path_spec(f"{path}{suffix}")
    message = str(info.value)
    assert info.value.path == str(path)
    assert f"bad run selector {suffix!r}: {why}" in message and SELECTOR_HELP in message
    assert "no such file" not in message


def test_good_selectors_and_missing_files_are_unchanged(tmp_path: Path) -> None:
    path = _tau_bench(tmp_path)
    assert len(open_cassette(f"{path}#task=7,trial=1")) == 1
    with pytest.raises(CassetteFormatError, match="no such file"):
        open_cassette(f"{tmp_path / 'nope.json'}#bogus")
    # a file whose name holds the '#' opens as it is
    odd = tmp_path / "odd#bogus.jsonl"
    odd.write_text((SAMPLES / "fix.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    assert len(open_cassette(str(odd))) == 4


def test_diff_says_the_selector_is_wrong(tmp_path: Path) -> None:
    path = _tau_bench(tmp_path)
    done = subprocess.run(
        [SCRIPT, "diff", f"{path}#bogus", SAMPLES / "fix.jsonl"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"cassette-tui diff: {path}: bad run selector '#bogus'")
    assert "#task=N,trial=K" in done.stderr and "no such file" not in done.stderr
