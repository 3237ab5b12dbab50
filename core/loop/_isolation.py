"""Network isolation of a replayed agent (replays run with networking disabled).

Two ways, the stronger first:

``netns``  the agent starts in a new, empty network namespace (``unshare -n``; as a user
           other than root ``unshare -rn``, an unprivileged user namespace). It has no
           interface but its own loopback: every connection out fails, whatever the
           language, and nothing reaches the host's listeners, 127.0.0.1 included. The
           namespace's loopback is brought up (``LOOPBACK_UP``) so the agent reaches what
           it serves itself inside it: ``cassette-tui mcp replay --http``, which an MCP
           host over Streamable HTTP starts to stand in for its server.
``guard``  where namespaces are not allowed: ``guard/sitecustomize.py`` is put first on
           ``PYTHONPATH``, so every Python process of the agent that loads it refuses
           every connection but to unix sockets, and every DNS lookup, and logs what it
           refused and the programs started without it. What it does not cover is
           ``GUARD_NOT_COVERED``, said wherever a result names it; the run's result says
           when the guard never loaded, or which programs ran without it.

Either way a unix socket with a path stays reachable (the file system is shared): a local
daemon behind one may reach the network for the agent. How to get a namespace where there
is none: ``HOW_TO_NETNS``.

``choose(None)`` picks ``netns`` when a probe (``unshare ... true``) succeeds, else
``guard``; ``choose("netns")`` raises :class:`IsolationError` when it cannot be had.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..format.constants import ENV_GUARD_LOG
from ..format.errors import CassetteError

#: the isolation modes, strongest first
ISOLATIONS = ("netns", "guard")
#: the folder holding the guard's ``sitecustomize.py``
GUARD_DIR = Path(__file__).resolve().parent.parent / "replay" / "guard"
#: where the guard appends what it refused (JSON lines); set per run
GUARD_LOG_ENV = ENV_GUARD_LOG


#: what the guard does not cut off, one phrase each (every result that names it says so)
GUARD_NOT_COVERED = (
    "programs that are not Python (curl, bash's /dev/tcp, node)",
    "Python started with -I, -E or -S, or with an environment without the guard's variables",
    "C code that calls connect() itself (an extension module, a raw system call)",
    "unix sockets with a path (a local daemon behind one may reach the network)",
)
#: what a network namespace does not cut off
NETNS_NOT_COVERED = ("unix sockets with a path (a local daemon behind one may reach the network)",)
#: how to get a network namespace where the probe found none
HOW_TO_NETNS = (
    "a network namespace needs root or unprivileged user namespaces: install util-linux "
    "(unshare), and allow them (sysctl kernel.unprivileged_userns_clone=1 on Debian, "
    "user.max_user_namespaces above 0, kernel.apparmor_restrict_unprivileged_userns=0 on "
    "Ubuntu 24.04; in a container, a seccomp profile that allows unshare)"
)


class IsolationError(CassetteError):
    """The requested isolation cannot be had here (the message says why)."""


@dataclass(frozen=True)
class Isolation:
    """How a replay's network is switched off.

    Attributes:
        name: ``"netns"`` or ``"guard"``.
        prefix: arguments run before the agent's own (``["unshare", "-n", "--"]``).
        detail: one line for a person (how it was set up).
        not_covered: what it does not cut off, one phrase each.
    """

    name: str
    prefix: tuple[str, ...] = ()
    detail: str = ""
    not_covered: tuple[str, ...] = ()

    def argv(self, agent_argv: list[str]) -> list[str]:
        """The full argument list for one run."""
        return [*self.prefix, *agent_argv]

    def env(self, base: Mapping[str, str], guard_log: Path) -> dict[str, str]:
        """``base`` plus what this isolation needs: for the guard, its folder first on
        ``PYTHONPATH`` and ``CASSETTE_GUARD_LOG`` (set for ``netns`` too, unused there)."""
        env = dict(base)
        if self.name == "guard":
            old = env.get("PYTHONPATH")
            env["PYTHONPATH"] = str(GUARD_DIR) + (os.pathsep + old if old else "")
            env[GUARD_LOG_ENV] = str(guard_log)
        else:
            env.pop(GUARD_LOG_ENV, None)
        return env


#: run first inside the new namespace: its loopback up (SIOCGIFFLAGS, then SIOCSIFFLAGS
#: with IFF_UP; no ``ip`` command needed), then the agent in its place (exec). A failure to
#: bring it up leaves it down, as before: the agent still runs, offline.
LOOPBACK_UP = (
    "import fcntl,os,socket,struct,sys\n"
    "try:\n"
    " s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
    " f=struct.unpack('16sH14x',fcntl.ioctl(s,0x8913,struct.pack('16sH14x',b'lo',0)))[1]\n"
    " fcntl.ioctl(s,0x8914,struct.pack('16sH14x',b'lo',f|1))\n"
    " s.close()\n"
    "except OSError:\n"
    " pass\n"
    "os.execvp(sys.argv[1],sys.argv[1:])\n"
)


def _unshare_prefix() -> tuple[str, ...] | None:
    exe = shutil.which("unshare")
    if exe is None:
        return None
    # root may create a network namespace directly; anyone else needs a user namespace
    # (-r maps the caller to root inside it, which is what lets it own the new netns)
    return (exe, "-n", "--") if os.geteuid() == 0 else (exe, "-r", "-n", "--")


def _netns_prefix() -> tuple[str, ...] | None:
    """``unshare`` then ``LOOPBACK_UP`` (isolated: no site, no user paths) before the
    agent's own arguments."""
    prefix = _unshare_prefix()
    if prefix is None:
        return None
    return (*prefix, sys.executable, "-I", "-S", "-c", LOOPBACK_UP)


