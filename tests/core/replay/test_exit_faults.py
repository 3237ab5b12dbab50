"""Files a run leaves get the mode of any new file, and a write that fails at exit (a full
disk) is one warning line, not Python's "Exception ignored in atexit callback"."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from cassette_tui.core.format.atomic import default_mode
from cassette_tui.core.loop.call_log import write_call_log
from cassette_tui.core.replay.report import CallRecord, ReplayReport
from support.factory import make_cassette

SOURCE = make_cassette([("lookup", {"key": "a"}, {"value": 1})])


def test_a_call_log_has_the_mode_of_other_new_files(tmp_path: Path) -> None:
    report = ReplayReport(calls=(CallRecord(1, "lookup", SOURCE.key(0)[1], 1, "hit"),))
    old = os.umask(0o027)
    try:
        path, _ = write_call_log(report, SOURCE, tmp_path / "run-01.jsonl")
        assert stat.S_IMODE(path.stat().st_mode) == default_mode() == 0o640
    finally:
        os.umask(old)


#: records two calls, then the disk "fills": its cassette's last bytes cannot be written at
#: exit (the file handle now writes to /dev/full), nor can its report (a read-only folder
#: cannot be had as root, so the report's folder is removed under it)
FULL_AT_EXIT = textwrap.dedent(
    """
    import shutil, sys
    from pathlib import Path
    from cassette_tui.core import wrap_dispatcher

    d = wrap_dispatcher(lambda tool, args: {"ok": tool})
    d("a", {}); d("b", {})
    d.engine._fh = open("/dev/full", "wb")
    d.engine._fh.write(b"pending bytes")
    shutil.rmtree(Path(sys.argv[1]))
    print("done", flush=True)
    """
)


def test_a_full_disk_at_exit_is_one_warning_line(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(FULL_AT_EXIT)
    reports = tmp_path / "reports"
    reports.mkdir()
    env = {
        **os.environ,
        "CASSETTE_MODE": "record",
        "CASSETTE_PATH": str(tmp_path / "rec.jsonl"),
        "CASSETTE_REPORT": str(reports / "r.json"),
    }
    proc = subprocess.run(
        [sys.executable, str(agent), str(reports)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.stdout == "done\n", proc.stderr
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, proc.stderr
    cassette_line = f"cassette-tui: warning: the cassette {tmp_path / 'rec.jsonl'} could not"
    assert lines[0].startswith(cassette_line) and "No space left on device" in lines[0]
    assert lines[1].startswith("cassette-tui: warning: the report was not written")
    assert str(reports / "r.json") in lines[1]
