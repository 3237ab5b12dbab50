"""A hostile agent for the process-tree tests: ``tree_agent.py MODE ARG`` replays its first
recorded call (``lookup`` a; recording, its live tool answers ``{"value": 1}``), then:

``daemon PIDDIR``       double-forks a daemon (``setsid``, out of the agent's process
                        group and session), which writes its pid to PIDDIR and sleeps 600 s;
                        the agent exits 0 once the pid file is there.
``daemon-hang PIDDIR``  the same, then the agent writes its own pid and sleeps 600 s.
``forks PIDDIR``        starts 4 children, each with a grandchild in a new session, all
                        sleeping 600 s with their pids in PIDDIR; exits 0.
``flood MIB``           writes MIB MiB to stdout and 1 MiB to stderr, exits 0.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from cassette_tui.core import wrap_dispatcher


def live(tool: str, args: object) -> object:
    """The live tool of a recording (a replay serves the cassette's answer)."""
    return {"value": 1}


def note(folder: Path, name: str) -> None:
    tmp = folder / f".{name}.{os.getpid()}"
    tmp.write_text(str(os.getpid()))
    tmp.rename(folder / f"{name}-{os.getpid()}.pid")


def daemonise(folder: Path) -> None:
    """Double fork: the grandchild, in a session of its own, notes its pid and sleeps."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            note(folder, "daemon")
            time.sleep(600)
        os._exit(0)
    os.wait()
    deadline = time.monotonic() + 60
    while not list(folder.glob("daemon-*.pid")) and time.monotonic() < deadline:
        time.sleep(0.01)


def forks(folder: Path) -> None:
    for _ in range(4):
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()
                note(folder, "grandchild")
                time.sleep(600)
                os._exit(0)
            note(folder, "child")
            time.sleep(600)
            os._exit(0)
    deadline = time.monotonic() + 60
    while len(list(folder.glob("*.pid"))) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)


def main(mode: str, arg: str) -> int:
    wrap_dispatcher(live)("lookup", {"key": "a"})
    if mode in ("daemon", "daemon-hang"):
        daemonise(Path(arg))
        if mode == "daemon-hang":
            note(Path(arg), "agent")
            time.sleep(600)
    elif mode == "forks":
        forks(Path(arg))
    elif mode == "flood":
        block = b"x" * (1 << 20)
        for _ in range(int(arg)):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
        sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
