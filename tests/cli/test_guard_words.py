"""The socket guard blocks the agent's Python only, and every place that names the
isolation says so: a bash child of a guarded agent still connects (``/dev/tcp``), so
``replay``/``gate`` say the network was not off for every process, name the bash child
that ran without the guard and what the guard does not cover; ``--json`` says
``guard (partial)``, the child in ``uncovered`` and the list in ``not_covered``; netns
cuts the bash child off too. Real agents, real sockets (a
listener of the test's own on 127.0.0.1, never the internet)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassette_tui.core.loop._isolation import GUARD_NOT_COVERED, probe_netns
from cassette_tui.tui.text.replay import GUARD_WORDS, PARTIAL_WORDS
from support.loop import loop_cassette
from support.paths import SCRIPT

GUARD_LINE = "network: off for Python only (guard; --isolation netns cuts off every process)"
PARTIAL_LINE = "network: NOT off for every process: the guard ran, but not in all of them"

#: replays its first recorded call, then has bash open a TCP connection to PORT; exit 0
#: when bash connected, 1 when it was refused
AGENT = """\
import subprocess, sys
from cassette_tui.core import wrap_dispatcher
wrap_dispatcher(lambda t, a: None)("lookup", {"key": "a"})
done = subprocess.run(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + sys.argv[1]])
sys.exit(0 if done.returncode == 0 else 1)
"""


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP listener on 127.0.0.1; the list collects the connections it accepted."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn.getpeername())
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(5)
    server.close()


def replay(
    tmp_path: Path, port: int, isolation: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    return subprocess.run(
        [str(SCRIPT), "replay", str(loop_cassette(tmp_path)), "--agent",
         f"{sys.executable} {agent} {port}", "--isolation", isolation, *extra],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_the_guard_says_it_blocks_python_only_and_a_bash_child_connects(
    tmp_path: Path, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    done = replay(tmp_path, port, "guard")
    assert GUARD_WORDS == GUARD_LINE and PARTIAL_WORDS == PARTIAL_LINE
    lines = done.stdout.splitlines()
    assert PARTIAL_LINE in lines, done.stdout
    assert f"  ran without the guard: bash -c exec 3<>/dev/tcp/127.0.0.1/{port} (not Python: the guard does not apply)" in lines  # fmt: skip
    assert "  not covered: " + "; ".join(GUARD_NOT_COVERED) in lines
    # what the words warn of: the agent's bash child reached the listener
    assert "result  passed (exit 0)" in done.stdout and accepted
    doc = json.loads(replay(tmp_path, port, "guard", "--json").stdout)
    assert doc["isolation"] == "guard (partial)" and doc["run"]["isolation"] == "guard (partial)"
    assert doc["run"]["uncovered"][0]["argv"][0] == "bash"
    assert doc["not_covered"] == list(GUARD_NOT_COVERED)


def test_netns_cuts_the_bash_child_off(tmp_path: Path, listener: tuple[int, list[object]]) -> None:
    if not probe_netns()[0]:
        pytest.skip(f"no network namespace here: {probe_netns()[1]}")
    port, accepted = listener
    done = replay(tmp_path, port, "netns")
    assert "network: off (netns)" in done.stdout and "failed (exit 1)" in done.stdout
    assert accepted == []


def test_the_isolation_option_help_says_what_each_blocks() -> None:
    done = subprocess.run([str(SCRIPT), "replay", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=60, check=False)  # fmt: skip
    text = " ".join(done.stdout.split())
    text = re.sub(r"(\w)- (\w)", r"\1-\2", text)  # click breaks a line after a hyphen
    assert "guard, a socket guard loaded into the agent's Python processes only" in text
    assert "a non-Python child, such as curl or bash, is not blocked" in text
