"""A POST body of 64 KB or more nested past the JSON reader's depth (a long string, then
2,000 nested arrays) through ``mcp record --url``: the remote's own answer comes back and
the next call is recorded. Before the fix the proxy's reading of the long string
(``_spans.read_spans``) raised ``RecursionError``: the host got the proxy's 500 and a
traceback went to stderr, though the remote had the body. Against a socket remote that
answers every POST without reading it as JSON but the last call's."""

from __future__ import annotations

import json
import socketserver
from pathlib import Path

from cassette_tui.core.mcp.http import RELAY_FROM
from support.mcp_session import TIMEOUT
from support.raw_request import echo_result, read_head, served, write_json

from tests.cli.test_mcp_http import started, stop
from tests.cli.test_mcp_http_bad_input import CLI, HEADERS, call

REFUSED = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "nested too deep"}}


class _Refuses(socketserver.StreamRequestHandler):
    """A POST read by its ``content-length``: a deep one refused, else its call answered
    with its args."""

    def handle(self) -> None:
        fields = read_head(self.rfile)
        if fields is None:
            return
        body = self.rfile.read(int(fields[b"content-length"]))
        if b"[[[[" in body:
            write_json(self.wfile, REFUSED)
            return
        request = json.loads(body)
        write_json(self.wfile, echo_result(request, json.dumps(request["params"]["arguments"])))


def test_a_body_nested_too_deep_gets_the_remotes_answer(tmp_path: Path) -> None:
    import httpx2

    run = tmp_path / "deep.jsonl"
    deep = json.dumps(call(1, "echo", {"text": "x" * 2 * RELAY_FROM, "d": []}))
    deep = deep.replace("[]", "[" * 2000 + "]" * 2000)
    with served(_Refuses) as remote:
        recorder, url = started([*CLI, "mcp", "record", "--url", remote, "-o", str(run)])
        try:
            with httpx2.Client(timeout=TIMEOUT) as client:
                refused = client.post(url, content=deep, headers=HEADERS)
                after = json.dumps(call(2, "echo", {"n": 2}))
                answered = client.post(url, content=after, headers=HEADERS).json()
        finally:
            status = stop(recorder)
    assert status == 0 and recorder.stderr is not None
    said = recorder.stderr.read().decode()
    assert "Traceback" not in said, said
    assert (refused.status_code, refused.json(), answered["id"]) == (200, REFUSED, 2)
    entries = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    assert [e["args"] for e in entries] == [{"n": 2}]
