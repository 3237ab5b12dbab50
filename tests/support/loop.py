"""Helpers of the debug-loop tests: the test agent (``agents/loop_agent.py``), its cassette,
and commands to run it with."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

from .paths import ROOT

LOOP_AGENT = Path(__file__).resolve().parent / "agents" / "loop_agent.py"
DEMO_AGENT = ROOT / "sample_cassettes" / "agent.py"

#: the cassette the test agent replays
LOOP_CASSETTE = [
    {"seq": 1, "tool": "lookup", "args": {"key": "a"}, "response": {"value": 1}},
    {"seq": 2, "tool": "lookup", "args": {"key": "b"}, "response": {"value": 2}},
    {"seq": 3, "tool": "fetch", "args": {"path": "x"}, "response": {"text": "good"}},
    {"seq": 4, "tool": "fetch", "args": {"path": "y"}, "response": {"text": "bad"}},
]


def agent_cmd(*args: str, script: Path = LOOP_AGENT) -> str:
    """An ``--agent`` template running ``script`` with this interpreter."""
    return shlex.join([sys.executable, str(script), *args])


def loop_cassette(folder: Path, name: str = "loop.jsonl") -> Path:
    """The test agent's cassette (``loop_agent.LOOP_CASSETTE``) written to ``folder``."""
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in LOOP_CASSETTE), encoding="utf-8")
    return path


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def still_alive(pids: list[int], within: float = 10.0) -> list[int]:
    """The pids still alive after up to ``within`` seconds: a SIGKILL sent to a process
    group is delivered asynchronously, so a loaded machine may show a killed child for a
    moment. A process the runner failed to kill (the test agents hang forever) stays."""
    deadline = time.monotonic() + within
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def pids_in(folder: Path) -> list[int]:
    """The pids the test agent (``hang`` mode) wrote into ``folder``: itself and its child."""
    return [int(p) for f in folder.glob("*.pids") for p in f.read_text().split()]


def miss_cassette(samples: Path, folder: Path) -> Path:
    """fail.jsonl recorded with ``top_k`` 3: the demo agent's search (top_k 5) misses."""
    lines = []
    for line in (samples / "fail.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["tool"] == "search_docs":
            record["args"]["top_k"] = 3
            record.pop("args_digest", None)
        lines.append(json.dumps(record))
    path = folder / "miss.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
