"""Two runs of calls written as cassettes and diffed, as the diff tests need them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cassette_tui.core.diff.result import DiffResult, diff_job
from cassette_tui.core.format import spill
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.jobs import run_job

from support.factory import call_records, write_cassette


def diffed_calls(
    tmp: str, run: list[Any], other: list[Any], align: str, spilled: bool
) -> DiffResult:
    """The diff (with outcomes) of ``run`` and ``other`` (``call_records``' calls) written
    as ``a.jsonl`` and ``b.jsonl`` in the folder ``tmp``, aligned by ``align``; with
    ``spilled``, both cassettes' columns spilled to temporary files first."""
    a = write_cassette(Path(tmp) / "a.jsonl", *call_records(run))
    b = write_cassette(Path(tmp) / "b.jsonl", *call_records(other))
    if not spilled:
        return run_job(diff_job(load(a), load(b), align, outcomes=True))
    with spill.spilling():
        ca, cb = load(a), load(b)
        ca.spill_columns()
        cb.spill_columns()
        return run_job(diff_job(ca, cb, align, outcomes=True))
