"""``cassette-tui mcp record`` / ``mcp replay`` against real MCP servers: mcp-server-git and
mcp-server-time from PyPI (the test extras) and a small SDK server written for the tests
(``support/mcp_toy_server.py``). Every process is bounded by a timeout."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.mcp_session import (
    CLI,
    HANDSHAKE,
    RawSession,
    git_repo,
    installed,
    raw_script,
    record_cmd,
    replay_cmd,
    sdk_session,
    tool_call,
    toy_server,
)

GIT_CALLS = [
    ("git_status", {"repo_path": "repo"}),
    ("git_log", {"repo_path": "repo"}),
    ("git_diff", {"repo_path": "repo", "target": "HEAD~1"}),
]

TOY_SCRIPT = [
    *HANDSHAKE,
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    tool_call(3, "echo", {"text": "hi"}),
    tool_call(4, "fail", {"reason": "disk full"}),
    tool_call(5, "reject", {"reason": "no"}),
    tool_call(6, "progress", {"steps": 2}, progressToken="p-6"),
    tool_call(7, "counter", {}),
    tool_call(8, "counter", {}),
    {"jsonrpc": "2.0", "id": 9, "method": "ping"},
]


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def offline_env(tmp_path: Path) -> dict[str, str]:
    """An environment where the recorded servers are not installed: no venv bin on PATH
    and ``mcp_server_git`` / ``mcp_server_time`` shadowed by packages that fail to import."""
    shadow = tmp_path / "not-installed"
    for name in ("mcp_server_git", "mcp_server_time"):
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(
            f"raise ImportError('{name} is not installed')\n"
        )
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shadow)}


# -- mcp-server-git: record through the proxy, replay without the server ------------------


def test_git_server_recorded_and_replayed_offline_with_equal_results(tmp_path: Path) -> None:
    git_repo(tmp_path)
    server = [installed("mcp-server-git"), "--repository", "repo"]
    run = tmp_path / "git.jsonl"

    direct = sdk_session(server, GIT_CALLS, cwd=tmp_path)
    recorded = sdk_session(record_cmd(run, server), GIT_CALLS, cwd=tmp_path)
    # what the client sees is the same with and without the proxy
    assert recorded == direct
    assert [t["name"] for t in recorded["tools"]][:1] == ["git_status"]
    assert "jitter" in recorded["calls"][2]["content"][0]["text"]  # a real git diff

    entries = lines_of(run)
    assert [(e["seq"], e["tool"], e["args"]) for e in entries] == [
        (i + 1, name, args) for i, (name, args) in enumerate(GIT_CALLS)
    ]
    for entry, seen in zip(entries, recorded["calls"], strict=True):
        assert entry["response"]["isError"] is False
        assert entry["response"]["content"][0]["text"] == seen["content"][0]["text"]
    facts = json.loads((tmp_path / "git.mcp.json").read_text())
    assert {"tools/list"} <= {x["method"] for x in facts["exchanges"]}

    # replay: the real server is neither on PATH nor importable
    env = offline_env(tmp_path)
    report = tmp_path / "report.json"
    probe = subprocess.run(
        [sys.executable, "-c", "import mcp_server_git"], env=env, check=False, capture_output=True
    )
    assert probe.returncode != 0
    replayed = sdk_session(
        replay_cmd(run, "--report", str(report)), GIT_CALLS, cwd=tmp_path, env=env
    )
    assert replayed == recorded
    doc = json.loads(report.read_text())
    assert doc["misses"] == [] and doc["unused_seqs"] == []
    assert [c["outcome"] for c in doc["calls"]] == ["hit", "hit", "hit"]


# -- forwarding is byte for byte ------------------------------------------------------------


def test_every_line_is_forwarded_unchanged_both_ways(tmp_path: Path) -> None:
    direct = RawSession(toy_server())
    try:
        expected = raw_script(direct, TOY_SCRIPT)
        assert direct.close() == 0
    finally:
        direct.kill()
    proxied = RawSession(record_cmd(tmp_path / "toy.jsonl", toy_server()))
    try:
        got = raw_script(proxied, TOY_SCRIPT)
        assert proxied.close() == 0
    finally:
        proxied.kill()
    assert got == expected  # bytes, notifications included
    assert sum(b"notifications/progress" in line for line in got) == 2


def test_toy_session_entries_and_server_facts(tmp_path: Path) -> None:
    run = tmp_path / "toy.jsonl"
    session = RawSession(record_cmd(run, toy_server()))
    try:
        raw_script(session, TOY_SCRIPT)
        assert session.close() == 0
    finally:
        session.kill()
    entries = lines_of(run)
    assert [e["tool"] for e in entries] == [
        "echo",
        "fail",
        "reject",
        "progress",
        "counter",
        "counter",
    ]
    echo, fail, reject, progress, c1, c2 = entries
    assert echo["response"]["structuredContent"] == {"echo": "hi"}
    assert fail["response"]["isError"] is True
    assert reject["error"] == {
        "type": "MCPError",
        "message": "rejected: no",
        "code": -32001,
        "data": {"reason": "no"},
    }
    assert "_meta" not in json.dumps(progress["args"])  # the progress token is not an arg
    # after_messages: how many server messages came before it (its place among them)
    assert progress["mcp_progress"] == [
        {"progress": 1, "total": 2, "message": "step 1", "after_messages": 0},
        {"progress": 2, "total": 2, "message": "step 2", "after_messages": 0},
    ]
    assert c1["args_digest"] == c2["args_digest"]
    assert c1["response"]["structuredContent"] != c2["response"]["structuredContent"]
    for e in entries:
        assert {"seq", "tool", "args", "args_digest", "recorded_at", "duration_ms"} <= set(e)
    facts = json.loads((tmp_path / "toy.mcp.json").read_text())
    assert facts["format"] == "cassette-tui/mcp-server-facts"
    assert [x["method"] for x in facts["exchanges"]] == ["initialize", "tools/list", "ping"]
    # the engine reads it like any cassette: `check` lints it, the isError is an error
    check = subprocess.run(
        [*CLI, "check", str(run), "--json"], check=False, capture_output=True, timeout=60
    )
    assert check.returncode in (0, 1), check.stderr
    assert json.loads(check.stdout)["entries"] == 6


# -- replay semantics --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def toy_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy session recorded once for the replay tests (``toy.jsonl`` + sidecar)."""
    run = tmp_path_factory.mktemp("toy") / "toy.jsonl"
    session = RawSession(record_cmd(run, toy_server()))
    try:
        raw_script(session, TOY_SCRIPT)
        assert session.close() == 0
    finally:
        session.kill()
    return run


