"""``cassette-tui verify`` as a user runs it: a real MCP server on stdio
(``support/mcp_toy_server.py``: ``lookup`` annotated read-only, ``append_note`` a write,
``counter`` different at every call), recorded through ``mcp record`` by the SDK's client,
then the world changed and the recording verified; and a Python dispatcher module written
to ``tmp_path``. The server and the dispatcher log every call they get, so the tests say
which calls were never re-issued."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from support.factory import entry, write_cassette
from support.mcp_session import http_toy_server, record_cmd, sdk_session, toy_server
from support.run import cli

CALLS = [
    ("lookup", {"key": "a"}),
    ("lookup", {"key": "b"}),
    ("append_note", {"text": "hi"}),
    ("echo", {"text": "x"}),
]


def logged(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()]


@pytest.fixture
def recorded(tmp_path: Path) -> dict[str, Any]:
    """CALLS recorded from the toy server; then ``b`` changed in its world and the log
    emptied. ``server``: the live server's command line (one string)."""
    data, log = tmp_path / "data.json", tmp_path / "calls.log"
    data.write_text(json.dumps({"a": 1, "b": 2}))
    server = toy_server("--data", str(data), "--log", str(log))
    cassette = tmp_path / "run.jsonl"
    sdk_session(record_cmd(cassette, server), CALLS)
    assert logged(log) == ["lookup", "lookup", "append_note"]
    data.write_text(json.dumps({"a": 1, "b": 3, "notes": ["hi"]}))
    log.unlink()
    return {"cassette": cassette, "log": log, "server": shlex.join(server), "data": data}


def test_mcp_names_the_stale_entry_and_never_reissues_a_write(recorded: dict[str, Any]) -> None:
    cassette, log = recorded["cassette"], recorded["log"]
    done = cli("verify", str(cassette), "--mcp", recorded["server"])
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "seq 1  lookup  fresh" in out
    assert "seq 2  lookup  stale  (2 paths differ)" in out
    assert "seq 3  append_note  not re-issued  (not marked safe" in out
    assert "seq 4  echo  not re-issued" in out
    assert "  seq 2 lookup: $.content[0].text, $.structuredContent.value" in out
    assert "verdict: stale recording (1 fresh, 1 stale)" in out
    live = cassette.with_name("run.live.jsonl")
    assert f"next: cassette-tui diff {cassette} {live}" in out
    # only the read-only tool was called live; the write never was
    assert logged(log) == ["lookup", "lookup"]
    assert json.loads(recorded["data"].read_text())["notes"] == ["hi"]
    # the live cassette opens in diff, which finds the stale answer and the same contract
    diffed = cli("diff", str(cassette), str(live), "--json")
    assert diffed.returncode == 1, diffed.stderr
    kinds = [f["kind"] for f in json.loads(diffed.stdout)["findings"]]
    assert "stale_response" in kinds and "contract_change" not in kinds
    # never overwritten without --force
    again = cli("verify", str(cassette), "--mcp", recorded["server"])
    assert again.returncode == 2
    assert f"{live}: exists; use --force to replace it" in again.stderr
    assert cli("verify", str(cassette), "--mcp", recorded["server"], "--force").returncode == 1


