"""The placeholder a big entry's line is built around (``_ahead.fresh_marker``, issue 31:
one ``uuid4`` a process, not one a line): each one new, from any thread, and none in the
line's other values by chance (the process's part is random)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from cassette_tui.core.mcp._ahead import fresh_marker


def test_markers_are_new_each_time_from_any_thread() -> None:
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda _: fresh_marker(), range(2000)))
    assert len(set(made)) == len(made)
    assert len({m.rpartition("-")[0] for m in made}) == 1


def test_each_process_has_its_own_random_part() -> None:
    code = "from cassette_tui.core.mcp._ahead import fresh_marker; print(fresh_marker())"
    got = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        .stdout.strip()
        .rpartition("-")[0]
        for _ in range(2)
    }
    assert len(got) == 2 and fresh_marker().rpartition("-")[0] not in got
