"""Big messages through ``mcp record --url`` (issue 31: the proxy's own HTTP client, the
body passed on as it comes): the host gets byte for byte what the server sent it straight,
the server gets what the host sent (its answer says so), and each entry is what the message
holds: its args, its answer's result and the args digest computed from the values by
``format.digest``, as a reference for the spans path (``mcp/_spans.py``). A request body
announced by ``content-length`` (passed on as it comes) and one sent chunked (read whole);
an answer that big; one small call between. Against the hand-written server on loopback
(``support/mcp_raw_http_server.py``); every process bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cassette_tui.core.format.digest import digest
from support.mcp_session import TIMEOUT

from tests.cli.test_mcp_http import free_port, started, stop, wait_listening
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, SERVER, call, content

BIG = 3 << 20


def test_big_messages_cross_the_proxy_unchanged_and_are_recorded_as_sent(
    tmp_path: Path,
) -> None:
    import httpx2

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    run = tmp_path / "big.jsonl"
    calls: list[tuple[str, dict[str, Any], bool]] = [
        ("echo", {"text": "x" * BIG, "n": 1}, False),  # announced: passed on as it comes
        ("echo", {"text": "z" * BIG, "n": 2}, True),  # chunked: read whole first
        ("fill", {"size": BIG}, False),  # a big answer
        ("echo", {"small": True}, False),
        ("fill", {"size": BIG + 7}, True),
    ]
    try:
        wait_listening(port)
        remote = f"http://127.0.0.1:{port}/mcp"
        recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
        try:
            with httpx2.Client(timeout=TIMEOUT) as client:
                for n, (tool, args, chunked) in enumerate(calls, start=1):
                    body = json.dumps(call(n, tool, args)).encode()
                    through = client.post(url, content=content(body, chunked), headers=HEADERS)
                    straight = client.post(remote, content=body, headers=HEADERS)
                    assert through.status_code == straight.status_code == 200
                    assert through.content == straight.content
                    if tool == "echo":  # the server got what the host sent
                        text = through.json()["result"]["content"][0]["text"]
                        assert json.loads(text) == args
        finally:
            assert stop(recorder) == 0
    finally:
        server.kill()
        server.wait(timeout=TIMEOUT)

    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [(e["seq"], e["tool"], e["args"]) for e in entries] == [
        (n, tool, args) for n, (tool, args, _) in enumerate(calls, start=1)
    ]
    for entry, (tool, args, _) in zip(entries, calls, strict=True):
        assert entry["args_digest"] == digest(args)
        text = json.dumps(args, sort_keys=True) if tool == "echo" else "y" * args["size"]
        assert entry["response"] == {"content": [{"type": "text", "text": text}], "isError": False}
