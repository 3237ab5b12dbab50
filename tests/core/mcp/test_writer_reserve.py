"""The disk reserved past a cassette's end for a big entry written next
(``CassetteWriter.reserve``, issue 31): not for less than ``RESERVE_FROM`` bytes, whose
``fallocate`` costs more than it saves; from it, blocks allocated past the end while the
file's size stays the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.mcp import _writer
from cassette_tui.core.mcp._writer import RESERVE_FROM, CassetteWriter


def test_a_small_reservation_is_not_made_and_a_big_one_is(tmp_path: Path) -> None:
    if _writer._FALLOCATE is None:
        pytest.skip("no fallocate on this system")
    path = tmp_path / "c.jsonl"
    writer = CassetteWriter(path, NormalizationRules())
    try:
        before = os.stat(path)
        writer.reserve(RESERVE_FROM - 1)
        small = os.stat(path)
        writer.reserve(4 * RESERVE_FROM)
        big = os.stat(path)
    finally:
        writer.close()
    assert small.st_blocks == before.st_blocks
    assert big.st_size == before.st_size
    if big.st_blocks == before.st_blocks:
        pytest.skip("this file system keeps no blocks past the end (fallocate refused)")
    assert big.st_blocks * 512 >= 4 * RESERVE_FROM
