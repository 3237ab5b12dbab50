"""Streamable HTTP (issue 27): ``mcp record --url`` stands on a loopback port in front of a
real SDK server serving Streamable HTTP on loopback (``support/mcp_toy_server.py --http``),
and ``mcp replay --http`` serves the recording on a loopback port; the SDK's own HTTP client
sees the same answers, progress included, through both. Every process is bounded."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
from support.mcp_session import CLI, TIMEOUT, toy_server

CALLS = [("echo", {"text": "hi"}), ("counter", {}), ("counter", {}), ("fail", {"reason": "x"})]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def started(command: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    """A process that prints its URL on stdout first; ``(process, url)``."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.stderr else "")
    return proc, url


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def client_session(url: str) -> dict[str, Any]:
    from mcp import Client

    out: dict[str, Any] = {"calls": [], "progress": []}

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with Client(url, read_timeout_seconds=TIMEOUT) as client:
                tools = await client.list_tools()
                out["tools"] = sorted(t.name for t in tools.tools)
                for name, args in CALLS:
                    result = await client.call_tool(name, args)
                    out["calls"].append(result.model_dump(mode="json", by_alias=True))

                async def seen(progress: float, total: float | None, message: str | None) -> None:
                    out["progress"].append([progress, total, message])

                result = await client.call_tool("progress", {"steps": 2}, progress_callback=seen)
                out["calls"].append(result.model_dump(mode="json", by_alias=True))

    anyio.run(main)
    return out


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=TIMEOUT)


def test_record_a_remote_server_over_http_and_replay_it_over_http(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen([*toy_server("--http", str(port))], stderr=subprocess.DEVNULL)
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        direct = client_session(remote)
        run = tmp_path / "http.jsonl"
        report = tmp_path / "record.json"
        proxy, url = started(
            [*CLI, "mcp", "record", "--url", remote, "-o", str(run), "--report", str(report)]
        )
        try:
            recorded = client_session(url)
        finally:
            status = stop(proxy)
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)
    assert status == 0
    # the counter went on: the same server, one session later
    assert recorded["calls"][2]["structuredContent"]["result"] == 4
    assert recorded["tools"] == direct["tools"] and recorded["progress"] == direct["progress"]
    entries = [json.loads(x) for x in run.read_text().splitlines()]
    assert [e["tool"] for e in entries] == ["echo", "counter", "counter", "fail", "progress"]
    assert len(entries[-1]["mcp_progress"]) == 2
    assert json.loads(report.read_text())["entries"] == 5

    # replay over HTTP: the server is gone
    replay_report = tmp_path / "replay.json"
    replay, url = started(
        [*CLI, "mcp", "replay", "--http", str(run), "--report", str(replay_report)]
    )
    try:
        replayed = client_session(url)
    finally:
        status = stop(replay)
    assert replayed == recorded
    assert status == 0
    doc = json.loads(replay_report.read_text())
    assert doc["misses"] == [] and doc["unused_seqs"] == []


def test_replay_over_http_refuses_an_unknown_session(tmp_path: Path) -> None:
    import httpx2

    run = tmp_path / "one.jsonl"
    run.write_text(
        json.dumps({"seq": 1, "tool": "echo", "args": {}, "response": {"content": []}}) + "\n"
    )
    replay, url = started([*CLI, "mcp", "replay", "--http", str(run)])
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        opened = httpx2.post(url, json=init, headers=accept, timeout=TIMEOUT)
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {}}}  # fmt: skip
        wrong = httpx2.post(url, json=call, headers={**accept, "mcp-session-id": "nope"})
        assert wrong.status_code == 404
        right = httpx2.post(url, json=call, headers={**accept, "mcp-session-id": session})
        assert right.json()["result"] == {"content": []}
        assert httpx2.get(url, headers=accept).status_code == 405
        assert httpx2.delete(url, headers={"mcp-session-id": session}).status_code == 200
    finally:
        status = stop(replay)
    assert status == 0


