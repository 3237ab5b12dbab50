"""Redaction (core/scan/redact.py): stable placeholders, recomputed digests, and a redacted
cassette that still replays the agent's real calls (replay and record hooks)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import CassetteMiss, load, wrap_dispatcher
from cassette_tui.core.format.digest import digest
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.replay.replayer import Replayer
from cassette_tui.core.scan.masking import hash8
from cassette_tui.core.scan.redact import Redactor, placeholder, redact_job
from cassette_tui.core.scan.redact_config import SecretConfig
from cassette_tui.core.scan.secrets import scan_entry, scan_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.factory import entry, make_cassette, write_cassette

TOKEN = "sk-live-EXAMPLE0000000000000000"
GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
PLACEHOLDER = re.compile(r"<redacted:[a-z0-9_]+:[0-9a-f]{8}>")


def redact_file(src: Path, out: Path, config: SecretConfig | None = None) -> Path:
    run_job(redact_job(load(src), out, config=config))
    return out


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_placeholder_is_stable_and_names_kind_and_hash() -> None:
    assert placeholder(GITHUB) == f"<redacted:github_token:{hash8(GITHUB)}>"
    assert placeholder(TOKEN) == placeholder(TOKEN) == f"<redacted:secret:{hash8(TOKEN)}>"
    assert placeholder(TOKEN) != placeholder(TOKEN + "1")


def test_redact_file_same_secret_same_placeholder_and_digests_recomputed(tmp_path: Path) -> None:
    src = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "login", {"user": "ann"}, response={"access_token": TOKEN}),
        entry(
            2,
            "call_api",
            {"headers": {"Authorization": f"Bearer {TOKEN}"}, "u": "/me"},
            args_digest="sha256:0000000000000000",
            response={"echo": f"got {TOKEN}"},
        ),
        entry(3, "search_docs", {"q": "retry budget"}, response={"hits": 3}),
    )
    out = redact_file(src, tmp_path / "out.jsonl")
    raw = out.read_bytes()
    assert TOKEN.encode() not in raw
    rows = records(out)
    ph = placeholder(TOKEN)
    assert rows[0]["response"]["access_token"] == ph
    assert rows[1]["args"]["headers"]["Authorization"] == f"Bearer {ph}"
    assert rows[1]["response"]["echo"] == f"got {ph}"
    for row in rows:
        assert row["args_digest"] == digest(row["args"])
    assert rows[2] == {**records(src)[2], "args_digest": digest({"q": "retry budget"})}
    again = redact_file(out, tmp_path / "again.jsonl")
    assert again.read_bytes() == raw  # idempotent


def test_redact_paths_from_config(tmp_path: Path) -> None:
    src = write_cassette(tmp_path / "c.jsonl", entry(1, "crm", {"user": {"email": "ann@x.io"}}))
    out = redact_file(src, tmp_path / "o.jsonl", SecretConfig(paths=("$.args.user.email",)))
    assert records(out)[0]["args"]["user"]["email"] == placeholder("ann@x.io")


def test_redact_never_overwrites_without_a_flag_and_leaves_nothing_half_written(
    tmp_path: Path,
) -> None:
    src = write_cassette(tmp_path / "c.jsonl", entry(1, "x", {"api_key": "k-123456"}))
    out = tmp_path / "o.jsonl"
    out.write_text("keep me\n")
    with pytest.raises(FileExistsError):
        run_job(redact_job(load(src), out))
    assert out.read_text() == "keep me\n"
    run_job(redact_job(load(src), out, overwrite=True))
    assert "k-123456" not in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "o.jsonl"]


def test_replay_of_a_redacted_cassette_matches_the_real_call(tmp_path: Path) -> None:
    """The trap of other record/replay tools: the stored key and the stored request
    disagree after filtering. Here the agent's real call (real token) hits."""
    src = write_cassette(
        tmp_path / "rec.jsonl",
        entry(
            1,
            "call_api",
            {
                "url": "https://api.example.com/v1/me",
                "headers": {"Authorization": f"Bearer {TOKEN}"},
            },
            response={"user": "demo", "access_token": GITHUB},
        ),
        entry(2, "search_docs", {"q": "retry budget"}, response={"hits": 3}),
    )
    red = redact_file(src, tmp_path / "red.jsonl")
    assert TOKEN.encode() not in red.read_bytes()

    def live(tool: str, args: Any) -> Any:
        raise AssertionError("replay must never call the live tool")

    dispatch = wrap_dispatcher(live, mode="replay", path=red)
    real_args = {
        "url": "https://api.example.com/v1/me",
        "headers": {"Authorization": f"Bearer {TOKEN}"},
    }
    got = dispatch("call_api", real_args)
    assert got == {"user": "demo", "access_token": placeholder(GITHUB)}
    assert dispatch("search_docs", {"q": "retry budget"}) == {"hits": 3}
    calls = dispatch.report()["calls"]
    assert [(c["seq"], c["outcome"]) for c in calls] == [(1, "hit"), (2, "hit")]