@functools.lru_cache(maxsize=1)
def probe_netns() -> tuple[bool, str]:
    """Whether a network namespace can be made here: ``(True, how)`` or ``(False, why)``.
    Runs ``unshare ... true`` once per process (about 2 ms) and caches the answer."""
    prefix = _unshare_prefix()
    if prefix is None:
        return False, "no unshare command (util-linux) on PATH"
    try:
        done = subprocess.run(
            [*prefix, "true"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"unshare failed: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return False, f"unshare refused: {why[0]}"
    return True, " ".join(prefix[:-1])


def netns() -> Isolation:
    """The network-namespace isolation.

    Raises:
        IsolationError: no namespace can be made here (the probe's reason).
    """
    ok, how = probe_netns()
    if not ok:
        raise IsolationError(
            f"no network namespace here ({how}); use --isolation guard, or get one: {HOW_TO_NETNS}"
        )
    prefix = _netns_prefix()
    assert prefix is not None
    return Isolation("netns", prefix, f"new network namespace ({how})", NETNS_NOT_COVERED)


def guard() -> Isolation:
    """The Python socket guard (always available); ``detail`` says why no namespace was
    had, when the probe found none."""
    ok, why = probe_netns()
    detail = f"Python socket guard, Python processes only ({GUARD_DIR / 'sitecustomize.py'})"
    if not ok:
        detail += f"; no network namespace: {why}; {HOW_TO_NETNS}"
    return Isolation("guard", (), detail, GUARD_NOT_COVERED)


#: the isolation of a replay whose new calls go live (``LoopOptions.new_calls``)
NEW_CALLS_LIVE = "none (new calls live)"


def new_calls_live() -> Isolation:
    """No isolation: a replay that answers its new calls live needs the network (the
    result says so; such a run is no offline replay unless the new calls were asked for)."""
    return Isolation(NEW_CALLS_LIVE, (), "network on: new calls go to the live tools")


def choose(requested: str | None = None) -> Isolation:
    """The isolation to use: ``requested`` (``"netns"`` or ``"guard"``), or the strongest
    available when ``None``.

    Raises:
        IsolationError: ``requested`` is unknown, or is ``"netns"`` and cannot be had.
    """
    if requested is None:
        return netns() if probe_netns()[0] else guard()
    if requested == "netns":
        return netns()
    if requested == "guard":
        return guard()
    raise IsolationError(f"unknown isolation {requested!r}; expected one of {ISOLATIONS}")
