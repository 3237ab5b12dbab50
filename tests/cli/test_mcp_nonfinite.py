"""``mcp replay`` never turns a NaN into ``null`` nor writes bare ``NaN`` (issue 10, audit
G2): the report and every message on the wire are strict JSON, a non-finite number written
as ``{"$numberDouble": "NaN"}`` (``core.jsonvalue``) and read back by its decoder."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, NoReturn

from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.jsonvalue import decode_nonfinite
from support.factory import entry, write_cassette
from support.mcp_session import HANDSHAKE, RawSession, raw_script, replay_cmd, tool_call


def _refuse(name: str) -> NoReturn:
    raise ValueError(f"bare {name} in JSON")


def strict(text: str | bytes) -> Any:
    """Parse ``text`` refusing NaN and Infinity, then decode ``$numberDouble``."""
    return decode_nonfinite(json.loads(text, parse_constant=_refuse))


def test_a_nan_argument_stays_nan_in_the_error_and_the_report(tmp_path: Path) -> None:
    cassette = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "echo", {"x": 1}, response={"content": [], "isError": False}),
        # recorded with a NaN in its answer (written by the project's writer)
        entry(2, "stats", {}, response={"structuredContent": {"mean": {"$numberDouble": "NaN"}}}),
    )
    assert math.isnan(load(cassette)[1].response["structuredContent"]["mean"])
    report = tmp_path / "report.json"
    session = RawSession(replay_cmd(cassette), env={**os.environ, "CASSETTE_REPORT": str(report)})
    try:
        raw_script(session, HANDSHAKE)
        session.request(tool_call(5, "echo", {"x": float("nan")}))
        session.request(tool_call(6, "stats", {}))
        session.request({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                         "params": {"uri": "x", "limit": float("inf")}})  # fmt: skip
        status = session.close()
    finally:
        session.kill()
    assert status == 1  # a miss
    answers = {doc["id"]: doc for doc in map(strict, session.received) if "id" in doc}
    miss = answers[5]["error"]
    assert miss["code"] == -32010
    assert math.isnan(miss["data"]["args"]["x"])  # not None: NaN is not null on the wire
    assert math.isnan(answers[6]["result"]["structuredContent"]["mean"])
    assert answers[7]["error"]["data"]["params"]["limit"] == math.inf
    (line,) = [line for line in session.received if b'"id":5,' in line]
    assert b'"args":{"x":{"$numberDouble":"NaN"}}' in line and b'"x":null' not in line

    doc = strict(report.read_text(encoding="utf-8"))  # strict JSON: json.loads refuses NaN
    assert math.isnan(doc["misses"][0]["args"]["x"])
    assert doc["mcp"]["not_recorded"] == [
        {"method": "resources/read", "params": {"uri": "x", "limit": math.inf}}
    ]


def test_server_facts_keep_a_nan_as_strict_json(tmp_path: Path) -> None:
    from cassette_tui.core.mcp._facts import Exchange, ServerFacts

    facts = ServerFacts(
        command=["srv"],
        exchanges=[Exchange("tools/list", {}, result={"tools": [], "score": float("nan")})],
    )
    path = tmp_path / "run.mcp.json"
    facts.write(path, overwrite=False)
    assert math.isnan(strict(path.read_text(encoding="utf-8"))["exchanges"][0]["result"]["score"])
    (back,) = ServerFacts.read(path).exchanges
    assert back.result is not None and math.isnan(back.result["score"])
