"""What the server sends the host on its own is recorded in order and replayed where it
came (issue 27): notifications (``notifications/tools/list_changed``, log messages) before
the answer they preceded, a server-to-host request (``roots/list``) with the host's answer
checked against the recorded one, a line that is not JSON-RPC at its place; what replay
cannot send again is reported and fails the session. Bugcase 47 runs from
``../shared/real``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.mcp_session import CLI, TOY_SERVER, RawSession, record_cmd, replay_cmd, tool_call

RAW_SERVER = [sys.executable, str(Path(TOY_SERVER).with_name("mcp_raw_server.py"))]
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}


def _lines_until(session: RawSession, request_id: int) -> list[dict]:
    """Every message read up to the answer of ``request_id``, that answer last."""
    got = []
    while True:
        line = session.lines.get(timeout=60)
        assert line is not None, got
        doc = json.loads(line)
        got.append(doc)
        if doc.get("id") == request_id and ("result" in doc or "error" in doc):
            return got


def _session(command: list[str], roots: list[dict]) -> list[dict]:
    """banner, initialize, notify (two notifications before its answer), ask (the server
    asks the host roots/list; the host answers ``roots``), echo."""
    session = RawSession(command)
    try:
        assert session.lines.get(timeout=60) == b"raw server ready\n"
        session.send(INIT)
        got = _lines_until(session, 0)
        session.send(tool_call(1, "notify", {}))
        got += _lines_until(session, 1)
        session.send(tool_call(2, "ask", {}))
        question = json.loads(session.lines.get(timeout=60))
        got.append(question)
        session.send({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": roots}})
        got += _lines_until(session, 2)
        session.send(tool_call(3, "echo", {"n": 3}))
        got += _lines_until(session, 3)
        session.proc.stdin.close()  # type: ignore[union-attr]
        got.append({"status": session.wait()})
    finally:
        session.kill()
    return got


ROOTS = [{"uri": "file:///work", "name": "work"}]


def test_notifications_and_server_requests_replay_where_they_came(tmp_path: Path) -> None:
    run = tmp_path / "raw.jsonl"
    live = _session(record_cmd(run, RAW_SERVER), ROOTS)
    assert live[-1] == {"status": 0}
    facts = json.loads((tmp_path / "raw.mcp.json").read_text())
    kinds = [m.get("line") or m["message"].get("method") for m in facts["server_messages"]]
    assert kinds == [
        "raw server ready",
        "notifications/tools/list_changed",
        "notifications/message",
        "roots/list",
    ]
    assert facts["server_messages"][1]["before"] == {"seq": 1}
    assert facts["server_messages"][3]["host_answer"] == {"result": {"roots": ROOTS}}

    report = tmp_path / "report.json"
    replayed = _session(replay_cmd(run, "--report", str(report)), ROOTS)
    assert replayed == live  # the same messages in the same order, exit 0
    doc = json.loads(report.read_text())["mcp"]
    assert doc["not_replayed"] == [] and doc["host_answers_differ"] == []


def test_a_host_answering_a_server_request_differently_fails_the_replay(tmp_path: Path) -> None:
    run = tmp_path / "raw.jsonl"
    _session(record_cmd(run, RAW_SERVER), ROOTS)
    report = tmp_path / "report.json"
    other = [{"uri": "file:///elsewhere"}]
    replayed = _session(replay_cmd(run, "--report", str(report)), other)
    assert replayed[-1] == {"status": 1}
    (differ,) = json.loads(report.read_text())["mcp"]["host_answers_differ"]
    assert differ["method"] == "roots/list"
    assert differ["recorded"] == {"result": {"roots": ROOTS}}
    assert differ["replayed"] == {"result": {"roots": other}}


def test_a_notification_whose_answer_is_never_served_is_reported(tmp_path: Path) -> None:
    run = tmp_path / "raw.jsonl"
    _session(record_cmd(run, RAW_SERVER), ROOTS)
    report = tmp_path / "report.json"
    session = RawSession(replay_cmd(run, "--report", str(report)))
    try:
        assert session.lines.get(timeout=60) == b"raw server ready\n"
        session.send(INIT)
        _lines_until(session, 0)
        assert session.close() == 1
    finally:
        session.kill()
    not_replayed = json.loads(report.read_text())["mcp"]["not_replayed"]
    assert [m["message"] for m in not_replayed] == [
        "notifications/tools/list_changed",
        "notifications/message",
        "request roots/list",
    ]


def test_bugcase_47_list_changed_is_replayed_and_the_new_tool_called(
    real: Path, tmp_path: Path
) -> None:
    case = real / "bugcases" / "47_mcp_list_changed_not_replayed"
    if not case.is_dir():
        pytest.skip(f"bugcase absent: {case}")
    script = json.dumps(
        [
            ["call", "get_contact", {"contact_id": "C-5"}],
            ["call", "enable_admin", {}],
            ["call", "delete_contact", {"contact_id": "C-5"}],
        ]
    )
    run, report = tmp_path / "run.jsonl", tmp_path / "report.json"
    host = [sys.executable, str(case / "host.py"), script, "--"]
    env = {**os.environ, "FAKE_DYNAMIC": "1"}
    server = [sys.executable, str(case / "fake_server.py")]
    live = subprocess.run(
        [*host, *record_cmd(run, server)],
        cwd=case, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    replay = subprocess.run(
        [*host, *CLI, "mcp", "replay", str(run), "--report", str(report)],
        cwd=case, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert "notification notifications/tools/list_changed" in replay.stdout
    assert "not in tools/list" not in replay.stdout
    assert replay.stdout.count("host: tools/call") == live.stdout.count("host: tools/call") == 3
    doc = json.loads(report.read_text())
    assert doc["unused_seqs"] == [] and doc["mcp"]["not_replayed"] == []
