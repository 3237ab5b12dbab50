"""``--swap SEQ=OTHER.jsonl:SEQ`` (core/why/swap.py): one step answered as another run
answered it; a step is answered one way only."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.why.swap import Swap, SwapError, swapped_entries
from support.factory import write_cassette


def _runs(folder: Path) -> tuple[Path, Path]:
    def run(state: str) -> list[dict]:
        return [{"seq": i, "tool": "check", "args": {"step": i}, "response": {"state": f"{state}{i}"}}
                for i in (1, 2, 3)]  # fmt: skip

    return (
        write_cassette(folder / "fail.jsonl", *run("bad")),
        write_cassette(folder / "fix.jsonl", *run("good")),
    )


def test_a_swap_answers_the_step_as_the_other_run(tmp_path: Path) -> None:
    fail, fix = _runs(tmp_path)
    entries = swapped_entries(load(fail), [Swap.parse(f"2={fix}:3")])
    assert [e.response for e in entries] == [
        {"state": "bad1"},
        {"state": "good3"},
        {"state": "bad3"},
    ]
    assert entries[1].args == {"step": 2}  # the call still finds it


def test_one_step_swapped_twice_is_refused_naming_both(tmp_path: Path) -> None:
    """Two --swap of one seq used to keep the last silently, while both were printed as
    made: the step is answered one way, so the second is refused."""
    fail, fix = _runs(tmp_path)
    swaps = [Swap.parse(f"2={fix}:2"), Swap.parse(f"2={fix}:1")]
    with pytest.raises(
        SwapError, match=r"seq 2 is swapped twice \(fix.jsonl seq 2, fix.jsonl seq 1\)"
    ):
        swapped_entries(load(fail), swaps)
