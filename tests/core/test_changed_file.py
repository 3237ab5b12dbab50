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
    from cassette_tui.core.normalize import NormalizationRules

    path = _write(tmp_path / "run.jsonl", "first", "second")
    cassette = load(path).with_rules(NormalizationRules())
    os.replace(_write(tmp_path / "new.jsonl", "other"), path)
    with pytest.raises(CassetteFormatError, match="another file is in its place"):
        cassette[0]
