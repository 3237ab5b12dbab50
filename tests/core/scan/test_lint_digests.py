"""Lint reads every entry once and takes each args digest from the entry as parsed
(``Cassette.entry_digest``); those digests are the replay keys ``Cassette.digests()``
computes in its own pass, for any args (big integers, floats, NaN and infinities, nested
keys, non-ASCII text) and under normalization rules (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassette_tui.core.format.cassette import load
from cassette_tui.core.keys._rules import DropRule
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.scan.lint import entry_pass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(
        [{"$numberDouble": "NaN"}, {"$numberDouble": "-Infinity"}, "2026-12-01T10:00:00Z"]
    )
)
args = st.dictionaries(
    st.sampled_from(["q", "id", "trace", "é", "a.b"]),
    st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=8,
    ),
    max_size=4,
)
RULES = [
    NormalizationRules(),
    NormalizationRules((DropRule("trace"),)),
    NormalizationRules.from_presets(["uuid", "timestamp"]),
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(args, min_size=1, max_size=5), st.sampled_from(range(len(RULES))))
def test_lint_digests_are_the_replay_keys(tmp_path: Path, calls: list[Any], which: int) -> None:
    rules = RULES[which]
    path = tmp_path / "c.jsonl"
    path.write_text(
        "".join(
            json.dumps({"seq": s, "tool": "t", "args": a, "response": 1}) + "\n"
            for s, a in enumerate(calls, 1)
        ),
        encoding="utf-8",
    )
    inline = load(path, rules=rules)
    got = [entry_pass(inline, i, e, raw, last=False)[0] for i, e, raw in inline.entries_read()]
    assert got == load(path, rules=rules).digests()
