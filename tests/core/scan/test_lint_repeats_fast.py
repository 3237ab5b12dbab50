"""Lint classifies a repeated key without reading its recordings again when what its pass
kept of them (failed or not, identity headers) leaves no other kind, or when they store
the same outcome bytes (``outcome.same_stored_outcomes``): the kinds and sentences are those
``repeats.classify`` gives from the entries, on disk and in memory (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.keys.repeats import classify
from cassette_tui.core.scan.lint import REPEAT_KINDS, lint
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
    entries = list(on_disk)
    groups: dict[tuple[str, str], list[int]] = {}
    for i in range(len(on_disk)):
        groups.setdefault(on_disk.key(i), []).append(i)
    expected = {}
    for idxs in groups.values():
        if len(idxs) > 1:
            kind, why = classify([entries[i] for i in idxs])
            expected[tuple(entries[i].seq for i in idxs)] = (kind, why)
    for cassette in (on_disk, Cassette.from_entries(entries)):
        got = {f.seqs: f for f in lint(cassette) if f.kind in REPEAT_KINDS}
        assert {seqs: f.kind for seqs, f in got.items()} == {s: k for s, (k, _) in expected.items()}
        assert all(got[seqs].message.endswith(why) for seqs, (_, why) in expected.items())
