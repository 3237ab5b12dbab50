"""Lint calls a key whose recordings all store the same outcome bytes a ``repeated_key``
without reading the entries (``Cassette.outcome_bytes``); that is what ``repeats.classify``
says of them, so the findings are those of an in-memory cassette, where every group is
classified from its entries (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassette_tui.core.cassette import Cassette, load
from cassette_tui.core.lint import REPEAT_KINDS, lint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

OUTCOMES = [
    {"response": {"hits": 1}},
    {"response": {"hits": 2}},
    {"response": {"status": 500, "request_id": "req_1"}},
    {"response": {"status": 500, "request_id": "req_2"}},
    {"response": "Error: timeout"},
    {"error": {"type": "TimeoutError", "message": "timed out"}},
    {"error": {"type": "ValueError", "message": "bad"}},
]
calls = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(range(len(OUTCOMES))),
        st.sampled_from([None, {"Accept": "text/csv"}, {"Accept": "application/json"}]),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(calls)
def test_repeat_findings_are_those_of_the_entries(tmp_path: Path, made: list[Any]) -> None:
    path = tmp_path / "c.jsonl"
    lines = []
    for seq, (q, outcome, headers) in enumerate(made, 1):
        record: dict[str, Any] = {"seq": seq, "tool": "t", "args": {"q": q}, **OUTCOMES[outcome]}
        if headers is not None:
            record["request_headers"] = headers
        lines.append(json.dumps(record, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    on_disk = load(path)
    in_memory = Cassette.from_entries(list(on_disk))

    def repeats(c: Cassette) -> list[tuple[str, str]]:
        return [(f.kind, f.message) for f in lint(c) if f.kind in REPEAT_KINDS]

    assert repeats(on_disk) == repeats(in_memory)