@pytest.fixture
def toy_run(toy_recording: Path, tmp_path: Path) -> Path:
    """A private copy of the toy recording and its sidecar."""
    for src in (toy_recording, toy_recording.with_name("toy.mcp.json")):
        shutil.copy(src, tmp_path / src.name)
    return tmp_path / toy_recording.name


def test_replay_answers_like_the_server_with_ordered_repeats(tmp_path: Path, toy_run: Path) -> None:
    run = toy_run
    live = RawSession(toy_server())
    try:
        expected = [json.loads(x) for x in raw_script(live, TOY_SCRIPT)]
        live.close()
    finally:
        live.kill()
    replay = RawSession(replay_cmd(run))
    try:
        got = [json.loads(x) for x in raw_script(replay, TOY_SCRIPT)]
        assert replay.close() == 0
    finally:
        replay.kill()
    # the same messages in the same order: answers (errors included) and the progress
    # notifications of the call that reported progress, to the caller's token
    assert got == expected
    assert sum(m.get("method") == "notifications/progress" for m in got) == 2


def test_miss_is_a_json_rpc_error_naming_the_nearest_call_and_is_reported(
    tmp_path: Path, toy_run: Path
) -> None:
    run = toy_run
    report = tmp_path / "report.json"
    env = {**os.environ, "CASSETTE_REPORT": str(report)}
    replay = RawSession(replay_cmd(run), env=env)
    try:
        raw_script(replay, HANDSHAKE)
        miss = replay.request(tool_call(20, "echo", {"text": "hello"}))
        c1 = replay.request(tool_call(21, "counter", {}))
        c2 = replay.request(tool_call(22, "counter", {}))
        exhausted = replay.request(tool_call(23, "counter", {}))
        unknown = replay.request({"jsonrpc": "2.0", "id": 24, "method": "resources/list"})
        status = replay.close()
    finally:
        replay.kill()
    assert status == 1  # a miss is a finding
    error = miss["error"]
    assert error["code"] == -32010
    assert "nearest: seq 1" in error["message"] and "$.text" in error["message"]
    assert "'hi'" in error["message"] and "'hello'" in error["message"]
    assert error["data"]["args"] == {"text": "hello"}
    assert error["data"]["nearest"][0]["differences"][0]["path"] == "$.text"
    assert [c1["result"]["structuredContent"], c2["result"]["structuredContent"]] == [
        {"result": 1},
        {"result": 2},
    ]
    assert exhausted["error"]["code"] == -32010
    assert "recorded twice" in exhausted["error"]["message"]
    assert unknown["error"]["code"] == -32601
    doc = json.loads(report.read_text())
    assert [m["tool"] for m in doc["misses"]] == ["echo"]
    assert doc["misses"][0]["nearest"][0]["seq"] == 1
    assert [c["outcome"] for c in doc["calls"]] == ["miss", "hit", "hit", "exhausted"]
    assert doc["mcp"]["not_recorded"] == [{"method": "resources/list", "params": {}}]


