"""While spilling, glibc's mmap threshold stays at 128 KiB (``spill.fix_mmap_threshold``,
issue 31): a large block freed does not raise it, so a later block of 1 MiB (a read-ahead
chunk, a column) is mapped on its own and unmapped when freed, not taken from a heap
whose free pages stay in the process. By default glibc raises the threshold to the size
of a mapped block freed (``mallopt(3)``), which left the 1M ``diff``'s heaps 10-20 MB
free and its peak 4 MB apart from run to run."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cassette_tui.core.format import spill

#: run in a fresh interpreter: a long-lived one (pytest's) holds free heap blocks that a
#: new block may reuse whatever the threshold. Prints the bytes the 4 MiB block added to
#: glibc's mapped blocks (``mallinfo2().hblkhd``), or ``skip`` without ``mallinfo2``.
_PROBE = r"""
import ctypes
from cassette_tui.core.format import spill

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd",
        "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

try:
    mallinfo2 = ctypes.CDLL(None).mallinfo2
except (OSError, AttributeError, TypeError):
    print("skip")
    raise SystemExit(0)
mallinfo2.restype = MallInfo2
with spill.spilling():
    big = bytearray(16 << 20)  # mapped (over any threshold), then freed: by default glibc
    del big  # would raise its threshold to 16 MiB here
    before = mallinfo2().hblkhd
    block = bytearray(4 << 20)  # the read-ahead's chunk size
    print(mallinfo2().hblkhd - before)
"""


def test_a_freed_large_block_does_not_raise_the_threshold_while_spilling() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    out = done.stdout.strip()
    if out == "skip":
        pytest.skip("glibc 2.33 or later only (mallinfo2): another allocator keeps its own policy")
    assert int(out) >= 4 << 20, f"a 4 MiB block came from a heap (mapped bytes +{out})"


def test_the_threshold_is_set_once() -> None:
    """The first ``spilling()`` block sets it; a second one does not call ``mallopt``."""
    with spill.spilling():
        pass
    assert spill._threshold_fixed
    with spill.spilling():
        assert spill._threshold_fixed
