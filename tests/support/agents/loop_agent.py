"""An agent for the debug-loop tests: ``loop_agent.py MODE [ARG]`` (run as a subprocess).

Its dispatcher is wrapped with ``wrap_dispatcher`` (the environment contract); its live
tools raise, so a call that is not replayed fails loudly. Its cassette is
``support.loop.LOOP_CASSETTE`` (``lookup`` a/b, ``fetch`` x/y).

Modes: ``one`` (only the first call), ``pass`` / ``fail`` (deterministic), ``flaky`` (same calls, random verdict),
``fork`` (a random draw picks which recorded ``fetch`` to call; ``x`` passes),
``network PORT`` (tries TCP to 127.0.0.1:PORT; exit 0 only if it connected), ``udp PORT``
(a datagram there and a name lookup; exit 3 when both were refused), ``child-network PORT``
(``network`` in a child Python process),
``unix PATH`` (connects to a unix socket; exit 0 if it connected), ``hang PIDDIR`` (starts
a child, writes both pids to PIDDIR, sleeps), ``pass-then-hang RUN PIDDIR`` (run 1 is
``pass``, every other run ``hang``: a gate with a completed run and hanging ones), ``crash`` (raises), ``abort`` (SIGABRT),
``miss`` (a call never recorded), ``argv`` (prints its arguments as JSON),
``none`` (wraps its dispatcher but makes no call, exit 0),
``overlap DIR`` (writes its start and end times to DIR, sleeps 0.3 s in between),
``record-hang PIDDIR`` (records one answered call, then ``hang``),
``crash-early`` (imports a module that does not exist, before any call),
``catch-miss`` (a call never recorded, the miss caught, exit 0),
``disk-full`` (its calls, then a write to ``/dev/full``: a real ``ENOSPC``),
``kill-self`` (its calls, then ``SIGKILL`` to itself, as the OOM killer would).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from cassette_tui.core import wrap_dispatcher


def live(tool: str, args: object) -> object:
    raise RuntimeError(f"live tool {tool} called in a test")


def main(argv: list[str]) -> int:
    mode = argv[0]
    if mode == "record-hang":  # records one answered call, starts a child, writes the pids
        answer = wrap_dispatcher(lambda tool, args: {"ok": True})
        answer("lookup", {"key": "a"})
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        (Path(argv[1]) / f"{os.getpid()}.pids").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
        return 0
    if mode == "crash-early":  # a refactor renamed a module: dies before its first call
        import retry_policy_v2  # type: ignore[import-not-found]  # noqa: F401
    dispatch = wrap_dispatcher(live)
    if mode == "none":  # wrapped, but replays nothing
        return 0
    dispatch("lookup", {"key": "a"})
    if mode == "argv":
        print(json.dumps(argv[1:]))
        return 0
    if mode == "one":
        return 0
    if mode == "pass":
        dispatch("lookup", {"key": "b"})
        return 0
    if mode == "fail":
        dispatch("lookup", {"key": "b"})
        return 1
    if mode == "flaky":
        dispatch("lookup", {"key": "b"})
        return 0 if random.random() < 0.5 else 1
    if mode == "fork":
        path = random.choice(["x", "y"])
        return 0 if dispatch("fetch", {"path": path})["text"] == "good" else 1
    if mode == "network":
        try:
            with socket.create_connection(("127.0.0.1", int(argv[1])), timeout=5):
                print("connected")
                return 0
        except OSError as exc:
            print(f"no connection: {exc!r}", file=sys.stderr)
            return 3
    if mode == "udp":  # a datagram to 127.0.0.1:PORT, and a name lookup
        refused = 0
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.sendto(b"leak", ("127.0.0.1", int(argv[1])))
            except OSError as exc:
                print(f"no datagram: {exc!r}", file=sys.stderr)
                refused += 1
        try:
            socket.getaddrinfo("cassette-tui.invalid", 80)
        except OSError as exc:
            print(f"no lookup: {exc!r}", file=sys.stderr)
            refused += 1
        return 3 if refused == 2 else 0
    if mode == "child-network":  # a Python child process tries the network
        return subprocess.call([sys.executable, __file__, "network", argv[1]])
    if mode == "unix":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(argv[1])
            s.sendall(b"hello")
        return 0
    if mode == "pass-then-hang" and argv[1] == "1":
        dispatch("lookup", {"key": "b"})
        return 0
    if mode == "pass-then-hang":
        mode, argv = "hang", argv[1:]
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        piddir = Path(argv[1])
        (piddir / f"{os.getpid()}.pids").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
        return 0
    if mode == "crash":
        raise RuntimeError("boom: the agent crashed")
    if mode == "abort":
        os.abort()
    if mode == "miss":
        dispatch("lookup", {"key": "zzz"})
        return 0
    if mode == "catch-miss":  # swallows the miss and reports success
        try:
            dispatch("lookup", {"key": "zzz"})
        except Exception as exc:
            print(f"caught {type(exc).__name__}, carrying on", file=sys.stderr)
        dispatch("lookup", {"key": "b"})
        return 0
    if mode == "disk-full":  # the calls were made; then a write fails for want of space
        dispatch("lookup", {"key": "b"})
        with open("/dev/full", "w") as full:
            full.write("x" * 65536)
            full.flush()
        return 0
    if mode == "kill-self":  # killed from outside, as the OOM killer would
        dispatch("lookup", {"key": "b"})
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "overlap":
        out = Path(argv[1])
        start = time.monotonic()
        time.sleep(0.3)
        (out / f"{os.getpid()}.span").write_text(f"{start} {time.monotonic()}")
        return 0
    print(f"unknown mode {mode}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
