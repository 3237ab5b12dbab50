"""The standalone GET stream (server messages that answer no request) resumed with
``Last-Event-ID``: the SDK server drops it (``close_standalone_sse_stream``) mid-call and
sends a notification while no GET stream is open; its event store replays it when the
SDK client reconnects. Through ``mcp record --url`` the host gets each message once, in
order, and each is recorded once; ``mcp replay --http`` sends them again, and a raw host
that resumes the replay's GET stream from an event gets the events after it.

What cannot be tested here: the SDK client resumes the GET stream only from the last
event it read, so resuming from an earlier event (events sent twice on the standalone
stream, which the proxy must record once) is tested for a call's stream only
(test_mcp_http_resume.py); and a replay never drops a stream by itself, so the host's
reconnection against a replay is driven by the raw host, not the SDK.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import anyio
from support.mcp_session import CLI, TIMEOUT

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_resume import PROTOCOL

AFTER_DROP = "mem://after-drop"


def sdk_host(url: str) -> list[dict[str, Any]]:
    """``announce`` until the GET stream carried its two messages (it opens as the session
    starts), then ``announce_across_drop``, then wait for the message sent while the GET
    stream was down; every server message the host got, in order."""
    from mcp import Client

    got: list[dict[str, Any]] = []

    async def handler(message: Any) -> None:
        if hasattr(message, "model_dump"):
            got.append(message.model_dump(mode="json", by_alias=True, exclude_none=True))

    def arrived(uri: str) -> bool:
        return any(m.get("params", {}).get("uri") == uri for m in got)

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with Client(
                url, read_timeout_seconds=TIMEOUT, mode="legacy", message_handler=handler
            ) as client:
                while not arrived("mem://news"):
                    await client.call_tool("announce", {})
                    await anyio.sleep(0.1)
                got.append({"mark": "drop"})
                await client.call_tool("announce_across_drop", {})
                while not arrived(AFTER_DROP):
                    await anyio.sleep(0.05)

    anyio.run(main)
    return got


def after_drop(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages[messages.index({"mark": "drop"}) + 1 :]


WANTED = [
    {"method": "notifications/tools/list_changed"},
    {"method": "notifications/resources/updated", "params": {"uri": AFTER_DROP}},
]


def test_a_dropped_get_stream_is_resumed_recorded_once_and_replayed(
    tmp_path: Path, remote: str
) -> None:
    assert after_drop(sdk_host(remote)) == WANTED  # the server and the SDK, no proxy
    run = tmp_path / "standalone.jsonl"
    recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
    try:
        through = sdk_host(url)
    finally:
        assert stop(recorder) == 0
    assert after_drop(through) == WANTED
    facts = json.loads(run.with_suffix(".mcp.json").read_text(encoding="utf-8"))
    standalone = [m["message"] for m in facts["server_messages"] if m.get("stream")]
    assert standalone[-2:] == [{"jsonrpc": "2.0", **m} for m in WANTED]
    assert sum(m.get("params", {}).get("uri") == AFTER_DROP for m in standalone) == 1

    # `--repeat last`: the host calls announce until the GET stream carried its messages
    replay, replay_url = started([*CLI, "mcp", "replay", "--http", str(run), "--repeat", "last"])
    try:
        assert after_drop(sdk_host(replay_url)) == WANTED
    finally:
        stop(replay)

    replay, replay_url = started([*CLI, "mcp", "replay", "--http", str(run), "--repeat", "last"])
    try:
        first, rest = raw_resume(replay_url)
    finally:
        stop(replay)
    assert first[0][1]["method"] == "notifications/tools/list_changed"
    assert [m for _, m in rest][:1] == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated",
         "params": {"uri": "mem://news"}},
    ]  # fmt: skip


def raw_resume(url: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """A raw host: opens the GET stream, calls ``announce``, reads the stream's first
    event and drops the stream; then GETs again with that event's ``Last-Event-ID``.
    ``(the events before the drop, the events of the resumed stream)``, each ``(id,
    message)``."""
    import httpx2

    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
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
        headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(url, json=note, headers=headers).status_code == 202
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "announce", "arguments": {}}}  # fmt: skip
        with (
            httpx2.Client(timeout=TIMEOUT) as poster,
            client.stream("GET", url, headers=headers) as stream,
        ):
            assert stream.status_code == 200
            poster.post(url, json=call, headers=headers)
            first = events(stream, 1)
        with client.stream("GET", url, headers={**headers, "last-event-id": first[0][0]}) as again:
            assert again.status_code == 200
            rest = events(again, 1)
    return first, rest


def events(stream: Any, count: int) -> list[tuple[str, Any]]:
    """The first ``count`` events with data of an SSE response, ``(id, message)``."""
    out: list[tuple[str, Any]] = []
    event_id = ""
    with contextlib.suppress(Exception):
        for raw in stream.iter_lines():
            if raw.startswith("id:"):
                event_id = raw[3:].strip()
            elif raw.startswith("data:") and raw[5:].strip():
                out.append((event_id, json.loads(raw[5:])))
                if len(out) == count:
                    break
    return out
