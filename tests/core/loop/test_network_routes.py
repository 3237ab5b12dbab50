"""Every way out of a replay, tried by a hostile agent (``agents/net_routes.py``) against
real listeners of the test's own (a TCP server thread and a UDP socket on 127.0.0.1, a
unix socket with a path, an abstract unix socket; never the internet), under the guard
(``--isolation guard``, forced) and under a network namespace where one can be had.

The guard refuses, in every Python that loads it: ``_socket.socket`` used directly,
``super(socket.socket, s).connect``, the C type dug out of the MRO, ``connect_ex``, UDP
``sendto``/``sendmsg``, an abstract unix socket the run did not bind, reverse lookups
(``gethostbyaddr``, ``getfqdn``, ``getnameinfo``), a ``ctypes`` look-up of libc's
``connect``. It lets through what it promises to: a unix socket with a path, an abstract
one the run bound, ``getnameinfo`` asked for numbers. What it cannot stop (a child
``python -I``, a child with a cleared environment, ``bash``'s ``/dev/tcp``) reaches the
listener, and the run says so: isolation ``guard (partial)``, each program in
``uncovered``, and the text names them and what the guard does not cover."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.loop._isolation import GUARD_NOT_COVERED, HOW_TO_NETNS, probe_netns
from cassette_tui.core.loop.agent import AgentCommand
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.loop.replay import ReplayResult, replay_job
from cassette_tui.tui.text.gate import gate_lines
from cassette_tui.tui.text.replay import replay_lines
from support.loop import agent_cmd, loop_cassette

NET_ROUTES = Path(__file__).resolve().parents[2] / "support" / "agents" / "net_routes.py"
REFUSED = [
    "c-socket", "super-connect", "mro-connect", "connect-ex", "udp", "sendmsg",
    "unix-abstract", "gethostbyaddr", "getfqdn", "getnameinfo", "ctypes-connect",
]  # fmt: skip
ALLOWED = ["unix-path", "unix-abstract-own", "getnameinfo-numeric"]
UNCOVERED = ["child-python-I", "child-env-cleared", "child-bash-tcp"]


class Listeners:
    """A TCP server and a UDP socket on one 127.0.0.1 port, a unix socket with a path and
    an abstract one; each counts what reached it."""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.path = str(folder / "l.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.path)
        self.unix.listen()
        self.name = f"cassette-net-{os.getpid()}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind("\0" + self.name)
        self.abstract.listen()
        self.reached = {"tcp": 0, "udp": 0, "unix": 0, "abstract": 0}
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._accept, args=(s, k), daemon=True)
            for s, k in ((self.tcp, "tcp"), (self.unix, "unix"), (self.abstract, "abstract"))
        ] + [threading.Thread(target=self._datagrams, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _accept(self, sock: socket.socket, kind: str) -> None:
        sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            self.reached[kind] += 1
            conn.close()

    def _datagrams(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                self.udp.recv(100)
            except OSError:
                continue
            self.reached["udp"] += 1

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(5)
        for sock in (self.tcp, self.udp, self.unix, self.abstract):
            sock.close()


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[Listeners]:
    found = Listeners(tmp_path)
    yield found
    found.close()


def every_route(tmp_path: Path, listeners: Listeners, isolation: str) -> ReplayResult:
    cmd = agent_cmd("all", str(listeners.port), listeners.path, listeners.name,
                    script=NET_ROUTES)  # fmt: skip
    options = LoopOptions(isolation=isolation, runs_dir=tmp_path / f"runs-{isolation}")
    return run_job(replay_job(loop_cassette(tmp_path), AgentCommand.parse(cmd), options))


def routes_of(result: ReplayResult) -> dict[str, dict[str, object]]:
    assert result.run.stdout is not None
    return json.loads(result.run.stdout.read_text(encoding="utf-8"))


def test_the_guard_refuses_every_python_route(tmp_path: Path, listeners: Listeners) -> None:
    result = every_route(tmp_path, listeners, "guard")
    run = result.run
    assert run.passed, run.stderr_tail
    found = routes_of(result)
    for route in REFUSED:
        assert found[route]["reached"] is False, (route, found[route])
        # getfqdn swallows the refusal and hands the address back: it did no lookup
        expect = "did no reverse lookup" if route == "getfqdn" else "network guard"
        assert expect in str(found[route]["error"]), route
    for route in ALLOWED:
        assert found[route]["reached"] is True, (route, found[route])
    # only the three programs the guard cannot be in reached the TCP listener, and the
    # abstract socket of the host was never reached; the path one was, once
    assert listeners.reached["tcp"] == len(UNCOVERED)
    assert listeners.reached["udp"] == 0 and listeners.reached["abstract"] == 0
    assert listeners.reached["unix"] == 1
    refused = {b["what"] for b in run.blocked}
    assert {"connection to", "datagram to", "message to", "reverse lookup of",
            "connection to abstract unix socket", "ctypes look-up of the C function"} <= refused  # fmt: skip


def test_what_the_guard_cannot_stop_is_named(tmp_path: Path, listeners: Listeners) -> None:
    result = every_route(tmp_path, listeners, "guard")
    run = result.run
    found = routes_of(result)
    assert all(found[route]["reached"] for route in UNCOVERED), found
    assert run.isolation == "guard (partial)"
    whys = {" ".join(u["argv"][:2]): u["why"] for u in run.uncovered}
    assert any("-I" in argv and "isolated" in why for argv, why in whys.items()), whys
    assert any("environment without the guard" in why for why in whys.values()), whys
    assert any(argv.startswith("bash") and "not Python" in why for argv, why in whys.items())
    doc = result.to_json()
    assert doc["run"]["isolation"] == "guard (partial)" and doc["run"]["uncovered"]
    assert doc["not_covered"] == list(GUARD_NOT_COVERED)
    text = [line.text for line in replay_lines(result, "loop.jsonl")]
    assert any(t.startswith("network: NOT off for every process") for t in text), text
    assert any(t.startswith("  not covered: programs that are not Python") for t in text)
    assert sum("ran without the guard:" in t for t in text) == 3, text


def test_the_guard_words_in_a_gate(tmp_path: Path, listeners: Listeners) -> None:
    """A gate under the guard says what it does not cover, in its text and its --json."""
    cmd = AgentCommand.parse(agent_cmd("unix-path", listeners.path, script=NET_ROUTES))
    options = LoopOptions(isolation="guard", runs_dir=tmp_path / "runs")
    result = run_job(gate_job(loop_cassette(tmp_path), cmd, options, runs=2))
    assert result.to_json()["not_covered"] == list(GUARD_NOT_COVERED)
    text = [line.text for line in gate_lines(result, "loop.jsonl")]
    assert any(t.startswith("network: off for Python only (guard") for t in text), text
    assert any("not covered: programs that are not Python" in t for t in text), text
    assert not any("ran without the guard" in t for t in text)


@pytest.mark.skipif(not probe_netns()[0], reason=f"no network namespace: {probe_netns()[1]}")
def test_a_namespace_cuts_off_every_route(tmp_path: Path, listeners: Listeners) -> None:
    result = every_route(tmp_path, listeners, "netns")
    run = result.run
    assert run.passed and run.isolation == "netns", run.stderr_tail
    found = routes_of(result)
    # the namespace's own loopback is up (an MCP host reaches the replay it serves there):
    # a datagram to 127.0.0.1 leaves without an error but lands in the namespace, never
    # on the host's listener (counted below)
    for route in ["c-socket", "connect-ex", "unix-abstract", *UNCOVERED]:
        assert found[route]["reached"] is False, (route, found[route])
    assert found["unix-path"]["reached"] is True  # the file system is shared: said
    assert listeners.reached["tcp"] == listeners.reached["udp"] == 0
    assert listeners.reached["abstract"] == 0
    assert result.to_json()["not_covered"] == [
        "unix sockets with a path (a local daemon behind one may reach the network)"
    ]


def test_no_namespace_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from cassette_tui.core.loop import _isolation

    _isolation.probe_netns.cache_clear()
    monkeypatch.setattr(_isolation.shutil, "which", lambda name: None)
    try:
        with pytest.raises(_isolation.IsolationError) as err:
            _isolation.netns()
        assert "unshare" in str(err.value) and HOW_TO_NETNS in str(err.value)
        assert HOW_TO_NETNS in _isolation.guard().detail
    finally:
        _isolation.probe_netns.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_a_user_other_than_root_gets_a_namespace() -> None:
    """``unshare -rn`` (an unprivileged user namespace) as the user ``nobody``, the prefix
    ``_isolation`` uses for anyone but root."""
    import shutil
    import subprocess

    setpriv = shutil.which("setpriv")
    bash = shutil.which("bash")
    if setpriv is None or bash is None or shutil.which("unshare") is None:
        pytest.skip("no setpriv/unshare/bash here")
    done = subprocess.run(
        [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "-r", "-n",
         bash, "-c", "exec 3<>/dev/tcp/127.0.0.1/9"],
        capture_output=True, text=True, timeout=60, check=False, cwd="/",
    )  # fmt: skip
    if "unshare:" in done.stderr:
        pytest.skip(f"unprivileged user namespaces are off here: {done.stderr.strip()}")
    # no interface but a loopback that is down: even 127.0.0.1 is unreachable
    assert done.returncode != 0 and "Network is unreachable" in done.stderr, done.stderr


@pytest.mark.skipif(not probe_netns()[0], reason=f"no network namespace: {probe_netns()[1]}")
def test_a_namespace_keeps_its_own_loopback_up(listeners: Listeners) -> None:
    """An agent reaches a server it starts itself on 127.0.0.1 inside its namespace (an MCP
    host over Streamable HTTP and the ``mcp replay --http`` standing in for its server),
    while the host's listener on the same address stays out of reach."""
    import subprocess
    import sys

    from cassette_tui.core.loop._isolation import netns

    script = (
        "import socket,sys\n"
        "own = socket.create_server(('127.0.0.1', 0))\n"
        "socket.create_connection(own.getsockname(), timeout=5).close()\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {listeners.port}), timeout=5)\n"
        "except OSError as exc:\n"
        "    print('host refused:', exc)\n"
        "else:\n"
        "    sys.exit('reached the host')\n"
    )
    done = subprocess.run(
        netns().argv([sys.executable, "-c", script]),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "host refused" in done.stdout
    assert listeners.reached["tcp"] == 0
