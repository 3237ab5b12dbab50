"""The MCP user's walk, end to end with real processes: a host built on the SDK's
``ClientSession`` (support/mcp_shop_host.py) and an SDK server whose release 2 changed the
``refund`` tool's contract (support/mcp_shop_server.py), over stdio and Streamable HTTP.

record a passing and a failing run through ``server_params`` -> ``diff`` names the changed
contract -> ``mcp replay`` shows the host what it saw live (every message, ids and
notifications in place) -> ``replay``/``gate`` with the host as the agent, a pinned
fixture over the base -> ``verify --mcp`` against the changed server -> re-record with
``record --agent``. Each fault the walk found has its assertion, named in a comment.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.loop._isolation import probe_netns
from support.mcp_session import CLI, TIMEOUT

from tests.cli.test_mcp_http import wait_listening

SUPPORT = Path(__file__).resolve().parents[1] / "support"
HOST = [sys.executable, str(SUPPORT / "mcp_shop_host.py")]
SERVER = [sys.executable, str(SUPPORT / "mcp_shop_server.py")]
#: a server command that cannot run: under replay the cassette stands in for it
NO_SERVER = "/nonexistent/order-desk"


def host(
    tmp: Path, name: str, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Run the host; its result and the transcript of what it saw."""
    transcript = tmp / f"{name}.transcript.json"
    done = subprocess.run(
        [*HOST, "--transcript", str(transcript), *args],
        env={**os.environ, "NO_COLOR": "1", **env},
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
        cwd=tmp,
    )
    seen = json.loads(transcript.read_text()) if transcript.exists() else None
    return done, seen


def cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 3,
        cwd=tmp,
    )


def stdio(*server: str) -> str:
    return shlex.join([*SERVER, *server])


