"""Outcome equality decided in one place (core/format/outcome.py): ``same_outcome`` and the
one cache ``entry_fingerprint`` and ``outcome_index`` share; and the format knowing no rules
(``digest.KeyRules``, ``NO_RULES``, ``keys.normalize.rules_of``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.digest import NO_RULES, digest
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.outcome import (
    entry_fingerprint,
    outcome_index,
    same_outcome,
    same_stored_outcomes,
)
from cassette_tui.core.keys.normalize import NormalizationRules, rules_of
from support.factory import entry, write_cassette

FORMAT = Path(__file__).resolve().parents[3] / "core" / "format"


def _pair(tmp_path: Path) -> tuple[Cassette, Cassette]:
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, response={"a": 1, "b": [1, 2]}),
        entry(2, response={"x": 1}),
        entry(3, error={"type": "Timeout", "message": "slow"}),
        entry(4, response={"n": 1}),
    )
    # 1: the same value, keys in another order; 2: byte-identical; 3: the same error;
    # 4: 1.0 is not 1
    b = write_cassette(
        tmp_path / "b.jsonl",
        '{"seq": 1, "tool": "search_docs", "args": {"q": "x"}, "response": {"b": [1, 2], "a": 1}}',
        entry(2, response={"x": 1}),
        entry(3, error={"type": "Timeout", "message": "slow"}),
        entry(4, response={"n": 1.0}),
    )
    return load(a), load(b)


def test_same_outcome_is_fingerprint_equality(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    assert [same_outcome(a, i, b, i) for i in range(4)] == [True, True, True, False]
    assert [same_outcome(a, i, b, i) for i in range(4)] == [
        entry_fingerprint(a, i) == entry_fingerprint(b, i) for i in range(4)
    ]
    memory = Cassette.from_entries(list(b))
    assert [same_outcome(a, i, memory, i) for i in range(4)] == [True, True, True, False]


def test_one_cache_for_entries_and_the_whole_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = _pair(tmp_path)
    first = entry_fingerprint(a, 0)
    fps = outcome_index(a).fingerprints
    assert fps[0] == first
    assert fps == [a.fingerprint(i) for i in range(len(a))]

    def no_read(i: int) -> bytes:
        raise AssertionError("read again")

    monkeypatch.setattr(a, "raw_line", no_read)
    assert [entry_fingerprint(a, i) for i in range(len(a))] == fps


def test_same_stored_outcomes_reads_bytes_only(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    same = write_cassette(tmp_path / "s.jsonl", entry(1), entry(2), entry(3))
    assert same_stored_outcomes(load(same), [0, 1, 2])
    assert not same_stored_outcomes(a, [0, 1])
    assert not same_stored_outcomes(Cassette.from_entries(list(load(same))), [0, 1])


def test_a_cassette_without_rules_holds_the_identity(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    assert a.rules is NO_RULES and NO_RULES.is_empty
    assert rules_of(a) == NormalizationRules()
    rules = NormalizationRules.from_presets(["uuid"])
    assert rules_of(a.with_rules(rules)) is rules
    args = {"id": "123e4567-e89b-12d3-a456-426614174000"}
    assert NO_RULES.apply("t", args) is args
    memory = Cassette.from_entries([Entry(1, "t", args, response=None)], rules=rules)
    assert memory.digest(0) == digest(rules.apply("t", args))


def test_format_imports_nothing_from_the_stages_above() -> None:
    """core/format knows no rules: none of its modules imports keys, diff, scan, replay,
    loop, importers or mcp (at the top or inside a function)."""
    above = ("keys", "diff", "scan", "replay", "loop", "importers", "mcp")
    bad = []
    for path in sorted(FORMAT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = "." * node.level + node.module
                if node.level >= 2 or "cassette_tui.core." in name:
                    first = name.lstrip(".").removeprefix("cassette_tui.core.").split(".")[0]
                    if first in above:
                        bad.append(f"{path.name}: {name}")
    assert bad == []


def test_json_lines_written_spaced_or_compact_load_alike(tmp_path: Path) -> None:
    record = entry(7, response={"k": [1, 2]}, args_digest=digest({"q": "x"}))
    compact = write_cassette(tmp_path / "c.jsonl", json.dumps(record, separators=(",", ":")))
    spaced = write_cassette(tmp_path / "s.jsonl", json.dumps(record))
    c, s = load(compact), load(spaced)
    assert (c.seq(0), c.stored_digest(0), c[0]) == (s.seq(0), s.stored_digest(0), s[0])
    assert same_outcome(c, 0, s, 0)
