"""Streamable HTTP streams through ``mcp record --url`` (issue 27): a call's event stream
that the server drops and the host resumes with ``Last-Event-ID``, and the standalone GET
stream (server messages that name no request). Against a real SDK server with an event
store on loopback (``support/mcp_http_resume_server.py``), with the SDK's own HTTP client
(which resumes by itself) and with raw ``httpx2`` (which resumes from an earlier event, so
the server sends some events twice). What the host gets is what the server sent; what is
recorded is each message once, in order; ``mcp replay --http`` serves them again. Every
process is bounded."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import anyio
from support.mcp_session import CLI, TIMEOUT

from tests.cli.test_mcp_http import started, stop

STEPS = 6
PROTOCOL = "2025-11-25"  # resumability (priming events) needs at least this version


def sdk_host(url: str) -> list[dict[str, Any]]:
    """One SDK client session: ``long_task`` (its stream dropped halfway and resumed by the
    client) and ``announce`` (two notifications on the GET stream); every message the host
    got from the server, in order, as JSON."""
    from mcp import Client

    got: list[dict[str, Any]] = []

    async def handler(message: Any) -> None:
        if hasattr(message, "model_dump"):
            got.append(message.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with Client(
                url, read_timeout_seconds=TIMEOUT, mode="legacy", message_handler=handler
            ) as client:
                result = await client.call_tool("long_task", {"steps": STEPS})
                got.append({"answer": result.content[0].model_dump()["text"]})
                # the GET stream opens as the session starts: wait until it carried them
                for _ in range(50):
                    await client.call_tool("announce", {})
                    if any(m.get("method") == "notifications/resources/updated" for m in got):
                        break
                    await anyio.sleep(0.1)

    anyio.run(main)
    return got


def steps_of(messages: list[dict[str, Any]]) -> list[str]:
    return [
        m["params"]["data"]
        for m in messages
        if m.get("method") == "notifications/message" and "params" in m
    ]


def test_a_resumed_stream_and_the_get_stream_are_recorded_once_and_replayed(
    tmp_path: Path, remote: str
) -> None:
    run = tmp_path / "resume.jsonl"
    direct = sdk_host(remote)
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    try:
        through = sdk_host(url)
    finally:
        assert stop(recorder) == 0
    wanted = [f"step {i}" for i in range(STEPS)]
    assert steps_of(direct) == steps_of(through) == wanted
    assert {"answer": f"done {STEPS}"} in through

    facts = json.loads(run.with_suffix(".mcp.json").read_text(encoding="utf-8"))
    messages = [m["message"] for m in facts["server_messages"]]
    assert steps_of(messages) == wanted  # once each, in order, across the resumption
    long_task = [
        m for m in facts["server_messages"] if m["message"].get("method") == "notifications/message"
    ]
    assert all(m["before"] == {"seq": 1} for m in long_task)  # all before its answer
    standalone = [m for m in facts["server_messages"] if m.get("stream") == "standalone"]
    assert {m["message"]["method"] for m in standalone} >= {
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    }
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert entries[0]["tool"] == "long_task"
    assert entries[0]["response"]["content"][0]["text"] == f"done {STEPS}"

    # replay over HTTP: the same messages reach the SDK client, the GET stream's included
    replay, replay_url = started([*CLI, "mcp", "replay", "--http", str(run), "--repeat", "last"])
    try:
        replayed = sdk_host(replay_url)
    finally:
        stop(replay)
    assert steps_of(replayed) == wanted
    assert {"answer": f"done {STEPS}"} in replayed
    methods = {m.get("method") for m in replayed}
    assert {"notifications/tools/list_changed", "notifications/resources/updated"} <= methods

    # a raw host's own GET stream gets the messages the recording's GET stream carried
    replay, replay_url = started([*CLI, "mcp", "replay", "--http", str(run), "--repeat", "last"])
    try:
        assert standalone_messages(replay_url) >= {
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        }
    finally:
        stop(replay)


def standalone_messages(url: str) -> set[str]:
    """Open the session's GET stream, call ``announce`` (again, until something comes on
    the GET stream); the methods that came on it."""
    import queue
    import threading

    import httpx2

    got: queue.Queue[dict[str, Any]] = queue.Queue()
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx2.Client(timeout=TIMEOUT) as client, httpx2.Client(timeout=TIMEOUT) as poster:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        opened = client.post(url, json=init, headers=accept)
        headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(url, json=note, headers=headers).status_code == 202
        with client.stream("GET", url, headers=headers) as stream:
            assert stream.status_code == 200  # the stream is open once its headers came

            def read() -> None:
                with contextlib.suppress(httpx2.HTTPError):
                    for raw in stream.iter_lines():
                        if raw.startswith("data:") and raw[5:].strip():
                            got.put(json.loads(raw[5:]))

            threading.Thread(target=read, daemon=True).start()
            methods: set[str] = set()
            for n in range(2, 12):
                call = {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "announce", "arguments": {}},
                }
                answer = poster.post(url, json=call, headers=headers)
                # the messages went on the GET stream: the answer is plain JSON
                assert answer.headers["content-type"].startswith("application/json")
                try:
                    while True:
                        methods.add(got.get(timeout=1 if methods else 5)["method"])
                except queue.Empty:
                    pass
                if "notifications/resources/updated" in methods:
                    break
    return methods


def sse(response: Any, answer_id: int) -> list[tuple[str | None, dict[str, Any]]]:
    """``(event id, message)`` of each event with data, read up to the answer to
    ``answer_id`` or the stream's end."""
    out: list[tuple[str | None, dict[str, Any]]] = []
    event_id = None
    for raw in response.iter_lines():
        if raw.startswith("id:"):
            event_id = raw[3:].strip()
        elif raw.startswith("data:") and raw[5:].strip():
            out.append((event_id, json.loads(raw[5:])))
            if out[-1][1].get("id") == answer_id:
                break
    return out