def test_a_miss_report_does_not_hold_the_live_secret(tmp_path: Path) -> None:
    src = write_cassette(tmp_path / "c.jsonl", entry(1, "search_docs", {"q": "x"}))
    replayer = Replayer(load(src))
    with pytest.raises(CassetteMiss, match="call_api"):
        replayer("call_api", {"headers": {"Authorization": f"Bearer {TOKEN}"}})
    assert TOKEN not in json.dumps(replayer.report())


def test_record_with_redact_true_never_writes_the_secret(tmp_path: Path) -> None:
    config = tmp_path / "cassette.toml"
    config.write_text("redact = true\n")
    path = tmp_path / "rec.jsonl"

    def live(tool: str, args: Any) -> Any:
        if tool == "fail":
            raise PermissionError(f"token {GITHUB} was revoked")
        return {"access_token": GITHUB, "n": 1}

    dispatch = wrap_dispatcher(live, mode="record", path=path, config=config)
    assert dispatch("login", {"password": "hunter2-secret", "user": "ann"})["n"] == 1
    with pytest.raises(PermissionError):
        dispatch("fail", {"q": 1})
    dispatch.close()
    raw = path.read_bytes()
    for secret in (GITHUB, "hunter2-secret"):
        assert secret.encode() not in raw
    rows = records(path)
    assert rows[0]["args"]["password"] == placeholder("hunter2-secret")
    assert rows[0]["args_digest"] == digest(rows[0]["args"])  # stored key = stored request
    assert placeholder(GITHUB) in rows[1]["error"]["message"]

    # and the agent's real calls replay from it
    replay = wrap_dispatcher(live, mode="replay", path=path, config=config)
    assert replay("login", {"password": "hunter2-secret", "user": "ann"}) == {
        "access_token": placeholder(GITHUB),
        "n": 1,
    }


def test_record_without_redaction_writes_the_call_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    config = tmp_path / "cassette.toml"
    config.write_text("")
    dispatch = wrap_dispatcher(lambda t, a: {"ok": 1}, mode="record", path=path, config=config)
    dispatch("login", {"password": "hunter2-secret"})
    dispatch.close()
    assert b"hunter2-secret" in path.read_bytes()


# -- properties ------------------------------------------------------------------------------
SECRETS = [TOKEN, GITHUB, "hunter2-pw", "AKIAIOSFODNN7EXAMPLE"]
#: each secret where the scan finds it in free text
IN_TEXT = [f"Bearer {TOKEN}", GITHUB, "https://bob:hunter2-pw@db.example", SECRETS[3]]
plain_text = st.text(alphabet="abcdefghij klmnop-_/.:", max_size=30)
secret_text = st.builds(
    lambda pre, s, post: f"{pre} {s} {post}", plain_text, st.sampled_from(IN_TEXT), plain_text
)
keys = st.sampled_from(["q", "path", "note", "api_key", "Authorization", "password", "items"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | plain_text | secret_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_redaction_is_idempotent(value: Any) -> None:
    redactor = Redactor()
    once = redactor.redact_value(value, ("args",))[0]
    twice, hits = redactor.redact_value(once, ("args",))
    assert twice == once and hits == []
    assert not any(s in json.dumps(once) for s in SECRETS)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_redaction_never_changes_a_value_without_a_secret(value: Any) -> None:
    if scan_value(value, ("args",)):
        return
    redacted = Redactor().redact_value(value, ("args",))[0]
    assert redacted is value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), json_values), min_size=1, max_size=6))
