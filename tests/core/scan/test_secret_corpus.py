"""Issue 26, measured: the secret scan's recall on a planted corpus of the common kinds in
every place they hide (free text in args and responses, base64, JSON held in a string,
URL-encoding, split between args and response, object keys, tool names), and what
``redact`` leaves (nothing the scan or the planted bytes show; the redacted cassette
loads and replays the real calls). False positives are measured on real recordings in
``test_secret_false_positives.py``."""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.replay.replayer import Replayer
from cassette_tui.core.scan._secret_detectors import looks_masked, scan_string, scan_text
from cassette_tui.core.scan.redact import Redactor, redact_job
from cassette_tui.core.scan.secrets import secret_findings
from support.factory import entry, write_cassette

_RNG = random.Random(26)
ALNUM = string.ascii_letters + string.digits


def _rand(n: int, chars: str = ALNUM) -> str:
    return "".join(_RNG.choice(chars) for _ in range(n))


def _b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


@dataclass(frozen=True)
class Kind:
    """A planted secret: its value, and how it is written in free text (``text``, which
    holds ``secret``); ``token``: a single token that can stand as a key or a tool name."""

    name: str
    secret: str
    text: str
    token: bool


def _kinds() -> list[Kind]:
    openai = "sk-" + _rand(48)
    proj = "sk-proj-" + _rand(74, ALNUM + "_-") + "T3BlbkFJ" + _rand(74, ALNUM + "_-")
    anthropic = "sk-ant-api03-" + _rand(93, ALNUM + "_-") + "AA"
    aws_id = "AKIA" + _rand(16, string.ascii_uppercase + string.digits)
    aws_secret = _rand(40, ALNUM + "/+")
    ghp = "ghp_" + _rand(36)
    pat = "github_pat_" + _rand(22) + "_" + _rand(59)
    slack = "xoxb-" + _rand(12, string.digits) + "-" + _rand(13, string.digits) + "-" + _rand(24)
    stripe = "sk_live_" + _rand(99)
    google = "AIza" + _rand(35, ALNUM + "_-")
    jwt = ".".join(
        [_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": _rand(12)}), _rand(43, ALNUM)]
    )
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(_rand(64, ALNUM + "+/") for _ in range(4))
        + "\n-----END RSA PRIVATE KEY-----"
    )
    url_pw = "Pw-" + _rand(14)
    bearer = _rand(32, ALNUM + "-._")
    basic = base64.b64encode(f"deploy:{_rand(16)}".encode()).decode()
    return [
        Kind("openai", openai, f"using key {openai} for the call", True),
        Kind("openai_proj", proj, f"OPENAI_API_KEY: {proj}", True),
        Kind("anthropic", anthropic, f"anthropic key {anthropic}", True),
        Kind("aws_key_id", aws_id, f"aws key id {aws_id} in us-east-1", True),
        Kind("aws_secret", aws_secret, f"export AWS_SECRET_ACCESS_KEY={aws_secret}", False),
        Kind("github", ghp, f"cloned with {ghp}", True),
        Kind("github_pat", pat, f"token {pat} expires soon", True),
        Kind("slack", slack, f"slack bot {slack} posted", True),
        Kind("stripe", stripe, f"charged with {stripe}", True),
        Kind("google", google, f"maps key={google}", True),
        Kind("jwt", jwt, f"session {jwt}", True),
        Kind("pem", pem, f"key file:\n{pem}\n", False),
        Kind("url_password", url_pw, f"postgres://admin:{url_pw}@db.internal:5432/app", False),
        Kind("bearer", bearer, f"Authorization: Bearer {bearer}", False),
        Kind("basic", basic, f"curl -H 'Authorization: Basic {basic}' https://api", False),
    ]


KINDS = _kinds()


@dataclass(frozen=True)
class Case:
    """One planted case: the cassette's records, and the planted forms (each must be gone
    after ``redact``)."""

    id: str
    records: list[dict[str, Any]]
    planted: list[str]


def _one(tool: str, args: Any, response: Any) -> list[dict[str, Any]]:
    return [entry(1, tool, args, response=response)]