def test_resuming_from_an_earlier_event_records_nothing_twice(tmp_path: Path, remote: str) -> None:
    """A raw host resumes the dropped stream from its first event, not its last: the
    server sends the events between again, the host gets them twice (as the server sent
    them), the recording has each once."""
    import httpx2

    run = tmp_path / "again.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    try:
        with httpx2.Client(timeout=TIMEOUT) as client:
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
            opened = client.post(url, json=init, headers=accept)
            session = opened.headers["mcp-session-id"]
            headers = {**accept, "mcp-session-id": session, "mcp-protocol-version": PROTOCOL}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert client.post(url, json=note, headers=headers).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "long_task", "arguments": {"steps": STEPS}},
            }
            with client.stream("POST", url, json=call, headers=headers) as response:
                first = sse(response, 2)  # ends where the server dropped the stream
            assert first and all(i is not None for i, _ in first)
            assert not any(m.get("id") == 2 for _, m in first)  # the answer is still to come
            resume = {**headers, "last-event-id": str(first[0][0])}
            with client.stream("GET", url, headers=resume) as response:
                second = sse(response, 2)
    finally:
        assert stop(recorder) == 0
    again = [m for _, m in second if m.get("method") == "notifications/message"]
    assert again[: len(first) - 1] == [m for _, m in first[1:]]  # sent twice by the server
    assert second[-1][1]["id"] == 2 and second[-1][1]["result"]["content"][0]["text"] == (
        f"done {STEPS}"
    )
    facts = json.loads(run.with_suffix(".mcp.json").read_text(encoding="utf-8"))
    assert steps_of([m["message"] for m in facts["server_messages"]]) == [
        f"step {i}" for i in range(STEPS)
    ]
    (entry,) = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert entry["tool"] == "long_task" and entry["args"] == {"steps": STEPS}
