"""The process between the runner and one agent run: its process tree ends with the run.

Run as a script by ``_runner.py`` (``python -I -S _reaper.py --parent PID --cap BYTES
--status FILE -- AGENT...``; standard library only, it costs one small interpreter start
per run), it:

- marks itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): a process the
  agent double-forks (a daemon, in a new session) is re-parented here, not to init;
- asks for ``SIGTERM`` when the runner dies (``PR_SET_PDEATHSIG``; after ``kill -9`` of
  ``cassette-tui gate`` itself), and starts the agent with ``SIGKILL`` as its own
  parent-death signal, in a process group of its own;
- copies the agent's stdout and stderr (pipes) to its own (the run's files), each cut at
  ``--cap`` bytes: what comes after is read and dropped, so the agent never blocks;
- when the agent exits, or on ``SIGTERM``/``SIGINT``/``SIGHUP`` (the runner's timeout or
  cancel, or its death), kills everything the agent left: its process group, then every
  child of this process (orphans come here) until none is left;
- writes ``--status``: ``{"exit", "signal", "stdout_dropped", "stderr_dropped",
  "left_behind", "exec_error"}`` (bytes dropped past the cap, processes killed after the
  agent, why the agent could not be started), and ends as the agent did (its exit status,
  or the same signal).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CHUNK = 1 << 16
#: seconds to read what is left in the pipes once every writer is gone
DRAIN_S = 5.0

_stop = False


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _on_stop(signum: int, frame: object) -> None:
    global _stop
    _stop = True


def _processes() -> list[tuple[int, int, int]]:
    """``(pid, ppid, pgid)`` of every live (not zombie) process in ``/proc``."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z":
            found.append((int(name), int(fields[1]), int(fields[2])))
    return found


def _children() -> list[int]:
    """The live (not zombie) children of this process."""
    me = os.getpid()
    return [pid for pid, ppid, _ in _processes() if ppid == me]


def _reap(agent: int, status: dict[str, int | None]) -> None:
    """Collect every child that ended; the agent's end goes into ``status``."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == agent and status.get("done") is None:
            status["done"] = 1
            if os.WIFSIGNALED(code):
                status["signal"] = os.WTERMSIG(code)
            else:
                status["exit"] = os.waitstatus_to_exitcode(code)


def _kill_tree(agent: int, status: dict[str, int | None]) -> int:
    """Kill the agent's group and every child of this process until none is left; the
    number of processes killed besides the agent."""
    killed = {pid for pid, _, pgid in _processes() if pgid == agent and pid != agent}
    with contextlib.suppress(OSError):
        os.killpg(agent, signal.SIGKILL)
    for _ in range(500):
        _reap(agent, status)
        left = [pid for pid in _children() if pid != agent or status.get("done") is None]
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            if pid != agent:
                killed.add(pid)
        time.sleep(0.005)
    _reap(agent, status)
    return len(killed)


def _start(argv: list[str], out_w: int, err_w: int) -> tuple[int, str]:
    """Fork and exec the agent; its pid and ``""``, or ``-1`` and why exec failed."""
    check_r, check_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # the agent
        try:
            os.close(check_r)
            os.setpgid(0, 0)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE,
                        signal.SIGCHLD, signal.SIGXFSZ):  # fmt: skip
                signal.signal(sig, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(check_w, f"{argv[0]}: {exc.strerror or exc}".encode(errors="replace"))
        os._exit(127)
    os.close(check_w)
    why = b""
    while True:
        data = os.read(check_r, 4096)
        if not data:
            break
        why += data
    os.close(check_r)
    if why:
        os.waitpid(pid, 0)
        return -1, why.decode(errors="replace")
    return pid, ""


def _write(path: str, end: dict[str, Any]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(end, fh)
    except OSError:
        pass


def main(args: list[str]) -> int:
    split = args.index("--")
    opts = dict(zip(args[:split:2], args[1:split:2], strict=True))
    argv = args[split + 1 :]
    cap = int(opts["--cap"])
    status_path = opts["--status"]
    for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(stop, _on_stop)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(opts["--parent"]):  # the runner died before the line above
        return 1
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the poll below
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    status: dict[str, int | None] = {"exit": None, "signal": None, "done": None}
    if _stop:  # stopped before the agent started: end as a killed run
        _write(status_path, {"exit": None, "signal": int(signal.SIGKILL), "exec_error": ""})
        os.kill(os.getpid(), signal.SIGKILL)
    agent, exec_error = _start(argv, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    written = {1: 0, 2: 0}
    dropped = {1: 0, 2: 0}
    pipes = {out_r: 1, err_r: 2}
    poller = select.poll()
    for fd in (*pipes, wake_r):
        poller.register(fd, select.POLLIN)
    left_behind = 0
    deadline: float | None = None
    ended = agent < 0
    if ended:
        status["done"] = 1
    while pipes or not ended:
        if not ended:
            _reap(agent, status)
            if status["done"] is not None or _stop:
                left_behind = _kill_tree(agent, status)
                ended, deadline = True, time.monotonic() + DRAIN_S
        if ended and deadline is None:
            deadline = time.monotonic() + DRAIN_S
        if deadline is not None and (not pipes or time.monotonic() > deadline):
            break  # ended: every pipe read to its end, or no more time to
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic()) * 1000
        try:
            ready = poller.poll(timeout)
        except InterruptedError:
            continue
        for fd, _ in ready:
            if fd == wake_r:
                with contextlib.suppress(OSError):
                    os.read(wake_r, 512)
                continue
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                poller.unregister(fd)
                os.close(fd)
                pipes.pop(fd)
                continue
            target = pipes[fd]
            room = max(0, cap - written[target])
            if room:
                keep = data[:room]
                with contextlib.suppress(OSError):
                    os.write(target, keep)
                written[target] += len(keep)
            dropped[target] += len(data) - min(room, len(data))
    if not ended:
        left_behind = _kill_tree(agent, status)
    end = {
        "exit": status["exit"],
        "signal": status["signal"],
        "stdout_dropped": dropped[1],
        "stderr_dropped": dropped[2],
        "left_behind": left_behind,
        "exec_error": exec_error,
    }
    _write(status_path, end)
    if status["signal"] is not None:
        sig: int = status["signal"]
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        signal.set_wakeup_fd(-1)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    if exec_error:
        return 127
    return status["exit"] if status["exit"] is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
