"""The sidecar is a journal while ``mcp record`` runs (one line appended per thing kept, so
a chatty server costs linear time, issue 27), and the JSON document once the session ends.
A recorder killed mid-session leaves the journal, which every reader of sidecars reads
with nothing lost: ``ServerFacts.read``, ``check``, ``mcp replay``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from cassette_tui.core.mcp._facts import ServerFacts
from support.mcp_session import TOY_SERVER, RawSession, record_cmd, replay_cmd, tool_call

RAW_SERVER = [sys.executable, str(Path(TOY_SERVER).with_name("mcp_raw_server.py"))]
CLI = [sys.executable, "-m", "cassette_tui.tui.cli"]
NOTES = 300


def session_script(session: RawSession) -> None:
    """initialize, 300 log notifications around a call, a server request the host answers,
    a resources/read: every kind of journal event."""
    assert session.lines.get(timeout=60) == b"raw server ready\n"
    session.request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
    answer = session.request(tool_call(1, "chatty", {"notes": NOTES}))
    assert answer["result"]["isError"] is False
    session.send(tool_call(2, "ask", {}))
    ask = json.loads(session.lines.get(timeout=60))
    assert ask["method"] == "roots/list"
    session.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": []}})
    json.loads(session.lines.get(timeout=60))  # the answer to call 2
    session.request({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {}})


def test_a_killed_recording_leaves_a_journal_that_loses_nothing(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    ended = RawSession(record_cmd(whole, RAW_SERVER))
    killed = RawSession(record_cmd(cut, RAW_SERVER))
    try:
        session_script(ended)
        assert ended.close() == 0
        session_script(killed)
        # every answer has reached the host, so all it brought is on disk: kill the proxy
        killed.proc.send_signal(signal.SIGKILL)
        killed.wait()
    finally:
        ended.kill()
        killed.kill()

    final_text = whole.with_suffix(".mcp.json").read_text(encoding="utf-8")
    assert json.loads(final_text)["format"] == "cassette-tui/mcp-server-facts"  # a document
    journal = cut.with_suffix(".mcp.json")
    lines = journal.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["journal"] is True
    # one line per thing kept: header, 2 exchanges, NOTES + 1 messages, placements, answer
    assert len(lines) < NOTES + 12

    final = ServerFacts.read(whole.with_suffix(".mcp.json")).to_dict()
    folded = ServerFacts.read(journal).to_dict()
    for doc in (final, folded):
        doc.pop("cassette")
        doc["server"]["command"] = []
    assert folded == final
    banner, *messages = folded["server_messages"]
    assert banner == {"line": "raw server ready", "before": {"exchange": 0}, "after": None}
    assert len(messages) == NOTES + 1
    assert [m["message"]["params"]["data"] for m in messages[:NOTES]] == [
        f"step {n}" for n in range(NOTES)
    ]
    assert all(m["before"] == {"seq": 1} for m in messages[:NOTES])
    assert messages[-1]["host_answer"] == {"result": {"roots": []}}

    # a crash while a line was being written: that line is left out, nothing else
    with journal.open("ab") as fh:
        fh.write(b'{"server_message": {"message": {"jsonrpc": "2.0", "meth')
    cut_short = ServerFacts.read(journal).to_dict()
    cut_short.pop("cassette")
    cut_short["server"]["command"] = []
    assert cut_short == final

    checked = subprocess.run(
        [*CLI, "check", "--no-secrets", str(journal)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2 exchanges, no findings" in checked.stdout

    # replay serves the killed recording: the 300 notifications come again before call 1
    replay = RawSession(replay_cmd(cut))
    try:
        replay.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        assert replay.lines.get(timeout=60) == b"raw server ready\n"  # sent again first
        replay.lines.get(timeout=60)
        replay.request(tool_call(1, "chatty", {"notes": NOTES}))
        notes = [json.loads(line) for line in replay.received if b'"notifications/message"' in line]
        assert [n["params"]["data"] for n in notes] == [f"step {n}" for n in range(NOTES)]
    finally:
        replay.kill()


def test_an_old_sidecar_document_still_reads(tmp_path: Path) -> None:
    """A sidecar written whole (every recording before the journal) reads as before."""
    path = tmp_path / "old.mcp.json"
    doc = {
        "format": "cassette-tui/mcp-server-facts",
        "version": 1,
        "cassette": "old.jsonl",
        "server": {"command": ["srv"]},
        "exchanges": [{"method": "tools/list", "params": {}, "result": {"tools": []}}],
        "server_messages": [
            {"message": {"jsonrpc": "2.0", "method": "x"}, "before": None, "after": None}
        ],
    }
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert ServerFacts.read(path).to_dict() == doc
    assert os.path.getsize(path) > 0
