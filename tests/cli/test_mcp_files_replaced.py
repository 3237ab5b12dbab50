"""``mcp record`` when the user moves, removes or replaces the cassette or its sidecar
while the session runs (``mv run.jsonl old.jsonl``, then a file of their own at the path):
a file the session did not create is never removed nor overwritten, and a recording that
is no longer at ``-o`` is said (stderr, the report's ``write_error``, exit status 2). The
installed CLI as a subprocess, over stdio."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.constants import EXIT_BAD_INPUT, EXIT_CLEAN
from support.mcp_session import HANDSHAKE, TIMEOUT, RawSession, record_cmd, tool_call

#: a server answering ``initialize`` with {} and each tools/call with its arguments as text
ECHO = """
import json, sys
for line in sys.stdin.buffer:
    req = json.loads(line)
    if "id" not in req:
        continue
    result = {}
    if req["method"] == "tools/call":
        text = json.dumps(req["params"]["arguments"])
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}), flush=True)
"""
#: a server that reads until the host is done and never writes a line
SILENT = "import sys\nfor _ in sys.stdin.buffer:\n    pass\n"


def _wait_for(*paths: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"never created: {paths}"
        time.sleep(0.02)


def _swap(path: Path, mine: bytes) -> Path:
    """The user moves ``path`` away and puts a file of their own there."""
    moved = path.with_name(path.name + ".moved")
    path.rename(moved)
    path.write_bytes(mine)
    return moved


def test_nothing_recorded_never_removes_the_users_files(tmp_path: Path) -> None:
    """Nothing recorded: the session removes the two files it created, but not files the
    user put at their paths meanwhile."""
    (tmp_path / "silent.py").write_text(SILENT)
    cassette, sidecar = tmp_path / "run.jsonl", tmp_path / "run.mcp.json"
    session = RawSession(record_cmd(cassette, [sys.executable, str(tmp_path / "silent.py")]))
    _wait_for(cassette, sidecar)
    _swap(cassette, b"MY OWN DATA\n")
    _swap(sidecar, b'{"mine": 1}\n')
    status = session.close()
    assert cassette.read_bytes() == b"MY OWN DATA\n", session.stderr.decode()
    assert sidecar.read_bytes() == b'{"mine": 1}\n'
    said = session.stderr.decode()
    assert status == EXIT_CLEAN, said
    assert f"{cassette} and {sidecar}: another file took its place" in said
    assert "were removed" not in said


def _record_swapping(tmp_path: Path, swap: str) -> tuple[RawSession, int, Path]:
    """Two calls recorded (seqs 1, 2), then the user's change (``swap``: which file, or ``delete``),
    then a third call; the session's status and report."""
    cassette = tmp_path / "run.jsonl"
    report = tmp_path / "report.json"
    (tmp_path / "echo.py").write_text(ECHO)
    server = [sys.executable, str(tmp_path / "echo.py")]
    session = RawSession(record_cmd(cassette, server, "--report", str(report)))
    session.request(HANDSHAKE[0])
    session.send(HANDSHAKE[1])
    for n in (2, 3):
        session.request(tool_call(n, "echo", {"n": n}))
    if swap == "delete":
        cassette.unlink()
    else:
        _swap(tmp_path / swap, b"MY OWN DATA\n")
    answer = session.request(tool_call(4, "echo", {"n": 4}))
    assert answer["result"]["content"][0]["text"] == '{"n": 4}'  # relayed all the same
    return session, session.close(), report


def test_replaced_sidecar_is_left_as_it_is(tmp_path: Path) -> None:
    session, status, _ = _record_swapping(tmp_path, "run.mcp.json")
    said = session.stderr.decode()
    assert (tmp_path / "run.mcp.json").read_bytes() == b"MY OWN DATA\n", said
    assert "another file took its place while the session ran" in said
    # the journal the user moved keeps what it had; the cassette is whole
    assert (tmp_path / "run.mcp.json.moved").read_bytes().startswith(b"{")
    assert [e.seq for e in load(tmp_path / "run.jsonl")] == [1, 2, 3]
    assert status == EXIT_CLEAN, said


def test_replaced_cassette_is_left_and_said(tmp_path: Path) -> None:
    session, status, report = _record_swapping(tmp_path, "run.jsonl")
    said = session.stderr.decode()
    cassette = tmp_path / "run.jsonl"
    assert cassette.read_bytes() == b"MY OWN DATA\n", said
    # every entry went on to the file the user moved, which keeps them all
    assert [e.seq for e in load(tmp_path / "run.jsonl.moved")] == [1, 2, 3]
    sentence = f"the cassette {cassette} was moved, removed or replaced while the session ran"
    assert sentence in said
    assert "(another file is, left as it is): its 3 entries" in said
    assert status == EXIT_BAD_INPUT, said
    assert sentence in json.loads(report.read_text())["mcp"]["write_error"]


def test_removed_cassette_is_said(tmp_path: Path) -> None:
    session, status, report = _record_swapping(tmp_path, "delete")
    said = session.stderr.decode()
    assert not (tmp_path / "run.jsonl").exists()
    assert "(no file is there now): its 3 entries" in said, said
    assert status == EXIT_BAD_INPUT, said
    assert json.loads(report.read_text())["entries"] == 3


def test_report_refused_is_said_not_a_traceback(tmp_path: Path) -> None:
    """The report's path taken by a folder while the session ran: said, naming the file,
    exit 2, and the cassette kept."""
    (tmp_path / "echo.py").write_text(ECHO)
    cassette, report = tmp_path / "run.jsonl", tmp_path / "report.json"
    server = [sys.executable, str(tmp_path / "echo.py")]
    session = RawSession(record_cmd(cassette, server, "--report", str(report)))
    session.request(HANDSHAKE[0])
    session.request(tool_call(2, "echo", {"n": 2}))
    report.mkdir()
    status = session.close()
    said = session.stderr.decode()
    assert f"cassette-tui mcp record: cannot write the report {report}: " in said
    assert "Traceback" not in said, said
    assert status == EXIT_BAD_INPUT
    assert [e.seq for e in load(cassette)] == [1]