def agent(*args: str) -> str:
    """The host as ``--agent`` of replay, gate and record (under the environment contract,
    ``server_params`` puts the server behind ``mcp record`` or the cassette in its place)."""
    return shlex.join([*HOST, *args])


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two recorded runs: release 1 (the refund goes through) and release 2 (refused)."""
    tmp = tmp_path_factory.mktemp("walk")
    out: dict[str, Any] = {"tmp": tmp}
    for name, server, status in (("pass", stdio(), 0), ("fail", stdio("--contract", "2"), 1)):
        env = {"CASSETTE_MODE": "record", "CASSETTE_PATH": f"runs/{name}.jsonl"}
        done, seen = host(tmp, name, "--stdio", server, **env)
        assert done.returncode == status, done.stderr
        out[name], out[f"{name} status"] = seen, status
    return out


def test_diff_blames_the_changed_tool_contract(walk: dict[str, Any]) -> None:
    tmp = walk["tmp"]
    done = cli(tmp, "diff", "runs/pass.jsonl", "runs/fail.jsonl", "--json")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert findings[0]["kind"] == "contract_change"
    assert "refund: inputSchema changed at $.properties.amount" in findings[0]["message"]
    error = next(f for f in findings if f["kind"] == "error_response")
    assert "The call's arguments satisfy A's input schema, not B's" in error["action"]


@pytest.mark.parametrize("name", ["pass", "fail"])
def test_stdio_replay_shows_the_host_what_it_saw_live(walk: dict[str, Any], name: str) -> None:
    """Every JSON-RPC message the host read, in order, ids included. Fault found: progress
    notifications were sent after the log message and tools/list_changed that came after
    them live (the entry kept them apart from the server messages)."""
    tmp = walk["tmp"]
    env = {"CASSETTE_MODE": "replay", "CASSETTE_PATH": f"runs/{name}.jsonl"}
    done, seen = host(tmp, f"{name}-replay", "--stdio", NO_SERVER, **env)
    assert done.returncode == walk[f"{name} status"], done.stderr
    assert seen["messages"] == walk[name]["messages"]
    assert seen["seen"] == walk[name]["seen"]
    methods = [m.get("method") for m in seen["messages"]]
    at = methods.index("notifications/tools/list_changed")
    assert methods[at - 3 : at] == [
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
    ]


def test_read_only_and_idempotent_calls_repeat_past_the_recording(walk: dict[str, Any]) -> None:
    tmp = walk["tmp"]
    report = tmp / "again.report.json"
    env = {
        "CASSETTE_MODE": "replay",
        "CASSETTE_PATH": "runs/pass.jsonl",
        "CASSETTE_REPORT": str(report),
    }
    done, seen = host(tmp, "again", "--again", "--stdio", NO_SERVER, **env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(report.read_text())
    assert doc["misses"] == [] and doc["mcp"]["repeat_last_tools"] == ["get_order", "set_status"]
    repeats = {r["tool"]: (r["calls"], r["recorded"]) for r in doc["repeats"]}
    assert repeats == {"get_order": (3, 2), "set_status": (3, 2)}
    calls = [s["call"] for s in seen["seen"] if "call" in s]
    assert calls[-2] == calls[0]  # the last get_order answer, served again
    # the replay's words say so (they said "called 3x, recorded 2x" and "0 past the last
    # recording", which left a user guessing what the third call got)
    text = cli(tmp, "replay", "runs/pass.jsonl", "--agent", agent("--again", "--stdio", NO_SERVER))
    assert text.returncode == 0, text.stdout + text.stderr
    line = "get_order sha256:04f09fff81934b74  called 3x, recorded 2x; the last answer served"
    assert f"{line} again 1x past the recording" in text.stdout


def test_replay_and_gate_with_the_host_as_the_agent(walk: dict[str, Any]) -> None:
    tmp = walk["tmp"]
    gate = cli(tmp, "gate", "runs/pass.jsonl", "--agent", agent("--stdio", NO_SERVER),
               "--runs", "2", "--json")  # fmt: skip
    assert gate.returncode == 0, gate.stdout + gate.stderr
    doc = json.loads(gate.stdout)
    assert doc["verdict"] == "deterministic" and doc["passed"] == 2
    failing = cli(tmp, "replay", "runs/fail.jsonl", "--agent", agent("--stdio", NO_SERVER))
    assert failing.returncode == 1 and "refund refused" in failing.stdout


def test_a_pinned_fixture_answers_first_in_an_mcp_replay(walk: dict[str, Any]) -> None:
    """Fault found: ``mcp replay`` ignored ``--fixture``/``CASSETTE_FIXTURES`` while
    ``replay`` said "pinned 0 calls answered by ...": the pin had no effect."""
    tmp = walk["tmp"]
    pin = cli(tmp, "pin", "runs/fail.jsonl", "--seq", "6", "-o", "fixtures",
              "--reason", "refund contract changed in order-desk 2.0")  # fmt: skip
    assert pin.returncode == 0, pin.stderr
    (fixture,) = (tmp / "fixtures").glob("refund-*.jsonl")
    done = cli(tmp, "replay", "runs/pass.jsonl", "--agent", agent("--stdio", NO_SERVER),
               "--fixture", str(fixture))  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 pinned" in done.stdout and "refund refused" in done.stdout


def test_verify_against_the_changed_server(walk: dict[str, Any]) -> None:
    """Fault found: a live tool that asks its host (sampling) crashed ``verify`` with a
    traceback ("This event loop is already running") instead of refusing the request."""
    tmp = walk["tmp"]
    done = cli(tmp, "verify", "runs/pass.jsonl", "--mcp", stdio("--contract", "2"),
               "--allow", "summarize", "--allow", "refund", "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    rows = {r["seq"]: r for r in json.loads(done.stdout)["entries"]}
    assert rows[1]["status"] == rows[2]["status"] == "stale"
    assert rows[4]["status"] == "error" and "sampling/createMessage" in json.dumps(rows[4])
    assert rows[6]["status"] == "error"
    assert rows[7]["status"] == "not_reissued"  # idempotent is still a write
    live = cli(tmp, "diff", "runs/pass.jsonl", "runs/pass.live.jsonl", "--json")
    assert json.loads(live.stdout)["findings"][0]["kind"] == "contract_change"


def test_re_record_with_the_host_as_the_agent(walk: dict[str, Any]) -> None:
    """Fault found: ``record --agent`` makes the cassette for its agent beforehand
    (``CASSETTE_CLAIM``); ``mcp record`` refused it as existing, so the host crashed and
    nothing was recorded."""
    tmp = walk["tmp"]
    done = cli(tmp, "record", "--agent", agent("--stdio", stdio("--contract", "2")),
               "-o", "runs/after.jsonl", "--against", "runs/pass.jsonl")  # fmt: skip
    assert "recorded 8 entries; the agent exited 1" in done.stdout, done.stdout + done.stderr
    assert (tmp / "runs" / "after.mcp.json").is_file()
    assert "contract_change" in done.stdout


def _http_seen(seen: Any) -> Any:
    """What the host saw over HTTP, the standalone stream's list_changed set apart: its
    place among the request stream's messages is a race between two streams, live too."""
    standalone = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    messages = [m for m in seen["messages"] if m != standalone]
    return messages, seen["seen"], len(seen["messages"]) - len(messages)


