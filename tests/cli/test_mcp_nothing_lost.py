"""``mcp record`` loses no answered call: ids ``null`` and ``1.5``, a batch array, an answer
holding invalid UTF-8, arguments nested past the cassette's limit, an id reused while in
flight, a banner on the server's stdout, a server that dies with a malformed request
pending (issue 27). Against ``support/mcp_raw_server.py``, a server that sends what the
SDK's servers never do; every process is bounded by a timeout."""

from __future__ import annotations

import json
from pathlib import Path

from support.mcp_session import TOY_SERVER, RawSession, record_cmd, replay_cmd, tool_call

RAW_SERVER = [
    __import__("sys").executable,
    str(Path(TOY_SERVER).with_name("mcp_raw_server.py")),
]
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}


def entries_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def deep(levels: int) -> object:
    value: object = "bottom"
    for _ in range(levels):
        value = [value]
    return value


def test_odd_ids_batches_bad_utf8_deep_args_and_reused_ids_are_all_kept(tmp_path: Path) -> None:
    run = tmp_path / "raw.jsonl"
    report = tmp_path / "report.json"
    session = RawSession(record_cmd(run, RAW_SERVER, "--report", str(report)))
    try:
        banner = session.lines.get(timeout=60)
        assert banner == b"raw server ready\n"  # forwarded as it came
        session.request(INIT)
        # a batch of two tools/call: one line each way
        session.send([tool_call(2, "echo", {"n": 2}), tool_call(3, "echo", {"n": 3})])
        batch = json.loads(session.lines.get(timeout=60))
        assert [a["id"] for a in batch] == [2, 3]
        assert session.request(tool_call(None, "echo", {"id": "null"}))["id"] is None
        assert session.request(tool_call(1.5, "echo", {"id": 1.5}))["id"] == 1.5
        session.send(tool_call(4, "bad_utf8", {}))
        assert b"\xff" in session.lines.get(timeout=60)  # forwarded byte for byte
        session.request(tool_call(5, "echo", {"deep": deep(700)}))
        # id 7 reused while in flight: each call gets its own answer back under id 7
        session.send(tool_call(7, "hold", {"who": "first"}))
        second = session.request(tool_call(7, "echo", {"who": "second"}))
        assert "second" in second["result"]["content"][0]["text"]
        session.send(tool_call(8, "release", {}))
        answers = [json.loads(session.lines.get(timeout=60)) for _ in range(2)]
        assert sorted(a["id"] for a in answers) == [7, 8]
        assert session.close() == 0
    finally:
        session.kill()

    tools = [(e["tool"], e["args"]) for e in entries_of(run)]
    assert tools == [
        ("echo", {"n": 2}),
        ("echo", {"n": 3}),
        ("echo", {"id": "null"}),
        ("echo", {"id": 1.5}),
        ("bad_utf8", {}),
        ("echo", {"who": "second"}),
        ("hold", {"who": "first"}),
        ("release", {}),
    ]
    by_tool = {e["tool"]: e for e in entries_of(run)}
    assert by_tool["bad_utf8"]["response"]["content"][0]["text"] == "caf\ufffd"
    assert by_tool["hold"]["response"]["content"][0]["text"] == "held"
    facts = json.loads((tmp_path / "raw.mcp.json").read_text())
    assert facts["server_messages"][0]["line"] == "raw server ready"
    assert facts["server_messages"][0]["before"] == {"exchange": 0}
    (aside,) = facts["kept_aside"]
    assert aside["method"] == "tools/call" and aside["id"] == 5
    assert "600 levels" in aside["reason"] and json.loads(aside["request"])["id"] == 5
    doc = json.loads(report.read_text())["mcp"]
    assert doc["kept_aside"] == 1 and doc["server_messages"] == 1
    problems = "\n".join(doc["problems"])
    assert "invalid UTF-8" in problems and "reused id 7" in problems
    assert "not JSON-RPC" in problems and "kept aside" in problems
    stderr = session.stderr.decode()
    assert "reused id 7" in stderr and "kept aside" in stderr


def test_a_malformed_request_pending_when_the_server_dies_gets_its_error(tmp_path: Path) -> None:
    run = tmp_path / "dies.jsonl"
    session = RawSession(record_cmd(run, RAW_SERVER))
    try:
        session.lines.get(timeout=60)  # the banner
        session.request(INIT)
        session.send({"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": [1]})
        answer = session.request(tool_call(9, "die", {}))
        assert answer["error"]["code"] == -32603
        (pending,) = [json.loads(line) for line in session.received if b'"id":null' in line]
        assert "exited (status 3)" in pending["error"]["message"]
        assert session.wait() == 3
    finally:
        session.kill()
    assert run.exists()  # the initialize answer and the banner are kept


def test_replay_answers_ids_null_and_one_and_a_half(tmp_path: Path) -> None:
    run = tmp_path / "ids.jsonl"
    session = RawSession(record_cmd(run, RAW_SERVER))
    try:
        session.lines.get(timeout=60)
        session.request(INIT)
        session.request(tool_call(None, "echo", {"n": 1}))
        session.request(tool_call(1.5, "echo", {"n": 2}))
        assert session.close() == 0
    finally:
        session.kill()
    replay = RawSession(replay_cmd(run))
    try:
        replay.send(INIT)
        # the banner is sent again where it came: before the initialize answer
        assert replay.lines.get(timeout=60) == b"raw server ready\n"
        assert json.loads(replay.lines.get(timeout=60))["id"] == 0
        first = replay.request(tool_call(None, "echo", {"n": 1}))
        assert first["id"] is None and first["result"]["content"][0]["text"] == '{"n": 1}'
        second = replay.request(tool_call(1.5, "echo", {"n": 2}))
        assert second["id"] == 1.5 and second["result"]["content"][0]["text"] == '{"n": 2}'
        replay.send([tool_call(3, "echo", {"n": 1}), tool_call(4, "echo", {"n": 2})])
        batch = json.loads(replay.lines.get(timeout=60))
        assert [a["id"] for a in batch] == [3, 4]
        assert replay.close() == 1  # the batch's calls are repeats past the recording
    finally:
        replay.kill()


