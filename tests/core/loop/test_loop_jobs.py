"""The debug loop's core jobs against real agent subprocesses: the agent command, network
isolation (both modes), timeouts, crashes, parallel runs, cancellation, the gate's verdict
and where runs part."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cassette_tui.core.format.jobs import CancelToken, Progress, run_job
from cassette_tui.core.loop._isolation import IsolationError, choose, probe_netns
from cassette_tui.core.loop.agent import AgentCommand, AgentCommandError, resolve_agent
from cassette_tui.core.loop.gate import gate_job
from cassette_tui.core.loop.options import LoopOptions
from cassette_tui.core.loop.record import record_job
from cassette_tui.core.loop.replay import replay_job
from support.loop import DEMO_AGENT, agent_cmd, loop_cassette, still_alive
from support.paths import SAMPLES

NETNS = probe_netns()[0]
ISOLATIONS = [
    pytest.param(
        "netns",
        marks=pytest.mark.skipif(not NETNS, reason=f"no network namespace: {probe_netns()[1]}"),
    ),
    "guard",
]


def agent(*args: str) -> AgentCommand:
    return AgentCommand.parse(agent_cmd(*args))


# -- the agent command ----------------------------------------------------------------


def test_template_is_split_once_and_placeholders_stay_one_argument() -> None:
    cmd = AgentCommand.parse("python 'my agent.py' --cassette={cassette} --run {run}")
    assert cmd.argv == ("python", "my agent.py", "--cassette={cassette}", "--run", "{run}")
    hostile = "/tmp/a b'; touch /tmp/pwned; echo '.jsonl"
    assert cmd.render({"cassette": hostile, "run": "3"}) == [
        "python", "my agent.py", f"--cassette={hostile}", "--run", "3",
    ]  # fmt: skip


def test_a_cassette_path_with_quotes_and_semicolons_injects_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "a b'; touch PWNED; echo '"
    folder.mkdir()
    cassette = loop_cassette(folder)
    result = run_job(
        replay_job(cassette, agent("argv", "{cassette}"), LoopOptions(runs_dir=tmp_path / "r"))
    )
    assert result.run.passed
    out = result.run.stdout.read_text(encoding="utf-8")
    assert json.loads(out) == [str(cassette.resolve())]
    assert not any(p.name == "PWNED" for p in tmp_path.rglob("PWNED"))


@pytest.mark.parametrize("bad", ["", "   ", "python 'unclosed"])
def test_bad_templates_are_refused(bad: str) -> None:
    with pytest.raises(AgentCommandError):
        AgentCommand.parse(bad)


def test_agent_from_pyproject_and_cassette_toml(tmp_path: Path) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text('[tool.cassette]\nagent = "python agent.py --task retry-budget"\n')
    cmd = resolve_agent(None, py)
    assert cmd.argv == ("python", "agent.py", "--task", "retry-budget")
    assert cmd.cwd == tmp_path and "pyproject.toml" in cmd.source
    ct = tmp_path / "cassette.toml"
    ct.write_text('agent = "node agent.js"\n[normalize]\npresets = ["uuid"]\n')
    assert resolve_agent(None, ct).argv == ("node", "agent.js")
    assert resolve_agent("python other.py", ct).argv == ("python", "other.py")


def test_missing_or_bad_agent_config_says_where(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    with pytest.raises(AgentCommandError, match="--agent CMD"):
        resolve_agent(None)
    ct = tmp_path / "cassette.toml"
    ct.write_text("agent = 3\n")
    with pytest.raises(AgentCommandError, match="field 'agent'"):
        resolve_agent(None, ct)


def test_an_agent_that_cannot_start_is_bad_input(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    from cassette_tui.core.loop.agent import AgentNotStarted

    with pytest.raises(AgentNotStarted, match="no-such-agent-binary"):
        run_job(gate_job(cassette, AgentCommand.parse("no-such-agent-binary x"), runs=2))


# -- network isolation ----------------------------------------------------------------


class Listener:
    """A real TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_network_is_off_in_replay(tmp_path: Path, isolation: str) -> None:
    cassette = loop_cassette(tmp_path)
    listener = Listener()
    try:
        # the control: without isolation the same agent does connect
        live = subprocess.run(
            [sys.executable, agent_cmd("network", str(listener.port)).split()[1],
             "network", str(listener.port)],
            env={**os.environ, "CASSETTE_MODE": "replay", "CASSETTE_PATH": str(cassette)},
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert live.returncode == 0 and listener.accepted == 1, live.stderr
        result = run_job(
            replay_job(
                cassette,
                agent("network", str(listener.port)),
                LoopOptions(isolation=isolation, runs_dir=tmp_path / "runs"),
            )
        )
        time.sleep(0.3)  # let the listener's accept loop see anything in flight
    finally:
        listener.close()
    run = result.run
    assert run.status == "failed" and run.exit_code == 3, run.stderr_tail
    assert run.isolation == isolation
    assert listener.accepted == 1  # the control's connection only
    if isolation == "guard":
        assert run.blocked and f"127.0.0.1', {listener.port}" in run.blocked[0]["address"]
        assert "network guard" in run.stderr_tail


def test_guard_allows_local_unix_sockets(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    server.settimeout(60)
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        got.append(conn.recv(100))
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    result = run_job(replay_job(cassette, agent("unix", path), LoopOptions(isolation="guard")))
    thread.join(10)
    server.close()
    assert result.run.passed, result.run.stderr_tail
    assert got == [b"hello"] and result.run.blocked == []


def test_guard_runs_the_sitecustomize_it_shadows(tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "site"
    other.mkdir()
    marker = tmp_path / "marker"
    (other / "sitecustomize.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(other))
    cassette = loop_cassette(tmp_path)
    result = run_job(replay_job(cassette, agent("network", "9"), LoopOptions(isolation="guard")))
    assert marker.read_text() == "ran"
    assert result.run.isolation == "guard" and result.run.blocked


def test_guard_not_loaded_is_said(tmp_path: Path) -> None:
    """An agent that ignores PYTHONPATH (python -I) is not covered: the result says so."""
    cassette = loop_cassette(tmp_path)
    cmd = AgentCommand.parse(f"{sys.executable} -I -c pass")
    result = run_job(replay_job(cassette, cmd, LoopOptions(isolation="guard")))
    assert result.run.isolation == "guard (not loaded)"


def test_unknown_isolation() -> None:
    with pytest.raises(IsolationError):
        choose("vpn")


# -- timeouts, crashes --------------------------------------------------------------


def _pids(piddir: Path) -> list[int]:
    return [int(p) for f in piddir.glob("*.pids") for p in f.read_text().split()]


def test_a_hanging_agent_is_killed_at_its_timeout_with_its_children(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    result = run_job(replay_job(cassette, agent("hang", str(piddir)), LoopOptions(timeout=3)))
    assert result.run.status == "timeout" and not result.run.passed
    pids = _pids(piddir)
    assert len(pids) == 2
    assert not still_alive(pids)


@pytest.mark.parametrize(("mode", "needle"), [("crash", "boom"), ("abort", "")])
def test_a_crashing_agent(tmp_path: Path, mode: str, needle: str) -> None:
    cassette = loop_cassette(tmp_path)
    result = run_job(gate_job(cassette, agent(mode), LoopOptions(jobs=2), runs=2))
    assert [r.status for r in result.results] == ["crashed", "crashed"]
    assert needle in result.results[0].stderr_tail
    # a clean replay that failed, when the report shows the call made before the crash; an
    # abort that left no report shows no tool call: the gate measured nothing
    called = all(r.calls for r in result.results)
    assert result.verdict == ("deterministic" if called else "no_tool_call")
    assert result.passed == 0 and (called or mode == "abort")


# -- parallel runs, cancellation ----------------------------------------------------


def _max_overlap(spans: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


@pytest.mark.parametrize("jobs", [1, 2])
def test_runs_go_in_parallel_up_to_jobs(tmp_path: Path, jobs: int) -> None:
    cassette = loop_cassette(tmp_path)
    out = tmp_path / "spans"
    out.mkdir()
    events: list[Progress] = []
    result = run_job(
        gate_job(cassette, agent("overlap", str(out)), LoopOptions(jobs=jobs), runs=4),
        events.append,
    )
    assert result.passed == 4
    spans = [tuple(map(float, f.read_text().split())) for f in out.glob("*.span")]
    assert len(spans) == 4
    assert _max_overlap(spans) == jobs  # type: ignore[arg-type]
    assert [e.done for e in events] == [0, 1, 2, 3, 4]
    assert events[-1].message == "4 ✓ 0 ✗" and events[-1].unit == "runs"


def test_cancel_kills_every_process_group_and_keeps_the_partial_result(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    token = CancelToken()

    def cancel_when_started() -> None:
        deadline = time.monotonic() + 60
        while len(list(piddir.glob("*.pids"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        token.cancel()

    threading.Thread(target=cancel_when_started, daemon=True).start()
    result = run_job(
        gate_job(
            cassette,
            agent("hang", str(piddir)),
            LoopOptions(jobs=2, timeout=120),
            runs=5,
            token=token,
        )
    )
    assert result.cancelled
    assert [r.status for r in result.results] == ["cancelled"] * 5
    assert sum(r.exit_code is not None for r in result.results) == 2  # two had started
    assert result.verdict == "incomplete" and result.to_json()["cancelled"] is True
    pids = _pids(piddir)
    assert len(pids) == 4 and not still_alive(pids)


def test_a_partial_gate_keeps_the_runs_that_finished(tmp_path: Path) -> None:
    """Cancelled after some runs completed: those count, the rest are marked."""
    cassette = loop_cassette(tmp_path)
    token = CancelToken()
    seen: list[Progress] = []

    def sink(event: Progress) -> None:
        seen.append(event)
        if event.done == 2:
            token.cancel()

    result = run_job(
        gate_job(cassette, agent("pass"), LoopOptions(jobs=1), runs=6, token=token), sink
    )
    assert result.cancelled and result.runs == 2 and result.passed == 2
    assert [r.status for r in result.results][:2] == ["passed", "passed"]
    assert all(r.status == "cancelled" for r in result.results[2:])


# -- the gate -------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_deterministic_gate(tmp_path: Path, isolation: str) -> None:
    cassette = loop_cassette(tmp_path)
    result = run_job(gate_job(cassette, agent("pass"), LoopOptions(isolation=isolation), runs=3))
    doc = result.to_json()
    assert (doc["verdict"], doc["runs"], doc["passed"], doc["pass_rate"]) == (
        "deterministic", 3, 3, 1.0,
    )  # fmt: skip
    assert doc["isolation"] == isolation and doc["divergence"] is None
    assert all(r["isolation"] == isolation for r in doc["results"])
    failing = run_job(gate_job(cassette, agent("fail"), LoopOptions(isolation=isolation), runs=2))
    assert failing.verdict == "deterministic" and failing.passed == 0


def test_flaky_after_the_tool_layer(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    result = run_job(gate_job(cassette, agent("flaky"), LoopOptions(jobs=2), runs=20))
    assert result.verdict == "flaky" and 0 < result.passed < 20
    div = result.divergence
    assert div is not None and div.kind == "after_tool_layer" and div.calls == 2
    assert "after the tool layer" in div.message


def test_flaky_with_runs_taking_different_paths(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    runs = tmp_path / "runs"  # kept: the call logs are read below
    result = run_job(gate_job(cassette, agent("fork"), LoopOptions(jobs=2, runs_dir=runs), runs=20))
    assert result.verdict == "flaky"
    div = result.divergence
    assert div is not None and div.kind == "calls" and div.call == 2
    assert len(div.paths) == 2 and sum(len(p.runs) for p in div.paths) == 20
    by_path = {p.call["args"]["path"]: p for p in div.paths if p.call}
    assert by_path["x"].passed == len(by_path["x"].runs)  # x always passes
    assert by_path["y"].passed == 0
    assert {p.status for p in div.paths} == {"same", "args_drift"}
    assert "call 2" in div.message
    # every run's call log is a cassette of its own, numbered by call
    from cassette_tui.core import load

    log = load(result.results[0].call_log)
    assert [e.seq for e in log] == [1, 2] and log[0].extra["replayed_seq"] == 1


def test_misses_are_summed_and_logged(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    result = run_job(
        gate_job(cassette, agent("miss"), LoopOptions(runs_dir=tmp_path / "runs"), runs=3)
    )
    assert result.total("misses") == 3
    assert all(r.status == "crashed" for r in result.results)  # CassetteMiss is raised
    from cassette_tui.core import load

    log = load(result.results[0].call_log)
    assert log[1].error["type"] == "CassetteMiss" and log[1].args == {"key": "zzz"}


def test_demo_agent_flaky_mode_gates_flaky(tmp_path: Path) -> None:
    cmd = AgentCommand.parse(agent_cmd("--flaky", script=DEMO_AGENT))
    result = run_job(gate_job(SAMPLES / "fix.jsonl", cmd, LoopOptions(jobs=2), runs=20))
    assert result.verdict == "flaky"
    assert result.divergence is not None and result.divergence.kind == "after_tool_layer"
    plain = AgentCommand.parse(agent_cmd(script=DEMO_AGENT))
    assert run_job(gate_job(SAMPLES / "fix.jsonl", plain, runs=3)).passed == 3


def test_a_runs_dir_with_earlier_runs_is_never_overwritten(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    runs = tmp_path / "runs"
    run_job(gate_job(cassette, agent("pass"), LoopOptions(runs_dir=runs), runs=1))
    with pytest.raises(FileExistsError):
        run_job(gate_job(cassette, agent("pass"), LoopOptions(runs_dir=runs), runs=1))


# -- record -----------------------------------------------------------------------------


def test_record_refuses_an_existing_file_and_records_a_new_one(tmp_path: Path) -> None:
    cmd = AgentCommand.parse(agent_cmd(script=DEMO_AGENT))
    old = tmp_path / "old.jsonl"
    old.write_text("keep me\n")
    with pytest.raises(FileExistsError):
        run_job(record_job(cmd, old))
    assert old.read_text() == "keep me\n"
    result = run_job(record_job(cmd, tmp_path / "new.jsonl"))
    assert result.run.passed and result.cassette is not None
    assert [e.tool for e in result.cassette] == ["search_docs"] * 2 + ["read_file"] * 2
    assert result.run.isolation == "none (live)"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_datagrams_name_lookups_and_child_processes_are_cut_off_too(
    tmp_path: Path, isolation: str
) -> None:
    cassette = loop_cassette(tmp_path)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.5)
    listener = Listener()
    try:
        port = str(udp.getsockname()[1])
        result = run_job(replay_job(cassette, agent("udp", port), LoopOptions(isolation=isolation)))
        # the guard refuses both; in a namespace, whose own loopback is up (docker's
        # --network none alike), the datagram is sent but lands there, never here (below)
        refused = ("no datagram", "no lookup") if isolation == "guard" else ("no lookup",)
        assert all(r in result.run.stderr_tail for r in refused), result.run.stderr_tail
        child = run_job(
            replay_job(
                cassette,
                agent("child-network", str(listener.port)),
                LoopOptions(isolation=isolation),
            )
        )
        assert child.run.exit_code == 3, child.run.stderr_tail
        with pytest.raises(TimeoutError):
            udp.recvfrom(100)
        time.sleep(0.3)
    finally:
        udp.close()
        listener.close()
    assert listener.accepted == 0
    if isolation == "guard":
        whats = {b["what"] for b in result.run.blocked}
        assert whats == {"datagram to", "name lookup of"}
        assert child.run.blocked  # the child loaded the guard through PYTHONPATH


# -- a crash is read from the whole stderr ------------------------------------------------


def test_a_traceback_far_above_the_tail_still_makes_the_run_crashed(tmp_path: Path) -> None:
    """The demo agent's miss prints a traceback then the miss's nearest calls; an agent
    whose traceback is followed by 200 lines of stderr: both are ``crashed`` (the whole
    stderr is scanned), the tail kept for display is still the last lines."""
    from cassette_tui.core.loop._agent_run import TAIL_LINES, has_traceback
    from support.loop import miss_cassette

    demo = AgentCommand.parse(agent_cmd(script=DEMO_AGENT))
    result = run_job(
        replay_job(miss_cassette(SAMPLES, tmp_path), demo, LoopOptions(runs_dir=tmp_path / "m"))
    )
    assert result.run.status == "crashed" and result.run.misses == 1
    code = (
        "import sys, traceback\n"
        "try:\n    raise RuntimeError('boom')\nexcept RuntimeError:\n    traceback.print_exc()\n"
        "for i in range(200):\n    print(f'log line {i}', file=sys.stderr)\n"
        "sys.exit(1)\n"
    )
    noisy = AgentCommand.parse(shlex.join([sys.executable, "-c", code]))
    run = run_job(
        replay_job(loop_cassette(tmp_path), noisy, LoopOptions(runs_dir=tmp_path / "n"))
    ).run
    assert run.status == "crashed" and run.exit_code == 1
    tail = run.stderr_tail.splitlines()
    assert len(tail) == TAIL_LINES and tail[-1] == "log line 199"
    assert "Traceback" not in run.stderr_tail
    # the marker across a 1 MiB read boundary, and past the first scanned bytes
    big = tmp_path / "big.stderr"
    marker = b"Traceback (most recent call last):"
    big.write_bytes(b"x" * ((1 << 20) - 10) + marker + b"\n" + b"y" * 100)
    assert has_traceback(big)
    big.write_bytes(b"x" * 5000 + marker + b"z" * 5000)
    assert has_traceback(big, limit=2048) is False  # beyond both scanned ends
    assert has_traceback(big, limit=6000)
    big.write_bytes(b"plain failure\n" * 1000)
    assert not has_traceback(big) and not has_traceback(tmp_path / "absent")
