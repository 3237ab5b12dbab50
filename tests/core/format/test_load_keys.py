"""``load(keys=True)``: the keys computed in the load's one read equal the key pass's (and
those of a replayer's start, ``Cassette.checked_answers``).

The app loads a file once and gets what alignment needs (every args digest and response
hash) from the bytes the index holds; a diff of a cassette loaded plainly computes them in
a second read (``Cassette.keys_job``). Both go through ``_line_keys.LineKeys``; these tests
hold them equal over random files (layouts, odd values, lines across read chunks, lines
out of seq order, rules), and the errors alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format._answers import NOT_PLAIN
from cassette_tui.core.format.cassette import dump_record, load, load_job
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.format.jobs import Progress
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


class DropKey:
    """Rules that drop the args key ``"ts"`` of every tool but ``keep``."""

    is_empty = False

    def apply(self, tool: str, args: Any) -> Any:
        if tool != "keep" and isinstance(args, dict):
            return {k: v for k, v in args.items() if k != "ts"}
        return args


def _line(seq: int, tool: str, args: Any, response: Any, layout: str, error: bool) -> str:
    record: dict[str, Any] = {"seq": seq, "tool": tool, "args": args}
    if error:
        record["error"] = {"type": "ToolError", "message": "boom"}
    else:
        record["response"] = response
    if layout == "spaced":
        return json.dumps(record)
    if layout == "sorted":
        return json.dumps(record, sort_keys=True)
    return dump_record(record).decode().rstrip("\n")


_entries = st.lists(
    st.tuples(
        st.sampled_from(["search", "keep", "read"]),
        st.one_of(
            st.dictionaries(st.sampled_from(["q", "ts", "k"]), _values, max_size=3),
            st.just({"x": float("nan")}),  # a NaN: the general parser reads the line
            st.just({"q": "same"}),  # repeated args: the remembered digest
        ),
        _values,
        st.sampled_from(["spaced", "sorted", "writer"]),
        st.booleans(),
    ),
    max_size=25,
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=_entries, chunk=st.integers(min_value=64, max_value=2048), swap=st.booleans(),
       ruled=st.booleans())  # fmt: skip
def test_keys_at_load_equal_the_key_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entries: list[tuple[str, Any, Any, str, bool]],
    chunk: int,
    swap: bool,
    ruled: bool,
) -> None:
    monkeypatch.setattr(readahead, "CHUNK", chunk)
    seqs = list(range(1, len(entries) + 1))
    if swap and len(seqs) > 2:  # parallel calls: lines in completion order
        seqs[0], seqs[2] = seqs[2], seqs[0]
    lines = [
        _line(seq, tool, args, response, layout, error)
        for seq, (tool, args, response, layout, error) in zip(seqs, entries, strict=True)
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    rules = DropKey() if ruled else None
    plain = load(path, rules=rules)
    keyed = load(path, rules=rules, keys=True)
    assert keyed._digests is not None  # computed by the load, no second read
    assert keyed.digests() == plain.digests()
    assert keyed.response_hashes() == plain.response_hashes()
    assert [keyed.seq(i) for i in range(len(keyed))] == sorted(seqs)
    # a replayer's start computes them in its own read (every line checked), and the
    # answers it reads fast are the entry parse's, type for type
    started = load(path, rules=rules)
    answers = started.checked_answers()
    assert answers is not None
    assert started.digests() == plain.digests()
    assert started.response_hashes() == plain.response_hashes()
    for i in range(len(started)):
        entry = started.owned_entry(i)
        fast = answers.read(i)
        if fast is not NOT_PLAIN:
            assert entry.error is None
            assert json.dumps(fast) == json.dumps(entry.response)
            assert repr(fast) == repr(entry.response)


def test_repeated_args_key_is_refused_at_load_as_by_the_key_pass(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(
        '{"seq": 1, "tool": "t", "args": {"q": 1}, "response": {}}\n'
        '{"seq": 2, "tool": "t", "args": {"q": 1, "q": 2}, "response": {}}\n',
        encoding="utf-8",
    )
    with pytest.raises(CassetteFormatError) as later:
        load(path).digests()
    with pytest.raises(CassetteFormatError) as at_load:
        load(path, keys=True)
    assert str(at_load.value) == str(later.value)
    assert at_load.value.line == 2 and at_load.value.field == "args"


def test_progress_in_lines_counts_the_lines_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``unit="lines"``: each event counts the lines indexed so far, against a total
    estimated from the bytes read, and the last one is exact."""
    monkeypatch.setattr(readahead, "CHUNK", 4096)
    path = tmp_path / "c.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for seq in range(1, 2001):
            fh.write(json.dumps({"seq": seq, "tool": "t", "args": {"i": seq}, "response": "x" * (seq % 50)}) + "\n")  # fmt: skip
    events: list[Progress] = []
    job = load_job(path, keys=True, unit="lines")
    try:
        while True:
            events.append(next(job))
    except StopIteration as stop:
        cassette = stop.value
    assert len(events) > 10 and all(e.unit == "lines" for e in events)
    done = [e.done for e in events]
    assert done == sorted(done) and done[-1] == len(cassette) == 2000
    assert events[-1].total == 2000
    assert all(e.total is not None and e.total >= e.done for e in events)
    middle = events[len(events) // 2]
    assert middle.total is not None and abs(middle.total - 2000) < 200  # an estimate