def test_replay_repeat_last_policy(tmp_path: Path, toy_run: Path) -> None:
    run = toy_run
    replay = RawSession(replay_cmd(run, "--repeat", "last"))
    try:
        raw_script(replay, HANDSHAKE)
        answers = [replay.request(tool_call(30 + i, "counter", {})) for i in range(3)]
        assert replay.close() == 0
    finally:
        replay.kill()
    assert [a["result"]["structuredContent"]["result"] for a in answers] == [1, 2, 2]


def test_replay_normalization_rules_turn_a_miss_into_a_hit(tmp_path: Path, toy_run: Path) -> None:
    run = toy_run
    config = tmp_path / "cassette.toml"
    config.write_text('[normalize]\ndrop = ["echo:text"]\n')
    replay = RawSession(replay_cmd(run, "--config", str(config)))
    try:
        raw_script(replay, HANDSHAKE)
        hit = replay.request(tool_call(40, "echo", {"text": "another text"}))
        assert replay.close() == 0
    finally:
        replay.kill()
    assert hit["result"]["structuredContent"] == {"echo": "hi"}


def test_replay_of_a_library_cassette_without_server_facts(tmp_path: Path, samples) -> None:
    replay = RawSession(replay_cmd(samples / "fix.jsonl"))
    try:
        init = replay.request(HANDSHAKE[0])
        tools = replay.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        replay.close()
    finally:
        replay.kill()
    assert init["result"]["serverInfo"]["name"] == "cassette-tui replay"
    assert {t["name"] for t in tools["result"]["tools"]} == {"search_docs", "read_file"}