def _forms() -> dict[str, Callable[[Kind], tuple[list[dict[str, Any]], list[str]] | None]]:
    def text_in_args(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        return _one("run_shell", {"cmd": k.text}, {"ok": True}), [k.secret]

    def text_in_response(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        return _one("read_file", {"path": "notes.md"}, {"text": k.text}), [k.secret]

    def in_base64(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        blob = base64.b64encode(k.text.encode()).decode()
        return _one("get_secret", {"name": "cfg"}, {"data": blob}), [blob]

    def in_base64_json(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        blob = base64.urlsafe_b64encode(json.dumps({"note": k.text}).encode()).decode()
        return _one("kv_get", {"key": "env"}, {"value": blob}), [blob]

    def in_json_string(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        inner = json.dumps({"config": {"note": k.text}})
        return _one("http_get", {"url": "/config"}, {"body": inner}), [k.secret]

    def url_encoded(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        q = urllib.parse.quote(k.text, safe="")
        encoded = urllib.parse.quote(k.secret, safe="")
        return _one("fetch", {"url": f"https://x.test/cb?state={q}"}, {"status": 200}), [encoded]

    def split(k: Kind) -> tuple[list[dict[str, Any]], list[str]]:
        # sent in the args of one call, echoed by another call's response as JSON text
        return (
            [
                entry(1, "set_env", {"line": k.text}, response={"ok": True}),
                entry(2, "get_env", {"all": True}, response={"out": json.dumps([k.text])}),
            ],
            [k.secret],
        )

    def as_args_key(k: Kind) -> tuple[list[dict[str, Any]], list[str]] | None:
        if not k.token:
            return None
        return _one("lookup", {"by": {k.secret: 1}}, {"ok": True}), [k.secret]

    def as_response_key(k: Kind) -> tuple[list[dict[str, Any]], list[str]] | None:
        if not k.token:
            return None
        return _one("list_keys", {"q": "all"}, {"keys": {k.secret: {"scope": "repo"}}}), [k.secret]

    def as_tool_name(k: Kind) -> tuple[list[dict[str, Any]], list[str]] | None:
        if not k.token:
            return None
        return _one(f"call_{k.secret}", {"q": "x"}, {"ok": True}), [k.secret]

    return {
        "text_in_args": text_in_args,
        "text_in_response": text_in_response,
        "base64": in_base64,
        "base64_json": in_base64_json,
        "json_in_string": in_json_string,
        "url_encoded": url_encoded,
        "split_args_response": split,
        "args_key": as_args_key,
        "response_key": as_response_key,
        "tool_name": as_tool_name,
    }


def _cases() -> list[Case]:
    out = []
    for form, make in _forms().items():
        for k in KINDS:
            made = make(k)
            if made is not None:
                out.append(Case(f"{k.name}-{form}", *made))
    return out


CASES = _cases()


def _outcome(case: Case, folder: Path) -> str | None:
    """``None`` when the case is found and fully redacted, else what went wrong."""
    src = write_cassette(folder / "planted.jsonl", *case.records)
    cassette = load(src)
    if not secret_findings(cassette):
        return "not found"
    out = folder / "redacted.jsonl"
    run_job(redact_job(cassette, out))
    raw = out.read_text(encoding="utf-8")
    for planted in case.planted:
        if planted in raw or json.dumps(planted)[1:-1] in raw:
            return "left in the redacted file"
    redacted = load(out)
    left = secret_findings(redacted)
    if left:
        return f"check still finds {[f.message for f in left]}"
    replayer = Replayer(redacted, redactor=Redactor())
    for record in case.records:
        replayer.serve(record["tool"], record["args"])  # a miss raises CassetteMiss
    return None


def test_recall_is_complete_on_the_planted_corpus(tmp_path: Path) -> None:
    """Every case is found, ``redact`` leaves none of the planted bytes and no finding,
    and the redacted cassette replays the real calls (all kinds x all places)."""
    failures: dict[str, str] = {}
    for n, case in enumerate(CASES):
        folder = tmp_path / str(n)
        folder.mkdir()
        problem = _outcome(case, folder)
        if problem is not None:
            failures[case.id] = problem
    recall = 1 - len(failures) / len(CASES)
    print(f"recall {len(CASES) - len(failures)}/{len(CASES)} = {recall:.0%}")
    assert len(CASES) >= 130
    assert failures == {}, sorted(failures.items())


def test_the_corpus_covers_every_kind_in_every_place() -> None:
    places = {c.id.split("-", 1)[1] for c in CASES}
    assert places == set(_forms())
    assert {c.id.split("-", 1)[0] for c in CASES} == {k.name for k in KINDS}


# -- the mask heuristic -------------------------------------------------------------------


def test_random_tokens_holding_xxx_are_not_taken_for_masks() -> None:
    """60,000 random ``ghp_`` tokens (a few hundred hold ``xxx`` in some case): every one
    is found (it was 76 left over when any ``xxx`` made a mask)."""
    rng = random.Random(6)
    chars = ALNUM + "xX" * 20  # many more x's than chance: more tokens hold "xxx"
    tokens = ["ghp_" + "".join(rng.choice(chars) for _ in range(36)) for _ in range(60_000)]
    with_xxx = [t for t in tokens if "xxx" in t.lower()]
    assert len(with_xxx) > 1000
    missed = [t for t in tokens if not any(s == t for s, _ in scan_text(f"tok {t} end"))]
    assert missed == []


@pytest.mark.parametrize(
    "value", ["hunter2-XXX-rocks", "xXx_pa55word_xXx_long", "correct-horse-***-battery-staple"]
)
def test_a_password_holding_a_mask_run_is_a_finding(value: str) -> None:
    assert scan_string(value, "password") == [(value, "key_name", None)]


@pytest.mark.parametrize(
    "value",
    [
        "xxx",
        "XXXXXXXXXXXXXXXXXXXX",
        "XXXX-XXXX-XXXX",
        "****",
        "sk-****abcd",
        "****1234",
        "•••••••",
        "<redacted:github_token:1234abcd>",
        "[REDACTED]",
        "AUTHORIZATION-XXX",
        "X-AMZ-SECURITY-TOKEN-XXX",
        "{{ api_key }}",
        "${API_KEY}",
    ],
)
def test_real_mask_shapes_are_masks(value: str) -> None:
    assert looks_masked(value)
    assert scan_string(value, "password") == []
