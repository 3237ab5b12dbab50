"""A loaded cassette reads its entries later, by offset: it refuses a file changed since.

Before this guard, a cassette whose file was replaced after the load (an atomic save, an
editor's write) read its entries from the new file at the old offsets: another call's
response, or a JSON error naming the wrong line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cassette_tui.core import CassetteFormatError, load


def _line(seq: int, response: str) -> str:
    return json.dumps({"seq": seq, "tool": "t", "args": {"n": seq}, "response": response})


def _write(path: Path, *responses: str) -> Path:
    path.write_text("".join(_line(i, r) + "\n" for i, r in enumerate(responses, 1)))
    return path


def test_a_file_put_in_place_of_the_loaded_one_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    other = _write(tmp_path / "new.jsonl", "a much longer first response", "x")
    os.replace(other, path)  # what an atomic save does
    with pytest.raises(CassetteFormatError) as caught:
        cassette[1]
    assert caught.value.path == str(path)
    assert caught.value.line is None
    assert "changed on disk since it was loaded (another file is in its place)" in str(caught.value)
    assert "load it again" in str(caught.value)
    # a pass over every line refuses it the same way
    with pytest.raises(CassetteFormatError, match="another file is in its place"):
        list(cassette.entries_read())
    with pytest.raises(CassetteFormatError, match="another file is in its place"):
        list(cassette.lines_bytes())
    # loaded again, it reads the new file
    assert load(path)[0].response == "a much longer first response"


def test_a_file_cut_in_place_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    with open(path, "r+b") as fh:
        fh.truncate(10)
    with pytest.raises(CassetteFormatError, match=r"cut from \d+ to 10 bytes"):
        cassette[0]


def test_a_file_rewritten_in_place_to_the_same_size_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    before = path.stat()
    with open(path, "r+b") as fh:  # same inode, same size, other bytes
        fh.write(_line(1, "FIRST").encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    with pytest.raises(CassetteFormatError, match="rewritten in place"):
        cassette[0]


def test_lines_appended_after_the_load_keep_the_entries_readable(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    with open(path, "a") as fh:  # a recorder still writing
        fh.write(_line(3, "third") + "\n")
    assert [e.response for e in cassette] == ["first", "second"]
    assert len(load(path)) == 3


def test_an_entry_read_before_the_change_is_still_served(tmp_path: Path) -> None:
    """The check is made when the file is opened for entry access, once: an entry read
    before the change stays as read (the cassette's cache), others are refused."""
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    assert cassette[0].response == "first"
    cassette.close()  # the descriptor is dropped: the next read opens the file again
    os.replace(_write(tmp_path / "new.jsonl", "other"), path)
    assert cassette[0].response == "first"
    with pytest.raises(CassetteFormatError, match="another file is in its place"):
        cassette[1]


def test_with_rules_keeps_the_guard(tmp_path: Path) -> None:
    from cassette_tui.core.keys.normalize import NormalizationRules

    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path).with_rules(NormalizationRules())
    os.replace(_write(tmp_path / "new.jsonl", "other"), path)
    with pytest.raises(CassetteFormatError, match="another file is in its place"):
        cassette[0]


def _rewrite_in_place(path: Path, text: str) -> None:
    """What ``cp new path`` or an editor that saves in place does: same inode, cut, written."""
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(text.encode())


def test_a_file_rewritten_in_place_longer_is_refused(tmp_path: Path) -> None:
    """Grown in place looks like lines appended to ``stat``: the offsets now fall mid-line,
    which is the change, not a bad line of the cassette."""
    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path)
    _rewrite_in_place(path, _line(1, "a much longer first response") + "\n" + _line(2, "x") + "\n")
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        cassette[1]
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        list(cassette.entries_read())


def test_lines_moved_in_place_are_refused_not_served_as_other_calls(tmp_path: Path) -> None:
    """Same-length lines swapped and one appended, in place: each offset falls on a whole
    line, of another call. Served, entry 0 would be seq 2's call."""
    path = _write(tmp_path / "run.jsonl", "aaaa", "bbbb")
    cassette = load(path)
    _rewrite_in_place(
        path, _line(2, "bbbb") + "\n" + _line(1, "aaaa") + "\n" + _line(3, "c") + "\n"
    )
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        cassette[0]
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        list(cassette.entries_read())


def test_a_file_rewritten_in_place_after_the_first_read_is_refused(tmp_path: Path) -> None:
    """The descriptor kept open after the first read sees the same inode cut and written
    again (``cp`` over the file): the next entry is refused, not read at the old offsets."""
    path = _write(tmp_path / "run.jsonl", "first", "second", "third")
    cassette = load(path)
    assert cassette[0].response == "first"
    _rewrite_in_place(path, _line(1, "f") + "\n" + _line(2, "s") + "\n")
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        cassette[1]
    with pytest.raises(CassetteFormatError, match="changed on disk since it was loaded"):
        cassette[2]


def test_a_bad_response_of_an_unchanged_file_is_still_reported_by_line(tmp_path: Path) -> None:
    """A repeated key in a nested response is only seen when the entry is read: it stays
    a line error, even after lines were appended."""
    path = tmp_path / "run.jsonl"
    path.write_text(
        _line(1, "ok") + "\n" + '{"seq":2,"tool":"t","args":{},"response":{"a":1,"a":2}}\n'
    )
    cassette = load(path)
    with open(path, "a") as fh:
        fh.write(_line(3, "more") + "\n")
    with pytest.raises(CassetteFormatError) as caught:
        cassette[1]
    assert caught.value.line == 2
    assert "changed on disk" not in str(caught.value)


@pytest.mark.parametrize("cut", ["mid_line", "line_end"])
def test_a_file_cut_while_it_is_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: str
) -> None:
    """The file cut under the load, after its first chunk: before, a cut mid-line read as
    a last line "cut mid-write" at a line the file no longer had (a crash while
    recording?), and a cut at a line's end gave fewer entries without a word."""
    from cassette_tui.core.format import _readahead

    path = _write(tmp_path / "run.jsonl", *(f"response {i:04d}" for i in range(400)))
    size = path.stat().st_size
    line_end = path.read_bytes().index(b"\n", size // 2) + 1
    at = line_end - 10 if cut == "mid_line" else line_end
    chunks_of = _readahead.read_chunks

    def cut_after_first(fh: object, chunk_size: int, *, size: int) -> object:
        chunks = chunks_of(fh, chunk_size, size=size)  # type: ignore[arg-type]
        yield next(chunks)
        os.truncate(path, at)
        yield from chunks

    monkeypatch.setattr(_readahead, "CHUNK", 4096)
    monkeypatch.setattr(_readahead, "read_chunks", cut_after_first)
    with pytest.raises(CassetteFormatError) as caught:
        load(path)
    assert caught.value.line is None
    assert f"changed on disk while it was read (cut from {size} to {at} bytes)" in str(caught.value)
