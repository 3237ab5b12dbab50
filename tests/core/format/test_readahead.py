"""The read-ahead thread of the loader (core/format/_readahead.py): the same bytes as ``read`` in
turn, the thread gone once the iterator is closed, a read error raised in the caller."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format._readahead import read_chunks
from cassette_tui.core.format.errors import CassetteFormatError
from hypothesis import given, settings
from hypothesis import strategies as st


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "cassette-read-ahead"]


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000), chunk=st.integers(1, 700), ahead=st.booleans())
def test_the_chunks_are_the_file_in_order_with_or_without_the_thread(
    data: bytes, chunk: int, ahead: bool
) -> None:
    size = readahead.READ_AHEAD_MIN if ahead else 0
    with tempfile.TemporaryFile() as fh:
        fh.write(b"head" + data)
        fh.seek(4)  # from the file's position on
        got = list(read_chunks(fh, chunk, size=size))
    assert b"".join(got) == data
    assert all(len(c) == chunk for c in got[:-1])
    assert all(got)  # no empty chunk: the end is the end of the iteration
    assert not _readers()


def test_closing_early_stops_the_thread_and_leaves_the_file_readable(tmp_path: Path) -> None:
    f = tmp_path / "big.bin"
    f.write_bytes(bytes(range(256)) * 4096)  # 1 MB
    with open(f, "rb") as fh:
        chunks = read_chunks(fh, 1024, size=readahead.READ_AHEAD_MIN)
        first = next(chunks)
        assert first == bytes(range(256)) * 4
        assert len(_readers()) == 1  # the reader is ahead, blocked on its full queue
        chunks.close()
        assert not _readers()
        fh.read()  # the thread no longer touches the file


def test_a_read_error_is_raised_in_the_caller_after_the_chunks_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "c.bin"
    f.write_bytes(b"x" * 100)
    real_pread = os.pread

    def pread_failing_at_10(fd: int, n: int, at: int) -> bytes:
        if at >= 10:
            raise OSError(5, "Input/output error")
        return real_pread(fd, n, at)

    monkeypatch.setattr(readahead.os, "pread", pread_failing_at_10)
    with open(f, "rb") as fh:
        chunks = read_chunks(fh, 10, size=readahead.READ_AHEAD_MIN)
        assert next(chunks) == b"x" * 10
        with pytest.raises(OSError, match="Input/output error"):
            next(chunks)
    assert not _readers()


def test_a_failed_read_is_a_format_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text('{"seq": 1, "tool": "t", "args": {}, "response": 1}\n' * 10)

    def pread_failing(fd: int, n: int, at: int) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 0)
    monkeypatch.setattr(readahead.os, "pread", pread_failing)
    with pytest.raises(CassetteFormatError) as info:
        load(f)
    assert info.value.line is None
    assert str(info.value) == f"{f}: cannot read: Input/output error"
    assert not _readers()


def test_a_large_cassette_loads_the_same_read_ahead_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        f'{{"seq": {i}, "tool": "t{i % 3}", "args": {{"q": {i}}}, "response": "{"r" * (i % 97)}"}}'
        for i in range(1, 4001)
    ]
    lines.insert(1234, "")  # a blank line: line numbers shift
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(readahead, "CHUNK", 4096)  # lines across chunks
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 1 << 40)
    plain = load(f)
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN", 0)
    ahead = load(f)
    assert not _readers()
    assert len(ahead) == len(plain) == 4000
    for i in (0, 1233, 1234, 3999):
        assert ahead.line(i) == plain.line(i)
        assert ahead.raw_line(i) == plain.raw_line(i)
        assert ahead[i] == plain[i]
    assert ahead.line(1234) == 1236