def test_replay_of_a_bad_sidecar_names_file_and_field(tmp_path: Path, toy_run: Path) -> None:
    run = toy_run
    facts = tmp_path / "toy.mcp.json"
    doc = json.loads(facts.read_text())
    doc["exchanges"][1]["method"] = 7
    facts.write_text(json.dumps(doc))
    out = subprocess.run(replay_cmd(run), check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "toy.mcp.json" in out.stderr and "exchanges[1].method" in out.stderr


# -- a server that dies, a host that leaves ------------------------------------------------------


def test_server_crash_mid_session_is_reported_and_the_recording_kept(tmp_path: Path) -> None:
    run = tmp_path / "crash.jsonl"
    session = RawSession(record_cmd(run, toy_server()))
    try:
        raw_script(session, HANDSHAKE)
        session.request(tool_call(2, "echo", {"text": "before"}))
        answer = session.request(tool_call(3, "die", {"status": 3}), timeout=30)
        status = session.wait(timeout=30)  # exits without the host closing stdin
    finally:
        session.kill()
    assert "exited (status 3)" in answer["error"]["message"]
    assert status == 3
    assert "exited (status 3)" in session.stderr.decode()
    assert [e["tool"] for e in lines_of(run)] == ["echo"]


def test_host_closing_mid_call_ends_the_session_without_hanging(tmp_path: Path) -> None:
    run = tmp_path / "leave.jsonl"
    session = RawSession(record_cmd(run, toy_server(), "--grace", "0.5"))
    try:
        raw_script(session, HANDSHAKE)
        session.request(tool_call(2, "echo", {"text": "kept"}))
        session.send(tool_call(3, "stall", {"seconds": 60}))
        status = session.close(timeout=30)
    finally:
        session.kill()
    assert status == 0
    entries = lines_of(run)
    assert entries[0]["response"]["structuredContent"] == {"echo": "kept"}
    # the SDK server answers what is in flight when its stdin closes ("Connection
    # closed"); that answer is the server's, so it is recorded like any other
    assert [e["tool"] for e in entries[1:]] in ([], ["stall"])
    assert all("error" in e for e in entries[1:])


def test_a_server_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    run = tmp_path / "stubborn.jsonl"
    report = tmp_path / "report.json"
    session = RawSession(
        record_cmd(run, toy_server("--ignore-sigterm"), "--grace", "0.3", "--report", str(report))
    )
    try:
        raw_script(session, HANDSHAKE)
        session.request(tool_call(2, "echo", {"text": "x"}))
        status = session.close(timeout=30)
    finally:
        session.kill()
    assert status == 0
    doc = json.loads(report.read_text())
    assert doc["entries"] == 1
    assert doc["mcp"]["server_exit"] == -9  # SIGKILL after SIGTERM was ignored


def test_sigterm_to_the_proxy_stops_the_server_and_keeps_the_recording(tmp_path: Path) -> None:
    run = tmp_path / "stopped.jsonl"
    pid_file = tmp_path / "server.pid"
    session = RawSession(record_cmd(run, toy_server("--pid-file", str(pid_file))))
    try:
        raw_script(session, HANDSHAKE)
        session.request(tool_call(2, "echo", {"text": "kept"}))
        session.send(tool_call(3, "stall", {"seconds": 60}))
        session.proc.send_signal(signal.SIGTERM)  # the host shuts its servers down
        status = session.wait(timeout=30)
    finally:
        session.kill()
    assert status == 0
    assert [e["tool"] for e in lines_of(run)][:1] == ["echo"]
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # the server went with the proxy


def test_a_server_that_cannot_start(tmp_path: Path) -> None:
    run = tmp_path / "none.jsonl"
    out = subprocess.run(
        record_cmd(run, [str(tmp_path / "no-such-server")]),
        input=b"",
        check=False,
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert b"cannot start the MCP server" in out.stderr


# -- never overwrite --------------------------------------------------------------------------------


@pytest.mark.parametrize("existing", ["run.jsonl", "run.mcp.json"])
def test_refuses_to_overwrite_a_cassette_or_its_sidecar(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).write_text("precious\n")
    marker = tmp_path / "server-started"
    server = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    out = subprocess.run(
        record_cmd(tmp_path / "run.jsonl", server),
        input=b"",
        check=False,
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert b"exists already" in out.stderr
    assert (tmp_path / existing).read_text() == "precious\n"
    assert not marker.exists()  # the server was never started
    others = {p.name for p in tmp_path.iterdir()} - {existing}
    assert others == set()  # nothing half-made left behind


# -- mcp-server-time: answers drift between recordings -----------------------------------------------


def _record_time(tmp_path: Path, name: str) -> Path:
    run = tmp_path / name
    server = [installed("mcp-server-time"), "--local-timezone", "UTC"]
    calls = [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        (
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        ),
    ]
    sdk_session(record_cmd(run, server), calls, cwd=tmp_path)
    return run


def test_time_server_recordings_diff_as_response_drift(tmp_path: Path) -> None:
    a = _record_time(tmp_path, "a.jsonl")
    time.sleep(1.1)  # the answer has a seconds resolution
    b = _record_time(tmp_path, "b.jsonl")
    out = subprocess.run(
        [*CLI, "diff", str(a), str(b), "--json"], check=False, capture_output=True, timeout=60
    )
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    # the current time drifted; the conversion of a fixed time did not
    assert [(r["tool"], r["status"]) for r in doc["rows"]] == [
        ("get_current_time", "response_drift")
    ]
    assert doc["counts"]["same"] == 1
    paths = {d["path"] for d in doc["rows"][0]["drift"]}
    assert "$.structuredContent.datetime" in paths
    assert doc["first_divergence"]["tool"] == "get_current_time"
    assert doc["first_divergence"]["status"] == "response_drift"


# -- the engine stays free of the SDK --------------------------------------------------------------


def test_core_and_the_other_commands_do_not_import_the_sdk() -> None:
    code = (
        "import sys, importlib, pkgutil\n"
        "import cassette_tui.core, cassette_tui.tui.cli\n"
        "import cassette_tui.tui.commands.mcp\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'anyio'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


# -- the README's host configuration works as written ----------------------------------------


def _readme_server_configs() -> list[dict]:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", readme, re.DOTALL)
    return [json.loads(b)["mcpServers"]["git"] for b in blocks if "mcpServers" in b]


def test_readme_host_configuration_records_and_replays(tmp_path: Path) -> None:
    record_cfg, replay_cfg = _readme_server_configs()
    git_repo(tmp_path)
    (tmp_path / "runs").mkdir()
    cwd = tmp_path / "repo"
    (cwd / "runs").symlink_to(tmp_path / "runs")

    def command(cfg: dict) -> list[str]:
        assert cfg["command"] == "cassette-tui"
        args = [installed("mcp-server-git") if a == "mcp-server-git" else a for a in cfg["args"]]
        return [*CLI, *args]

    calls = [("git_status", {"repo_path": "."}), ("git_log", {"repo_path": "."})]
    recorded = sdk_session(command(record_cfg), calls, cwd=cwd)
    again = sdk_session(command(record_cfg), calls, cwd=cwd)  # the host started it again
    assert again == recorded
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert names == ["git-1.jsonl", "git-1.mcp.json", "git-2.jsonl", "git-2.mcp.json"]
    replayed = sdk_session(command(replay_cfg), calls, cwd=cwd, env=offline_env(tmp_path))
    assert replayed == recorded


# -- the gate on an MCP recording --------------------------------------------------------------

AGENT = [sys.executable, str(Path(__file__).resolve().parents[1] / "support" / "mcp_time_agent.py")]


def test_gate_explains_the_time_servers_drift(tmp_path: Path) -> None:
    """Live, the time answer drifts (two recordings diff as response drift); replayed by
    the gate from one recording, every run sees the same frozen answer: deterministic. An
    agent whose verdict also depends on something outside the tool layer is flaky, and the
    gate says the runs made the same calls (after the tool layer)."""
    run = tmp_path / "time.jsonl"
    env = {**os.environ, "CASSETTE_MODE": "record", "CASSETTE_PATH": str(run)}
    recorded = subprocess.run(AGENT, env=env, check=False, capture_output=True, timeout=120)
    assert recorded.returncode == 0, recorded.stderr
    assert [e["tool"] for e in lines_of(run)] == ["get_current_time"]

    def gate(agent: list[str]) -> tuple[int, dict]:
        out = subprocess.run(
            [*CLI, "gate", str(run), "--agent", shlex.join(agent), "--runs", "2", "--json"],
            check=False,
            capture_output=True,
            timeout=300,
        )
        return out.returncode, json.loads(out.stdout)

    status, doc = gate(AGENT)
    assert (status, doc["verdict"], doc["passed"], doc["misses"]) == (0, "deterministic", 2, 0)
    assert all(r["hits"] == 1 for r in doc["results"])  # served by mcp replay's report

    status, doc = gate([*AGENT, "--own-clock", "{run}"])
    assert (status, doc["verdict"], doc["passed"]) == (1, "flaky", 1)
    assert doc["divergence"]["kind"] == "after_tool_layer"
