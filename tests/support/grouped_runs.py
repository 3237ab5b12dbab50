"""Many runs of one task, written as a gate's runs folder (``run-NN.jsonl`` call logs and
``run-NN.end.json`` with the exit status), for the tree of where runs part.

The six runs share ``search_docs`` then ``read_file``; three go on to ``summarize`` and
pass, three ``retry`` and fail (two end there, one calls ``give_up`` too): the runs part at
step 3 into two branches, and the three failures take the ``retry`` branch.
"""

from __future__ import annotations

import json
from pathlib import Path

from .factory import entry, write_cassette

#: (calls after the shared two, exit status) per run, in run order
RUNS: list[tuple[list[str], int]] = [
    (["summarize"], 0),
    (["retry"], 1),
    (["summarize"], 0),
    (["retry", "give_up"], 1),
    (["summarize"], 0),
    (["retry"], 1),
]


def write_runs_folder(folder: Path) -> Path:
    """``folder`` (created) holding the six runs of ``RUNS``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, (tail, code) in enumerate(RUNS, 1):
        calls = [("search_docs", {"q": "retry budget"}), ("read_file", {"path": "docs/a.md"})]
        calls += [(tool, {"n": 1}) for tool in tail]
        records = [entry(seq, tool, args) for seq, (tool, args) in enumerate(calls, 1)]
        write_cassette(folder / f"run-{n:02d}.jsonl", *records)
        (folder / f"run-{n:02d}.end.json").write_text(json.dumps({"exit": code}))
    return folder
