"""A file's lines out of seq order (parallel calls written as they finish, numbered as
they were issued: docs/format.md) load in seq order; a repeated seq keeps the file order."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format.digest import digest
from cassette_tui.core.scan.lint import lint
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette


@pytest.mark.parametrize("chunk", [7, 1 << 22])
def test_lines_in_completion_order_load_in_seq_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(readahead, "CHUNK", chunk)  # 7: spans read back from before the chunk
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "plan", {"q": 0}),
        entry(4, "get", {"c": "C"}, response=33, batch=2),
        "",
        entry(2, "get", {"c": "L"}, response=21, batch=2),
        entry(3, "get", {"c": "O"}, response=4, batch=2),
        entry(5, "sum", {"t": 1}),
    )
    c = load(path)
    assert c.seqs == [1, 2, 3, 4, 5]
    assert [c.line(i) for i in range(5)] == [1, 4, 5, 2, 6]
    assert [e.args for e in c] == [{"q": 0}, {"c": "L"}, {"c": "O"}, {"c": "C"}, {"t": 1}]
    assert [e.response for _, e, _ in c.entries_read()] == [{"hits": 1}, 21, 4, 33, {"hits": 1}]
    assert c.digests() == [digest(e.args) for e in c]
    assert lint(c) == []
    assert c.index_of_seq(4) == 3


def test_a_repeated_seq_keeps_the_file_order(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl", entry(2, args={"q": "a"}), entry(1, args={"q": "b"}), entry(2)
    )
    c = load(path)
    assert c.seqs == [2, 1, 2]
    assert [(f.kind, f.seq) for f in lint(c) if f.kind == "seq_order"] == [
        ("seq_order", 1),
        ("seq_order", 2),
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=10**6), min_size=1, max_size=30, unique=True))
def test_any_line_order_of_unique_seqs_loads_sorted(seqs: list[int]) -> None:
    """Property: whatever order the lines of unique seqs stand in, the load gives them in
    seq order, each entry with its own line and args."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_cassette(Path(tmp) / "c.jsonl", *(entry(s, "t", {"s": s}) for s in seqs))
        c = load(path)
        assert c.seqs == sorted(seqs)
        assert [e.args["s"] for e in c] == sorted(seqs)
        line_of = {s: n for n, s in enumerate(seqs, 1)}
        assert [c.line(i) for i in range(len(c))] == [line_of[s] for s in sorted(seqs)]