def test_redacting_then_replaying_equals_replaying(calls: list[tuple[str, Any]]) -> None:
    """Every live call is served by the same seq from the redacted cassette as from the
    original one (the responses differ only by their placeholders)."""
    cassette = make_cassette((tool, args, {"n": i}) for i, (tool, args) in enumerate(calls))
    redactor = Redactor()
    redacted = make_cassette(
        (e.tool, redactor.redact_entry(e)[0].args, e.response) for e in cassette
    )
    plain, red = Replayer(cassette, repeat="last"), Replayer(redacted, repeat="last")
    for tool, args in calls:
        assert plain(tool, args) == red(tool, args)
    assert [c["seq"] for c in plain.report()["calls"]] == [c["seq"] for c in red.report()["calls"]]


def test_scan_entry_after_redact_entry_finds_nothing() -> None:
    e = Entry(
        1, "x", {"api_key": TOKEN}, {"t": GITHUB}, extra={"request_headers": {"Cookie": "s=1"}}
    )
    new, count = Redactor().redact_entry(e)
    assert count == 3 and scan_entry(new) == []
    assert PLACEHOLDER.fullmatch(new.args["api_key"])


def test_secrets_in_keys_and_tool_names_are_redacted_and_still_replay(tmp_path: Path) -> None:
    """Issue 26: a token used as a tool name, an args key or a response key is found,
    ``redact`` replaces it there (keys renamed in place, digests recomputed), ``check``
    then finds nothing, and the agent's real calls still hit."""
    tool = f"proxy.{GITHUB}"
    args = {"grants": {GITHUB: ["repo"], "note": "x"}, "q": "list"}
    src = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, tool, args, response={"tokens": {GITHUB: {"scope": "repo"}}}),
        entry(2, "search_docs", {"q": "x"}, response={"seen": {f"key {GITHUB}": 1}}),
    )
    hits = scan_entry(load(src)[0])
    assert {(h.place, h.path) for h in hits} == {
        ("tool", "$.tool"),
        ("key", "$.args.grants"),
        ("key", "$.response.tokens"),
    }
    out = redact_file(src, tmp_path / "out.jsonl")
    raw = out.read_text()
    assert GITHUB not in raw
    ph = placeholder(GITHUB)
    recs = records(out)
    assert recs[0]["tool"] == f"proxy.{ph}" == Redactor().redact_tool(tool)
    assert list(recs[0]["args"]["grants"]) == [ph, "note"]  # order kept
    assert recs[0]["response"] == {"tokens": {ph: {"scope": "repo"}}}
    assert recs[1]["response"] == {"seen": {f"key {ph}": 1}}
    redacted = load(out)
    assert recs[0]["args_digest"] == redacted.digest(0)  # recomputed over the new args
    assert scan_entry(redacted[0]) == [] and scan_entry(redacted[1]) == []
    replayer = Replayer(redacted)
    assert replayer(tool, args) == {"tokens": {ph: {"scope": "repo"}}}
    assert replayer("search_docs", {"q": "x"}) == {"seen": {f"key {ph}": 1}}


def test_a_finding_in_a_key_never_shows_the_key(tmp_path: Path) -> None:
    from cassette_tui.core.scan.secrets import secret_findings

    src = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "t", {GITHUB: {"password": "hunter2-XXX-rocks"}}),
    )
    findings = secret_findings(load(src))
    assert len(findings) == 2
    for f in findings:
        assert GITHUB not in f.message and GITHUB not in f.path
        assert "hunter2" not in f.message
    assert {f.path for f in findings} == {"$.args", f'$.args["{placeholder(GITHUB)}"].password'}


def test_a_miss_on_a_redacted_cassette_blames_only_the_path_that_differs(tmp_path: Path) -> None:
    """The live call carries the real token, the cassette its placeholder: the miss (a
    changed page) names ``$.page`` alone, not the token that matches once redacted."""
    src = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "call_api", {"headers": {"Authorization": f"Bearer {GITHUB}"}, "page": 1}),
    )
    out = redact_file(src, tmp_path / "out.jsonl")
    replayer = Replayer(load(out))
    live = {"headers": {"Authorization": f"Bearer {GITHUB}"}, "page": 2}
    with pytest.raises(CassetteMiss) as caught:
        replayer("call_api", live)
    (cand,) = caught.value.nearest
    assert [d["path"] for d in cand["differences"]] == ["$.page"]
    (miss,) = replayer.report()["misses"]
    assert [d["path"] for d in miss["nearest"][0]["differences"]] == ["$.page"]