def test_http_record_replay_and_gate_through_server_url(tmp_path: Path) -> None:
    """``server_url`` puts ``mcp record --url`` / ``mcp replay --http`` in front of a host
    over Streamable HTTP (glue the README left to the user). Fault found: under ``gate``
    the agent's network namespace had its loopback down, so the host could not reach the
    replay it started (every run crashed, ``no_tool_call``)."""
    env = {"CASSETTE_MODE": "record", "CASSETTE_PATH": "runs/http.jsonl"}
    with socket.socket() as sock:  # a free port for the shop server
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    server = subprocess.Popen([*SERVER, "--http", port], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_listening(int(port))
        done, live = host(tmp_path, "http-live", "--url", url, **env)
        assert done.returncode == 0, done.stderr
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)
    facts = json.loads((tmp_path / "runs" / "http.mcp.json").read_text())
    assert any(m.get("stream") == "standalone" for m in facts["server_messages"])
    env["CASSETTE_MODE"] = "replay"
    done, replayed = host(tmp_path, "http-replay", "--url", "http://127.0.0.1:9/mcp", **env)
    assert done.returncode == 0, done.stderr
    assert _http_seen(replayed) == _http_seen(live)
    if probe_netns()[0]:
        gate = cli(tmp_path, "gate", "runs/http.jsonl", "--agent",
                   agent("--url", "http://127.0.0.1:9/mcp"), "--runs", "2", "--json")  # fmt: skip
        doc = json.loads(gate.stdout)
        assert doc["verdict"] == "deterministic" and doc["isolation"] == "netns", gate.stdout


def test_a_servers_key_echoed_in_free_text_is_redacted_too(tmp_path: Path) -> None:
    """Bugcase 45's rule with a key the scanners know only by its flag (``--api-key``; no
    known format): the sidecar's command line had it redacted, but the cassette kept it in
    clear where the server echoed it in a progress message, and ``check`` called the folder
    clean. Fault found: the command line's secrets were not carried to the entries."""
    key = "sk-live-4f9a8B2c7D1e6F3a9B8c7D6e5F4a3B2c1D0e"  # fake, of no known format
    (tmp_path / "cassette.toml").write_text("[redact]\nrecord = true\n")
    env = {"CASSETTE_MODE": "record", "CASSETTE_PATH": "runs/s.jsonl",
           "CASSETTE_CONFIG": "cassette.toml"}  # fmt: skip
    done, live = host(tmp_path, "secret", "--stdio", stdio("--api-key", key), **env)
    assert done.returncode == 0, done.stderr
    for path in (tmp_path / "runs").iterdir():
        assert key not in path.read_text(), path.name
    cassette = (tmp_path / "runs" / "s.jsonl").read_text()
    assert "fetching with <redacted:secret:" in cassette
    env["CASSETTE_MODE"] = "replay"  # the redacted recording still replays
    done, replayed = host(tmp_path, "secret-replay", "--stdio", NO_SERVER, **env)
    assert done.returncode == 0, done.stderr
    assert [m.get("id") for m in replayed["messages"]] == [m.get("id") for m in live["messages"]]


def test_server_url_live_as_given_and_a_replay_that_cannot_start_said(tmp_path: Path) -> None:
    from cassette_tui.core.mcp.host import server_url

    with server_url("http://127.0.0.1:9/mcp", mode="live") as url:
        assert url == "http://127.0.0.1:9/mcp"
    missing = tmp_path / "missing.jsonl"
    with (
        pytest.raises(RuntimeError, match="cassette-tui mcp replay exited 2 before serving"),
        server_url("http://127.0.0.1:9/mcp", mode="replay", path=missing),
    ):
        pass
    with (
        pytest.raises(ValueError, match="needs a cassette"),
        server_url("http://127.0.0.1:9/mcp", mode="record", path=""),
    ):
        pass