def test_a_big_call_is_recorded_as_the_plain_writer_writes_it(tmp_path: Path) -> None:
    """A call past ``PREPARE_FROM`` has its args' digest and text computed while the
    server works (for speed); its line is the one ``dump_line`` writes."""
    from cassette_tui.core.format.cassette import dump_line, load

    run = tmp_path / "big.jsonl"
    args = {"text": "é" * 700_000, "z": [1, 2.5, None], "a": {"k": "v"}}
    session = RawSession(record_cmd(run, RAW_SERVER))
    try:
        session.lines.get(timeout=60)
        session.request(INIT)
        session.request(tool_call(1, "echo", args))
        assert session.close() == 0
    finally:
        session.kill()
    (entry,) = load(run)
    assert entry.args == args
    assert {"recorded_at", "duration_ms"} <= set(entry.extra)
    assert run.read_bytes() == dump_line(entry)


def test_a_call_kept_aside_replays_from_its_text_and_an_unanswerable_one_fails(
    tmp_path: Path,
) -> None:
    run = tmp_path / "deep.jsonl"
    args = {"deep": deep(700)}
    session = RawSession(record_cmd(run, RAW_SERVER))
    try:
        session.lines.get(timeout=60)
        session.request(INIT)
        live = session.request(tool_call(1, "echo", args))
        assert session.close() == 0
    finally:
        session.kill()
    replay = RawSession(replay_cmd(run))
    try:
        replay.lines.get(timeout=60)
        replay.request(INIT)
        assert replay.request(tool_call(1, "echo", args)) == live
        again = replay.request(tool_call(2, "echo", args))  # answered, never left waiting
        assert again["error"]["code"] == -32603
        assert "cannot answer this tools/call" in again["error"]["message"]
        assert replay.close() == 1
    finally:
        replay.kill()


def test_a_long_line_is_forwarded_as_it_comes_and_an_id_reused_in_it_is_kept_aside(
    tmp_path: Path,
) -> None:
    """A line past ``PIECES_FROM`` goes to the server before it has ended; an id it reuses
    while in flight cannot be aliased then: both calls are kept aside, said, not guessed."""
    from cassette_tui.core.mcp.record import PIECES_FROM

    run = tmp_path / "long.jsonl"
    report = tmp_path / "report.json"
    big = {"blob": "z" * (PIECES_FROM + 1000)}
    session = RawSession(record_cmd(run, RAW_SERVER, "--report", str(report)))
    try:
        session.lines.get(timeout=60)
        session.request(INIT)
        session.request(tool_call(1, "echo", big))  # a long line, answered whole
        session.send(tool_call(7, "hold", {}))
        second = session.request(tool_call(7, "echo", big))
        assert json.loads(second["result"]["content"][0]["text"]) == big
        session.request(tool_call(8, "release", {}))
        assert session.close() == 0
    finally:
        session.kill()
    assert [e["tool"] for e in entries_of(run)] == ["echo", "release"]
    assert entries_of(run)[0]["args"] == big
    aside = json.loads((tmp_path / "long.mcp.json").read_text())["kept_aside"]
    assert [a["id"] for a in aside] == [7, 7]
    assert all("reused in flight" in a["reason"] and a["unpaired"] for a in aside)
    problems = "\n".join(json.loads(report.read_text())["mcp"]["problems"])
    assert "cannot be told" in problems


def test_big_calls_started_ahead_end_in_order_and_an_unanswered_one_is_not_kept(
    tmp_path: Path,
) -> None:
    """A big call alone in flight has its entry line started while the server works
    (``CassetteWriter.open_entry``, issue 31): a call answered before it takes the start
    back and is written first; one never answered leaves nothing when the session ends.
    Every line is the one ``dump_line`` writes, and the cassette loads strictly."""
    from cassette_tui.core.format.cassette import dump_line, load
    from cassette_tui.core.mcp.record import PREPARE_FROM

    run = tmp_path / "ahead.jsonl"
    big = {"blob": "b" * (PREPARE_FROM + 1000)}
    session = RawSession(record_cmd(run, RAW_SERVER))
    try:
        session.lines.get(timeout=60)
        session.request(INIT)
        session.send(tool_call(1, "hold", big))  # alone: its line is started ahead
        session.request(tool_call(2, "echo", {"n": 2}))  # answered first
        released = session.request(tool_call(3, "release", {}))
        held = json.loads(session.received[-2])
        assert held["id"] == 1 and released["id"] == 3
        answer = session.request(tool_call(4, "echo", big))  # started ahead, then ended
        assert json.loads(answer["result"]["content"][0]["text"]) == big
        session.send(tool_call(5, "hold", big))  # never answered
        assert session.close() == 0
    finally:
        session.kill()
    entries = load(run)
    assert [(e.seq, e.tool) for e in entries] == [
        (1, "echo"),
        (2, "hold"),
        (3, "release"),
        (4, "echo"),
    ]
    assert entries[1].args == big and entries[3].args == big
    assert run.read_bytes() == b"".join(dump_line(e) for e in entries)