def _events(response: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(id, message)`` of each SSE event of a streamed response, read to its end."""
    out, event_id = [], 0
    for raw in response.iter_lines():
        if raw.startswith("id:"):
            event_id = int(raw[3:].strip())
        elif raw.startswith("data:"):
            out.append((event_id, json.loads(raw[5:])))
    return out


def test_replay_over_http_streams_server_requests_and_resumes(tmp_path: Path) -> None:
    """A cassette recorded over stdio (``support/mcp_raw_server.py``: a notification and a
    server request ``roots/list`` around tool answers) replayed over HTTP: the messages
    come on the request's event stream, the host answers the server request by a POST,
    and a stream left early is resumed by a GET with ``Last-Event-ID``."""
    import httpx2
    from support.mcp_session import RawSession, record_cmd, tool_call

    raw_server = [*toy_server()[:1], str(Path(toy_server()[1]).with_name("mcp_raw_server.py"))]
    run = tmp_path / "raw.jsonl"
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    live = RawSession(record_cmd(run, raw_server))
    try:
        live.lines.get(timeout=TIMEOUT)  # the banner
        live.request(init)
        live.request(tool_call(1, "notify", {}))
        live.send(tool_call(2, "ask", {}))
        question = json.loads(live.lines.get(timeout=TIMEOUT))
        live.send({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": []}})
        assert json.loads(live.lines.get(timeout=TIMEOUT))["id"] == 2
        live.request(tool_call(3, "echo", {"n": 3}))
        assert live.close() == 0
    finally:
        live.kill()

    report = tmp_path / "report.json"
    replay, url = started([*CLI, "mcp", "replay", "--http", str(run), "--report", str(report)])
    accept = {"accept": "application/json, text/event-stream"}
    try:
        with httpx2.Client(timeout=TIMEOUT) as client:
            opened = client.post(url, json=init, headers=accept)
            assert opened.json()["id"] == 0  # the banner is not sent over HTTP
            headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"]}
            with client.stream("POST", url, json=tool_call(1, "notify", {}), headers=headers) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                notes = _events(r)
            assert [m.get("method") for _, m in notes] == [
                "notifications/tools/list_changed",
                "notifications/message",
                None,
            ]
            with client.stream("POST", url, json=tool_call(2, "ask", {}), headers=headers) as r:
                lines = r.iter_lines()
                first_id = int(next(lines)[3:])
                next(lines)  # event: message
                asked = json.loads(next(lines)[5:])
                assert asked["method"] == "roots/list"
                # the host leaves the stream, answers the server request, then resumes
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}
            assert client.post(url, json=answer, headers=headers).status_code == 202
            resumed = client.get(url, headers={**headers, "last-event-id": str(first_id)})
            rest = _events(resumed)
            assert [m["id"] for _, m in rest] == [2] and rest[0][0] > first_id
            assert "result" in rest[0][1]
            echo = client.post(url, json=tool_call(3, "echo", {"n": 3}), headers=headers)
            assert echo.json()["result"]["content"][0]["text"] == '{"n": 3}'
    finally:
        status = stop(replay)
    assert status == 0
    doc = json.loads(report.read_text())["mcp"]
    assert doc["not_replayed"] == [] and doc["host_answers_differ"] == []
    assert doc["stdout_lines_skipped"] == 1


def test_record_url_errors_are_plain(tmp_path: Path) -> None:
    """Neither a COMMAND nor --url (or both) is a usage error; a remote that does not
    answer is a 502 for the host and a problem in the report, and nothing is kept."""
    import httpx2

    run = tmp_path / "down.jsonl"
    both = subprocess.run(
        [*CLI, "mcp", "record", "-o", str(run), "--url", "http://127.0.0.1:9/mcp", "--", "x"],
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert both.returncode == 2 and "COMMAND or --url, not both" in both.stderr
    report = tmp_path / "report.json"
    down = f"http://127.0.0.1:{free_port()}/mcp"
    proxy, url = started(
        [*CLI, "mcp", "record", "--url", down, "-o", str(run), "--report", str(report)]
    )
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        answer = httpx2.post(url, json=init, timeout=TIMEOUT)
        assert answer.status_code == 502
    finally:
        assert stop(proxy) == 0
    doc = json.loads(report.read_text())["mcp"]
    assert any("did not answer" in p for p in doc["problems"])
    assert doc["unanswered"] == ["initialize"] and doc["removed"] is True
    assert not run.exists()