def test_a_listen_stream_replays_over_stdio_and_http(tmp_path: Path) -> None:
    """Fault found: a 2026-07-28 host's ``subscriptions/listen`` waits for the server's
    acknowledgement before its next request; replay sent it only before the next
    answer (its recorded place), and answered the listen at once (ending the stream), so
    the host never got going (stdio: "Connection closed")."""
    listen_host = [sys.executable, str(SUPPORT / "mcp_listen_host.py")]
    server_script = str(SUPPORT / "mcp_shop_server.py")
    wanted = {"events": ["ToolsListChanged"], "result": {"items": 42}}

    def run(*args: str, **env: str) -> Any:
        done = subprocess.run([*listen_host, *args], env={**os.environ, **env}, cwd=tmp_path,
                              capture_output=True, text=True, timeout=TIMEOUT * 2)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    rec = {"CASSETTE_MODE": "record", "CASSETTE_PATH": "listen.jsonl"}
    assert run("--stdio", server_script, **rec) == wanted
    rep = {"CASSETTE_MODE": "replay", "CASSETTE_PATH": "listen.jsonl",
           "CASSETTE_REPORT": "listen.report.json"}  # fmt: skip
    assert run("--stdio", NO_SERVER, **rep) == wanted
    mcp = json.loads((tmp_path / "listen.report.json").read_text())["mcp"]
    assert mcp["not_replayed"] == [] and mcp["not_recorded"] == []

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([*SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_listening(port)
        url = f"http://127.0.0.1:{port}/mcp"
        assert run("--url", url, **{**rec, "CASSETTE_PATH": "listen-http.jsonl"}) == wanted
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)
    rep["CASSETTE_PATH"] = "listen-http.jsonl"
    assert run("--url", "http://127.0.0.1:9/mcp", **rep) == wanted


def test_a_request_the_host_made_because_of_a_notification_replays(tmp_path: Path) -> None:
    """A notification that came between calls (no request in flight) and the request the
    host sends because of it (``tools/list`` after ``tools/list_changed``). Fault found
    (over HTTP, where the GET stream's notification races the call's answer): it was
    placed before the answer of that very request, so replay waited for a request the
    host makes only once it has the notification (not replayed, the host waiting)."""
    from support.mcp_session import RawSession, record_cmd, replay_cmd, tool_call

    raw_server = [sys.executable, str(SUPPORT / "mcp_raw_server.py")]
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}

    def session(command: list[str]) -> list[Any]:
        host = RawSession(command, cwd=tmp_path)
        try:
            got: list[Any] = []
            assert host.lines.get(timeout=TIMEOUT) == b"raw server ready\n"  # its banner
            host.request(init)
            host.request(tool_call(1, "announce_after", {}))
            while True:  # the host lists the tools again once the server says they changed
                doc = json.loads(host.lines.get(timeout=TIMEOUT) or b"null")
                got.append(doc)
                if doc.get("method") == "notifications/tools/list_changed":
                    break
            got.append(host.request(listing))
            assert host.close() == 0, host.stderr
            return got
        finally:
            host.kill()

    run = tmp_path / "announce.jsonl"
    live = session(record_cmd(run, raw_server))
    facts = json.loads(run.with_suffix(".mcp.json").read_text())
    (message,) = [m for m in facts["server_messages"] if "message" in m]
    assert (message["before"], message["after"]) == (None, {"seq": 1})
    report = tmp_path / "announce.report.json"
    assert session(replay_cmd(run, "--report", str(report))) == live
    assert json.loads(report.read_text())["mcp"]["not_replayed"] == []


def test_mcp_record_says_it_does_not_apply_fixtures(tmp_path: Path) -> None:
    """``record --fixture`` around an MCP host: the proxy forwards every call to the
    server, and says so rather than leaving the user to believe the pin held."""
    done = subprocess.run(
        [*CLI, "mcp", "record", "-o", str(tmp_path / "r.jsonl"), "--", *SERVER],
        env={**os.environ, "CASSETTE_FIXTURES": str(tmp_path / "pin.jsonl")},
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert "CASSETTE_FIXTURES is not applied: every call goes to the server" in done.stderr
