"""The fast paths of load and of the by-seq diff agree with the plain definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, load
from cassette_tui.core.diff.align import align_by_seq, seq_statuses
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.columns import NO_RESPONSE_HASH
from cassette_tui.core.format.digest import digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_bytes("".join(line + end for line in lines).encode("utf-8"))
    return path


LINES = [
    # sorted keys (the response cut before "seq"), nested "seq" inside the response
    json.dumps(
        {"args": {"q": "a"}, "response": {"x": {"seq": 9}, "seq": 3}, "seq": 1, "tool": "t"},
        sort_keys=True,
    ),
    # response last, an unknown field first
    '{"recorded_at": "now", "seq": 2, "tool": "t", "args": {"n": 1e20}, "response": [1, 2]}',
    # an integer past 64 bits in args: the stdlib decides the digest
    '{"seq": 3, "tool": "t", "args": {"n": 123456789012345678901234567890}, "response": 1}',
    # non-ASCII and a lone surrogate
    '{"seq": 4, "tool": "t", "args": {"q": "caf\\u00e9 \\ud800"}, "response": "ok"}',
    # an error entry
    '{"seq": 5, "tool": "t", "args": {}, "error": {"type": "E", "message": "m"}}',
    # "error" as a key inside the response is fine
    '{"seq": 6, "tool": "u", "args": {"a": [1, 2.5]}, "response": {"error": null}}',
]


@pytest.mark.parametrize("end", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", [False, True])
def test_fast_index_matches_full_parse(tmp_path: Path, end: str, bom: bool) -> None:
    path = _write(tmp_path / "c.jsonl", LINES, end)
    if bom:
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    c = load(path)
    assert len(c) == len(LINES)
    for i, text in enumerate(LINES):
        record = json.loads(text)
        assert c.seq(i) == record["seq"] and c.tool(i) == record["tool"]
        assert c.digest(i) == digest(record["args"]), i
        assert c[i].args == record["args"]
        assert c.line(i) == i + 1
    assert c[0].response == {"x": {"seq": 9}, "seq": 3}


def test_last_line_without_newline_and_lenient_truncation(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(("\n".join(LINES[:2]) + "\n" + LINES[2]).encode())
    assert len(load(path)) == 3
    path.write_bytes(("\n".join(LINES[:2]) + "\n" + LINES[2][:20]).encode())
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.truncated and info.value.line == 3
    c = load(path, lenient=True)
    assert len(c) == 2 and c.report.truncated


@pytest.mark.parametrize(
    "line",
    [
        '{"seq": 1, "tool": "t", "args": {}, "response": {"a": 1}, "error": {"type": "E", "message": "m"}}',
        '{"args": {}, "response": 1, "error": {"type": "E", "message": "m"}, "seq": 1, "tool": "t"}',
    ],
)
def test_an_error_hidden_after_the_response_is_found(tmp_path: Path, line: str) -> None:
    path = _write(tmp_path / "c.jsonl", [line])
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert (info.value.line, info.value.field) == (1, "response")


def test_lines_over_many_read_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cassette_tui.core.format import _readahead as readahead

    monkeypatch.setattr(readahead, "CHUNK", 7)  # every line spans several reads
    path = _write(tmp_path / "c.jsonl", LINES + ["", "   "] + LINES[:1])
    c = load(path)
    assert [c.seq(i) for i in range(len(c))] == [1, 2, 3, 4, 5, 6, 1]
    assert [e.args for e in c] == [json.loads(t)["args"] for t in LINES + LINES[:1]]


def _entry(seq: int, tool: str, args: dict, response: object = None, error: object = None) -> str:
    record: dict[str, object] = {"seq": seq, "tool": tool, "args": args}
    if error is not None:
        record["error"] = error
    else:
        record["response"] = response
    return json.dumps(record)


def test_seq_rows_equal_the_plain_alignment(tmp_path: Path) -> None:
    a_lines = [
        _entry(1, "t", {"q": 1}, {"a": 1, "b": 2}),
        _entry(2, "t", {"q": 2}, {"status": 200}),
        _entry(3, "t", {"q": 3}, {"status": 200}),
        _entry(4, "u", {"q": 4}, 1),
        _entry(5, "t", {"q": 5}, 1),
        _entry(6, "t", {"q": 6}, error={"type": "E", "message": "m"}),
        _entry(7, "t", {"q": 1}, {"a": 1}),
        _entry(8, "t", {"q": 8}, 1),
    ]
    b_lines = [
        # the same value, other key order and spacing: same, not drift
        '{"seq": 1, "tool": "t", "args": {"q": 1}, "response": {"b":2,  "a":1}}',
        _entry(2, "t", {"q": 2}, {"status": 429}),
        _entry(3, "t", {"q": 3}, {"status": 200}),
        _entry(4, "v", {"q": 4}, 1),
        _entry(5, "t", {"q": 55}, 1),
        _entry(6, "t", {"q": 6}, 1),
        _entry(7, "t", {"q": 1}, {"a": 1.0}),
    ]
    a = load(_write(tmp_path / "a.jsonl", a_lines))
    b = load(_write(tmp_path / "b.jsonl", b_lines))
    expected = align_by_seq(a, b)
    for x, y in ((a, b), (b, a)):
        result = diff_cassettes(x, y)
        plain = align_by_seq(x, y)
        assert [r.status for r in plain] == seq_statuses(x, y)
        assert [result.rows[i] for i in range(len(plain))] == plain  # built one by one
        assert list(diff_cassettes(x, y).rows) == plain  # built all at once
        assert result.rows == plain
    statuses = [r.status for r in expected]
    assert statuses == [
        Status.SAME, Status.RESPONSE_DRIFT, Status.SAME, Status.OTHER_CALL,
        Status.ARGS_DRIFT, Status.RESPONSE_DRIFT, Status.RESPONSE_DRIFT, Status.ONLY_A,
    ]  # fmt: skip
    assert expected[1].error_b and not expected[1].error_a
    assert expected[5].error_a
    result = diff_cassettes(a, b)
    assert result.first_divergence == 1
    assert result.counts[Status.SAME] == 2 and result.counts[Status.ONLY_A] == 1
    # in-memory cassettes have no stored bytes: the exact comparison decides
    mem = diff_cassettes(Cassette.from_entries(list(a)), Cassette.from_entries(list(b)))
    assert list(mem.rows) == expected


def test_response_hashes_are_byte_identity(tmp_path: Path) -> None:
    a = load(_write(tmp_path / "a.jsonl", [_entry(1, "t", {}, {"a": 1}), _entry(2, "t", {}, 2)]))
    b = load(_write(tmp_path / "b.jsonl", [_entry(1, "t", {}, {"a": 1}), _entry(2, "t", {}, 3)]))
    ha, hb = a.response_hashes(), b.response_hashes()
    assert ha[0] == hb[0] and ha[1] != hb[1]
    # no stored bytes in memory: the column's mark, never a real hash
    assert list(Cassette.from_entries(list(a)).response_hashes()) == [NO_RESPONSE_HASH] * 2
    assert NO_RESPONSE_HASH not in ha and NO_RESPONSE_HASH not in hb


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    chunk=st.integers(min_value=len(b"\xef\xbb\xbf"), max_value=400),  # a BOM in one read
    blanks=st.lists(st.sampled_from(["", "  ", "\t"]), max_size=3),
    last_newline=st.booleans(),
    bom=st.booleans(),
)
def test_any_chunk_size_indexes_the_same_lines(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
    blanks: list[str],
    last_newline: bool,
    bom: bool,
) -> None:
    """The index reads the file in chunks and copies only the line across two of them:
    wherever the chunks end (inside a line, on its newline, lines longer than a chunk),
    the offsets, lengths, line numbers and entries are those of one whole read."""
    from cassette_tui.core.format import _readahead as readahead

    path = tmp_path / "c.jsonl"
    text = "\n".join(LINES[:3] + blanks + LINES[3:]) + ("\n" if last_newline else "")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    whole = load(path)
    monkeypatch.setattr(readahead, "CHUNK", chunk)
    parts = load(path)
    assert [parts.raw_line(i) for i in range(len(parts))] == [
        whole.raw_line(i) for i in range(len(whole))
    ]
    assert [parts.line(i) for i in range(len(parts))] == [whole.line(i) for i in range(len(whole))]
    assert [parts.seq(i) for i in range(len(parts))] == [1, 2, 3, 4, 5, 6]
    assert [e.args for e in parts] == [json.loads(t)["args"] for t in LINES]
