"""A spilled column's file is written at most ``spill.WRITE_PIECE`` (64 KiB) at a time,
and a column written through its map is let go a step at a time (issue 31, session 18).

Why: a kernel that keeps large page-cache folios for a file (Linux 6.18 on ext4) maps a
whole folio on one read fault, and a folio is as large as the write that filled it. The
spools wrote 512 KiB batches, so at 1M entries a few reads here and there made whole
8 MB columns resident between two turns of the pager, and the key alignment's peak
grew with the entries (docs/performance.md, "Where the time went": folios of spilled columns). Asserted by
count (the writes' sizes, the drops), not by resident bytes, which depend on the kernel.
"""

from __future__ import annotations

from array import array

import pytest
from cassette_tui.core.format import spill


def test_spool_writes_its_batches_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    with spill.spilling():
        spool = spill.Spool("q")
        real_write = spool._file.write

        def write(data: memoryview) -> int:
            sizes.append(memoryview(data).nbytes)
            return real_write(data)

        monkeypatch.setattr(spool._file, "write", write)
        batch = array("q", range(1 << 17))  # 1 MiB: one batch of the load's index
        spool.add(batch)
        spool.add(array("q", [7, 8, 9]))
        view = spool.view(array("q", [10]))
    assert sum(sizes) == (len(batch) + 4) * 8
    assert max(sizes) <= spill.WRITE_PIECE
    assert len(sizes) >= len(batch) * 8 // spill.WRITE_PIECE
    assert list(view[-4:]) == [7, 8, 9, 10]
    assert list(view[: 1 << 17]) == list(batch)


@pytest.mark.parametrize("make", ["on_disk", "spilled"])
def test_writes_through_the_map_let_go_a_step_at_a_time(
    make: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    drops: list[int] = []
    real_drop = spill._drop
    monkeypatch.setattr(spill, "_drop", lambda view: (drops.append(1), real_drop(view)))
    n = 1 << 17  # 1 MiB of 8-byte items: 16 pieces
    with spill.spilling():
        if make == "on_disk":
            column = spill.on_disk("q", n, -1)
            expected = [-1] * n
        else:
            source = array("q", range(n))
            column = spill.spilled(source)
            expected = list(source)
    assert list(column) == expected
    # one drop per piece written, not one for the whole column at its end
    assert len(drops) >= n * 8 // spill.WRITE_PIECE
