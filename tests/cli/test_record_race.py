"""Two ``record`` commands on one path: the first takes the file exclusively before its
agent starts, the second is refused before its agent runs, and no job removes or claims a
file it did not make. ``-o`` on a dangling symlink is refused, never followed. Real
processes: two ``cassette-tui record`` racing, their agents real Python programs."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.replay.recorder import Recorder
from support.paths import SCRIPT

#: records 3 calls answered with its name; leaves ``started-NAME`` when it starts
AGENT = """
import sys, time
from pathlib import Path
from cassette_tui.core import wrap_dispatcher
name = sys.argv[1]
(Path(sys.argv[2]) / f"started-{name}").write_text("")
d = wrap_dispatcher(lambda tool, args: {"who": name})
for i in range(3):
    d("step", {"i": i})
    time.sleep(0.3)
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return env


def _record(tmp_path: Path, name: str, output: str) -> subprocess.Popen[str]:
    agent = shlex.join([sys.executable, str(tmp_path / "agent.py"), name, str(tmp_path)])
    return subprocess.Popen(
        [str(SCRIPT), "record", "--agent", agent, "-o", output, "--timeout", "120"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.parametrize("stagger", [0.0, 0.05, 0.3])
def test_two_recorders_on_one_path_one_wins_whole(tmp_path: Path, stagger: float) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    first = _record(tmp_path, "A", "shared.jsonl")
    time.sleep(stagger)
    second = _record(tmp_path, "B", "shared.jsonl")
    done = {}
    for name, proc in (("A", first), ("B", second)):
        out, err = proc.communicate(timeout=180)
        done[name] = (proc.returncode, out, err)
    codes = sorted(code for code, _, _ in done.values())
    assert codes == [0, 2], done
    winner = next(n for n, (code, _, _) in done.items() if code == 0)
    loser = "B" if winner == "A" else "A"
    _, _, said = done[loser]
    assert "shared.jsonl: exists" in said and "never overwrites" in said, said
    assert not (tmp_path / f"started-{loser}").exists()  # refused before its agent ran
    cassette = load(tmp_path / "shared.jsonl")
    assert [e.response for e in cassette] == [{"who": winner}] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["agent.py", "shared.jsonl", "shared.end.json", f"started-{winner}"]
    )


def test_record_onto_a_dangling_symlink_is_refused_and_never_followed(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link.jsonl").symlink_to(elsewhere / "x.jsonl")
    proc = _record(tmp_path, "A", "link.jsonl")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 2, (out, err)
    assert "link.jsonl: exists (a symlink)" in err
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "started-A").exists()


def test_a_claim_opens_only_the_empty_file_it_names_and_only_once(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"")
    st = path.stat()
    claim = f"{st.st_dev}:{st.st_ino}"
    with pytest.raises(FileExistsError):
        Recorder(path, claim=f"{st.st_dev}:{st.st_ino + 1}")  # another file's claim
    with Recorder(path, claim=claim) as rec:
        with pytest.raises(FileExistsError):
            Recorder(path, claim=claim)  # a second recorder on the same claim (flock)
        rec.wrap(lambda tool, args: {"ok": 1})("t", {})
    with pytest.raises(FileExistsError):
        Recorder(path, claim=claim)  # no longer empty
    assert len(load(path)) == 1
    path.unlink()
    path.write_bytes(b"")  # the same name, another file
    new = path.stat()
    if (new.st_dev, new.st_ino) != (st.st_dev, st.st_ino):
        with pytest.raises(FileExistsError):
            Recorder(path, claim=claim)