def test_mcp_json_document(recorded: dict[str, Any]) -> None:
    cassette = recorded["cassette"]
    out = cassette.with_name("elsewhere.jsonl")
    done = cli("verify", str(cassette), "--mcp", recorded["server"], "-o", str(out), "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "stale" and doc["exit_status"] == 1
    assert doc["live"] == {"kind": "mcp", "target": recorded["server"]}
    assert doc["counts"] == {"fresh": 1, "stale": 1, "error": 0, "nondeterministic": 0,
                             "not_reissued": 2}  # fmt: skip
    assert doc["stale"] == [
        {"seq": 2, "tool": "lookup", "paths": ["$.content[0].text", "$.structuredContent.value"]}
    ]
    statuses = [(e["seq"], e["status"], e["safe_by"]) for e in doc["entries"]]
    assert statuses == [(1, "fresh", "readOnlyHint"), (2, "stale", "readOnlyHint"),
                        (3, "not_reissued", None), (4, "not_reissued", None)]  # fmt: skip
    drift = doc["entries"][1]["drift"]
    assert {"path": "$.structuredContent.value", "a": 2, "b": 3, "change": "value_changed",
            "part": "response"} in drift  # fmt: skip
    assert doc["out"] == str(out) and out.is_file()
    assert out.with_name("elsewhere.mcp.json").is_file()  # the live contract, for diff


def test_a_remote_server_over_streamable_http(recorded: dict[str, Any]) -> None:
    cassette, log = recorded["cassette"], recorded["log"]
    with http_toy_server("--data", str(recorded["data"]), "--log", str(log)) as url:
        done = cli("verify", str(cassette), "--url", url, "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["live"] == {"kind": "mcp", "target": url}
    assert [e["status"] for e in doc["entries"]] == ["fresh", "stale", "not_reissued",
                                                     "not_reissued"]  # fmt: skip
    assert logged(log) == ["lookup", "lookup"]
    # without the sidecar the recorded results still say which protocol to speak
    cassette.with_name("run.mcp.json").unlink()
    with http_toy_server("--data", str(recorded["data"])) as url:
        bare = cli("verify", str(cassette), "--url", url, "--allow", "lookup", "--no-write",
                   "--json")  # fmt: skip
    assert [e["status"] for e in json.loads(bare.stdout)["entries"]][:2] == ["fresh", "stale"]
    wrong = cli("verify", str(cassette), "--url", "ftp://example.com/mcp", "--no-write")
    assert wrong.returncode == 2 and "expected an http:// or https:// URL" in wrong.stderr


def test_the_live_annotations_decide_and_a_disagreement_is_said(recorded: dict[str, Any]) -> None:
    cassette, log = recorded["cassette"], recorded["log"]
    sidecar = cassette.with_name("run.mcp.json")
    facts = json.loads(sidecar.read_text())
    for exchange in facts["exchanges"]:
        for tool in (exchange.get("result") or {}).get("tools", []):
            if tool["name"] == "append_note":  # the recording claims the write is read-only
                tool["annotations"] = {"readOnlyHint": True}
            if tool["name"] == "lookup":
                tool.pop("annotations", None)
    sidecar.write_text(json.dumps(facts))
    done = cli("verify", str(cassette), "--mcp", recorded["server"], "--json", "--no-write")
    doc = json.loads(done.stdout)
    assert doc["annotations"] == [
        {"tool": "lookup", "recorded": False, "live": True},
        {"tool": "append_note", "recorded": True, "live": False},
    ]
    assert [e["status"] for e in doc["entries"]][:3] == ["fresh", "stale", "not_reissued"]
    assert logged(log) == ["lookup", "lookup"]
    assert doc["out"] is None and not cassette.with_name("run.live.jsonl").exists()
    text = cli("verify", str(cassette), "--mcp", recorded["server"], "--no-write").stdout
    assert (
        "annotations: append_note readOnlyHint is false on the live server, true in the "
        "recording (the live one decides)" in text
    )


def test_repeat_calls_a_varying_tool_nondeterministic(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    server = toy_server("--log", str(log))
    cassette = tmp_path / "count.jsonl"
    sdk_session(record_cmd(cassette, server), [("counter", {})])
    log.unlink()
    args = ["verify", str(cassette), "--mcp", shlex.join(server), "--allow", "counter"]
    done = cli(*args, "--repeat", "3")
    assert done.returncode == 1, done.stderr
    assert "seq 1  counter  nondeterministic  (3 different answers in 3 calls)" in done.stdout
    assert "re-recording rolls the dice again (not stale)" in done.stdout
    assert logged(log) == ["counter"] * 3
    live = [json.loads(x) for x in cassette.with_name("count.live.jsonl").read_text().splitlines()]
    # a new server process counts from 1 again: its first answer equals the recording's
    assert [x["response"]["structuredContent"] for x in live] == [
        {"result": 1}, {"result": 2}, {"result": 3}
    ]  # fmt: skip


def test_nothing_safe_says_so_and_exits_2(recorded: dict[str, Any], tmp_path: Path) -> None:
    only_writes = write_cassette(
        tmp_path / "writes.jsonl", entry(1, "append_note", {"text": "again"}, response={})
    )
    done = cli("verify", str(only_writes), "--mcp", recorded["server"])
    assert done.returncode == 2
    assert "nothing re-issued: no entry is marked safe to call live" in done.stdout
    assert "every re-issued entry is fresh" not in done.stdout
    doc = json.loads(cli("verify", str(only_writes), "--mcp", recorded["server"], "--json").stdout)
    assert doc["verdict"] == "nothing_safe" and doc["exit_status"] == 2
    assert logged(recorded["log"]) == []
    assert not only_writes.with_name("writes.live.jsonl").exists()


def test_a_server_that_dies_mid_way_is_incomplete(tmp_path: Path) -> None:
    # a cassette without a sidecar: the live server is spoken to with initialize
    cassette = write_cassette(
        tmp_path / "die.jsonl",
        entry(1, "echo", {"text": "x"}, response={"content": [], "isError": False}),
        entry(2, "die", {"status": 3}, response={"content": [], "isError": False}),
        entry(3, "echo", {"text": "y"}, response={"content": [], "isError": False}),
    )
    server = shlex.join(toy_server())
    done = cli("verify", str(cassette), "--mcp", server, "--allow", "echo", "--allow", "die",
               "--json")  # fmt: skip
    assert done.returncode == 2, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "incomplete"
    assert "exited before answering tools/call (exit status 3)" in doc["problem"]
    assert [e["status"] for e in doc["entries"]] == ["stale", "error", "not_reissued"]
    assert doc["entries"][2]["why"] == "not re-issued: the MCP server exited at seq 2"


@pytest.mark.parametrize(
    ("server", "words"),
    [
        ("/nonexistent/mcp-server --stdio", "cannot start: No such file or directory"),
        (f"{sys.executable} -c 'import sys; print(\"bye\", file=sys.stderr); sys.exit(4)'",
         "exited before answering initialize (exit status 4); its stderr ends: bye"),
    ],
)  # fmt: skip
def test_a_server_that_cannot_start_is_a_clear_error(
    tmp_path: Path, server: str, words: str
) -> None:
    cassette = write_cassette(tmp_path / "r.jsonl", entry(1, "lookup", {"key": "a"}))
    done = cli("verify", str(cassette), "--mcp", server, "--allow", "lookup", "--json")
    assert done.returncode == 2
    assert words in done.stderr and "Traceback" not in done.stderr
    assert words in json.loads(done.stdout)["error"]


# -- a Python dispatcher ----------------------------------------------------------------------
DISPATCHER = """
import json, pathlib
HERE = pathlib.Path(__file__).parent

print("mytools loaded")  # stdout at import: never mixed into verify's output

def live(tool, args):
    print("calling", tool)  # a chatty tool: its stdout goes to stderr
    with open(HERE / "calls.log", "a") as fh:
        fh.write(json.dumps({"tool": tool, "args": args}) + "\\n")
    if tool == "weather":
        return {"city": args["city"], "temp_c": 21, "observed_at": "2026-12-03T10:00:00Z"}
    if tool == "book":
        return {"booked": True}
    raise LookupError("no tool " + tool)

NOT_CALLABLE = {"a": 1}
"""


@pytest.fixture
def dispatcher(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "mytools.py").write_text(DISPATCHER)
    write_cassette(
        tmp_path / "trip.jsonl",
        entry(1, "weather", {"city": "Oslo"},
              response={"city": "Oslo", "temp_c": 19, "observed_at": "2024-05-01T08:00:00Z"}),
        entry(2, "book", {"city": "Oslo"}, response={"booked": True}),
        entry(3, "weather", {"city": "Rome"},
              response={"city": "Rome", "temp_c": 21, "observed_at": "2024-05-01T08:00:00Z"}),
    )  # fmt: skip
    (tmp_path / "cassette.toml").write_text('[verify]\nallow = ["weather"]\n')
    return folder


def test_dispatcher_text_with_the_config_allow_list(dispatcher: Path, tmp_path: Path) -> None:
    done = cli("verify", "trip.jsonl", "--dispatcher", "mytools:live", "--path", "tools",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "against the live dispatcher mytools:live" in done.stdout
    assert "seq 1  weather  stale  (1 path differs)" in done.stdout
    assert "seq 2  book  not re-issued" in done.stdout
    # Rome's temperature held; only the observation time moved: volatile metadata
    assert "seq 3  weather  fresh  (only volatile metadata differs" in done.stdout
    assert "next: cassette-tui diff trip.jsonl trip.live.jsonl" in done.stdout
    assert logged(dispatcher / "calls.log") == ["weather", "weather"]


def test_dispatcher_json_and_the_allow_option(dispatcher: Path, tmp_path: Path) -> None:
    done = cli("verify", "trip.jsonl", "--dispatcher", "mytools:live", "--path", "tools",
               "--allow", "book", "--json", "--no-write", cwd=tmp_path)  # fmt: skip
    doc = json.loads(done.stdout)  # the tool's prints are on stderr
    assert "calling weather" in done.stderr and "mytools loaded" in done.stderr
    assert doc["live"] == {"kind": "dispatcher", "target": "mytools:live"}
    assert [(e["status"], e["safe_by"]) for e in doc["entries"]] == [
        ("stale", "config"), ("fresh", "--allow"), ("fresh", "config")
    ]  # fmt: skip
    assert doc["entries"][0]["paths"] == ["$.temp_c"]
    assert doc["entries"][0]["metadata_paths"] == ["$.observed_at"]
    assert doc["allow"] == ["book", "weather"]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("mytools", "--dispatcher 'mytools': expected MODULE:FUNCTION"),
        ("nosuch:live", "--dispatcher 'nosuch:live': cannot import 'nosuch'"),
        ("mytools:gone", "--dispatcher 'mytools:gone': 'mytools' has no attribute 'gone'"),
        ("mytools:NOT_CALLABLE", "mytools.NOT_CALLABLE is a dict, not callable"),
    ],
)
def test_a_bad_dispatcher_is_named(dispatcher: Path, tmp_path: Path, spec: str, words: str) -> None:
    done = cli("verify", "trip.jsonl", "--dispatcher", spec, "--path", "tools", "--json",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert words in done.stderr and "Traceback" not in done.stderr
    assert json.loads(done.stdout) == {"error": json.loads(done.stdout)["error"], "file": None}
    assert logged(dispatcher / "calls.log") == []


def test_a_missing_cassette_and_bad_usage(tmp_path: Path) -> None:
    done = cli("verify", str(tmp_path / "nope.jsonl"), "--dispatcher", "m:f", "--json")
    assert done.returncode == 2
    assert "nope.jsonl" in done.stderr
    assert json.loads(done.stdout)["file"] == str(tmp_path / "nope.jsonl")
    both = cli("verify", "x.jsonl", "--dispatcher", "m:f", "--mcp", "srv")
    assert both.returncode == 2 and "one of them" in both.stderr
    neither = cli("verify", "x.jsonl")
    assert neither.returncode == 2 and "--mcp" in neither.stderr


def test_a_bad_verify_section_in_the_config_is_named(dispatcher: Path, tmp_path: Path) -> None:
    (tmp_path / "cassette.toml").write_text('[verify]\nallow = "weather"\n')
    done = cli("verify", "trip.jsonl", "--dispatcher", "mytools:live", "--path", "tools",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "cassette.toml: field 'verify.allow': expected a list of tool names" in done.stderr
    assert logged(dispatcher / "calls.log") == []


def test_an_empty_cassette_has_nothing_to_verify(dispatcher: Path, tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    done = cli("verify", "empty.jsonl", "--dispatcher", "mytools:live", "--path", "tools",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "nothing to verify: the cassette has no calls" in done.stdout
    assert not (tmp_path / "empty.live.jsonl").exists()


def test_json_masks_a_secret_in_the_recorded_failure(tmp_path: Path) -> None:
    """A stale entry whose recording failed with a token in its message: ``--json``
    masks it in ``recorded_error`` as it masks the live error and as the text does (it
    used to print the token whole)."""
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    (tmp_path / "okdisp.py").write_text("def live(tool, args):\n    return {'ok': True}\n")
    cassette = write_cassette(tmp_path / "run.jsonl", {
        "seq": 1, "tool": "lookup", "args": {"q": 1},
        "error": {"type": "PermissionError", "message": f"bad token {token}"},
    })  # fmt: skip
    done = cli("verify", str(cassette), "--dispatcher", "okdisp:live", "--path", str(tmp_path),
               "--allow", "lookup", "--json", "--no-write")  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["entries"][0]["recorded_error"].startswith("PermissionError: bad token «")
    assert token not in done.stdout
