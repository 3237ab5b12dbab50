"""The secret scan's line prefilter (``_secret_prefilter.line_secret_free``) never hides a secret:
wherever it calls a line free, the full scan of the line's entry finds nothing, so the
findings with and without it are the same (hypothesis on generated lines, the real
cassettes in ../shared/real, the samples)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format.cassette import entry_from_record, load
from cassette_tui.core.format.errors import CassetteError
from cassette_tui.core.format.jsontext import parse_json
from cassette_tui.core.scan._secret_prefilter import _prefilter, line_secret_free
from cassette_tui.core.scan.secrets import entry_secret_findings, scan_entry
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9x0c1Z2\n-----END RSA PRIVATE KEY-----"
ENTROPY = "Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW"

#: pieces of text: what each detector looks for, near misses, and the characters where a
#: line and its texts differ (escapes, quotes, the letters case-folding treats apart)
FRAGMENTS = [
    GITHUB,
    "AKIAIOSFODNN7EXAMPLE",
    "AKIA" + "ABCD" * 4,
    "ghp_" + "ab" * 18,
    "glpat-" + "a" * 20,
    "SG." + "a" * 22 + "." + "b" * 43,
    "sq0csp-" + "a" * 43,
    "pypi-AgEIcHlwaS5vcmc" + "a" * 70,
    "AccountKey=" + "a" * 88,
    "a" * 32 + "-us1",
    "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
    "abc12345",
    "aws token is '" + "A" * 40 + "'",
    "token=" + "\u0131" * 44,
    "key: " + "\u0130" * 24,
    "pass: " + "\u017f" * 24,
    JWT,
    "eyJ1.b2c",
    PEM,
    ENTROPY,
    "7f3a9c2e1b4d5f60aa",
    "18385d74c7b86a3a",
    "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11",
    "chatcmpl-CugUcrVnIGFI01Ty76IqBP4iwcdk1",
    "Bearer abc.DEF-123_xyz",
    "bEaReR qwerty12345",
    "https://bob:hunter2@db.example.com/x",
    "?access_token=q1w2e3r4&page=2",
    "&api_key=zz9",
    "password = 'hunter2xyz'",
    'secret: "s3cr3t-value"',
    "pwd=`abc12345`",
    "aws_secret_access_key = 'wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12'",
    "cloudant_password: " + "a1" * 32,
    "ibm_cloud_iam_key = " + "A1b2" * 11,
    "xoxb-123-abc",
    "AKCp8abcdefghij",
    "APA12345678",
    "sk_live_" + "a1B2" * 6,
    "123456789:" + "A" * 35,
    "AC" + "a1" * 16,
    "hooks.slack.com/services/T1/B2/x3",
    "//registry/:_authToken=npm_abc",
    "<redacted:secret:1234abcd>",
    "XXXX",
    "{{ api_key }}",
    "retry budget backoff",
    "token bucket secret vault passage key",
    "method/incident/vector-secret.toml",
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpL",
    "İ",
    "ı",
    "ſ",
    "\u212a",
    "é",
    "🚀",
    "\\",
    "\\" + GITHUB,
    "C:\\Users\\bob\\api_key\\" + ENTROPY,
    'grep "token\\(" \\"pass\\"',
    '"',
    "'",
    "`",
    "\n",
    "\t",
    "\x00",
    "\x01",
    "{",
    "[",
    # issue 26's kinds: provider formats the library lacks, Basic credentials in text,
    # percent-encoded and base64-held secrets, mask shapes, digests, path variables
    "sk-proj-" + "aB3_dE-9" * 6,
    "sk-ant-api03-" + "xY9" * 10,
    "sk-" + "Ab1" * 12,
    "task-" + "Ab1" * 12,
    "github_pat_" + "a1B2" * 6,
    "ghp_" + "a1B2" * 10,
    "AIza" + "Sy_D-a1B2c" * 4,
    "sk_live_" + "a1B2" * 8,
    "xoxp-" + "a1-b2" * 3,
    "Basic dXNlcjpodW50ZXIy",
    "basic\tYTpi",
    "BASIC dGVzdA==",
    "basic usage",
    "sk-proj%2D" + "aB3dE9" * 5,
    "%22sk-proj-" + "aB3dE9" * 5 + "%22",
    "https%3A%2F%2Fbob%3Ahunter2%40db.example.com",
    "%ZZ%e9%",
    "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfYUJjRGVGZ0hpSmtMbU5vUHFSc1R1VndYeVowMTIzNDU2Nzg5",
    "eyJhcGlfa2V5IjogInNrLXByb2otQWIzZEVmOWhJaktsTW5PcFFyIn0=",
    "dG9rZW4gZ2hwX2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCM2FCMw==",
    "hunter2-XXX-rocks",
    "AUTHORIZATION-XXX",
    "sk-****abcd",
    "export API_KEY=zz9",
    "--password=hunter2",
    "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234",
    "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
    "3F2A9C2E1B4D5F60AA3F2A9C2E1B4D5F60AA1234",
    "/home/ada/projects/cassette-tui/.venv/lib/python3.11/site-packages",
    # an args digest's form with random hex: skipped by its key only (``_DIGEST_HEADS``)
    "sha256:9f8e7d6c5b4a3f2e",
    "sha256:1ff6289664b0033a",
]
_KNOWN = {"seq", "tool", "args", "args_digest", "response", "error"}
SEPARATORS = ["", " ", "\n", "=", ":", "/", "&", "?", '"', "'", ",", "-", "_", "@"]

texts = st.lists(
    st.sampled_from(FRAGMENTS) | st.text(max_size=12),
    max_size=5,
).flatmap(
    lambda parts: st.lists(
        st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)
    ).map(lambda seps: "".join(s + p for s, p in zip(seps, parts, strict=True)))
)
keys = st.sampled_from(
    [
        "q",
        "id",
        "request_id",
        "x-req-id",
        "etag",
        "token",
        "api_key",
        "apik-ey",
        "apike_y",
        ": token",
        "max_tokens",
        "Authorization",
        "password",
        "headers",
        "body",
        "note",
        "aws",
        "_binary",
        "",
        "PWD",
        "OLDPWD",
        "HOME",
        "XDG_CONFIG_DIR",
        "pwd",
        "thought_signature",
        "args_digest",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "x-sk-ant-api03-xY9xY9xY9xY9xY9xY9xY9",
        "Basic dXNlcjpodW50ZXIy",
        "Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW",
    ]
) | st.text(max_size=6)
tools = st.sampled_from(["t", GITHUB, "call_" + GITHUB, "mcp__git__log", ENTROPY]) | texts
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(keys, inner, max_size=3)
        # JSON held in a string, itself escaped once more in the line
        | st.builds(lambda v, a: json.dumps(v, ensure_ascii=a), inner, st.booleans())
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, key=keys, nested=st.booleans(), tool=tools)
def test_one_text_called_free_holds_no_secret(text: str, key: str, nested: bool, tool: str) -> None:
    value: Any = {key: text}
    if nested:
        value = {"outer": [value, text], text: key}
    _same(_line({"seq": 1, "tool": tool, "args": {"q": 1}, "response": value}, False, True))
    _same(_line({"seq": 1, "tool": "t", "args": value, "error": {"type": "E"}}, True, False))


def _line(record: dict[str, Any], ascii_only: bool, compact: bool) -> bytes:
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(record, ensure_ascii=ascii_only, separators=separators)
    return text.encode("utf-8", "surrogatepass")


def _same(raw: bytes) -> None:
    try:
        record = parse_json(raw)
    except ValueError:
        return  # not a line the loader accepts (a repeated key, a lone surrogate)
    entry = entry_from_record(record)
    if line_secret_free(raw):
        assert scan_entry(entry) == [], raw
    assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    args=values,
    response=values,
    extra=st.dictionaries(keys.filter(lambda k: k not in _KNOWN), values, max_size=2),
    digest=st.none()
    | st.sampled_from(["sha256:1ff6289664b0033a", "sha256:9f8e7d6c5b4a3f2e"])
    | texts,
    ascii_only=st.booleans(),
    compact=st.booleans(),
    tool=tools,
)
@example(
    args={"q": "x"},
    response={"h": {"x-req-id": "18385d74c7b86a3a", "k": [": token"]}},
    extra={},
    digest="sha256:1ff6289664b0033a",
    ascii_only=False,
    compact=True,
    tool="t",
)
def test_a_line_called_free_holds_no_secret(
    args: Any,
    response: Any,
    extra: dict[str, Any],
    digest: Any,
    ascii_only: bool,
    compact: bool,
    tool: str,
) -> None:
    record: dict[str, Any] = {"seq": 1, "tool": tool, "args": args, "response": response}
    record.update(extra)
    if digest is not None:
        record["args_digest"] = digest
    _same(_line(record, ascii_only, compact))


def test_the_prefilter_is_built() -> None:
    # without it every line is a maybe: correct, but check is slow again
    assert _prefilter() is not None, "google-re2 missing: pip install -e '.[test,dev]'"


@pytest.mark.parametrize(
    ("value", "free"),
    [
        ({"path": "docs/retry-budget.md", "snippet": "the retry budget of the token bucket"}, True),
        ({"headers": {"x-req-id": "18385d74c7b86a3a"}, "n": 12345678901234567890}, True),
        ({"text": 'line one\nline "two"\t\u00e9'}, True),
        ({"headers": {"Authorization": "Basic Ym9iOmh1bnRlcjI="}}, False),
        ({"note": f"use {GITHUB}"}, False),
        ({"body": json.dumps({"auth": {"api_key": "k-12345678"}})}, False),
        ({"blob": ENTROPY}, False),
        ({"url": "https://bob:hunter2@db.example.com/x"}, False),
    ],
)
def test_common_lines_are_free_and_secrets_are_not(value: Any, free: bool) -> None:
    record = {"seq": 1, "tool": "t", "args": {"q": "x"}, "response": value}
    raw = _line(record, False, True)
    assert line_secret_free(raw) is free
    _same(raw)


def _cassettes(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def _check_file(path: Path) -> int:
    try:
        cassette = load(path, lenient=True)
    except (CassetteError, ValueError, OSError):
        return 0  # a file the loader refuses (the hostile cases) has no entries to scan
    checked = 0
    try:
        for _i, entry, raw in cassette.entries_read():
            assert raw is not None
            assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry), (
                path,
                entry.seq,
            )
            checked += 1
    except CassetteError:
        pass  # a bad response further on: the lines before it were compared
    return checked


def test_the_real_cassettes_give_the_same_findings(real: Path) -> None:
    files = _cassettes(real)
    if not files:
        pytest.skip(f"no *.jsonl cassette under {real}")
    assert sum(_check_file(p) for p in files) > 0


def test_the_sample_cassettes_give_the_same_findings(samples: Path) -> None:
    assert sum(_check_file(p) for p in _cassettes(samples)) > 0


def test_a_secret_escaped_inside_json_held_in_a_text_is_not_hidden() -> None:
    """JSON held in a text is decoded once more by the scan: a token written there with an
    escape (``\\u0061``) is whole only after that second decoding, so a line holding it and
    an escaped backslash is a maybe, never free."""
    token = "ghp_" + "ab" * 18  # a GitHub token; its runs are too plain for the entropy test
    inner = '{"k": "' + token[:6] + "\\u0061" + token[7:] + '", "re": "a\\\\(b"}'
    assert json.loads(inner)["k"] == token
    raw = _line({"seq": 1, "tool": "t", "args": {"q": 1}, "response": {"text": inner}}, True, True)
    assert b"\\\\\\\\" in raw  # the escaped backslash sends the line down the exact path
    assert scan_entry(entry_from_record(parse_json(raw)))
    assert not line_secret_free(raw)
    _same(raw)


def _unescaped_text(text: str) -> str:
    """``text`` without what JSON writes escaped (a quote, a backslash, a control, a lone
    surrogate): a line of such texts holds no backslash."""
    return "".join(c for c in text if c not in '"\\' and c >= " " and not "\ud800" <= c <= "\udfff")


plain_texts = texts.map(_unescaped_text)
plain_keys = keys.map(_unescaped_text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=plain_texts,
    key=plain_keys,
    nested=st.booleans(),
    digest=st.sampled_from(["sha256:1ff6289664b0033a", "sha256:9f8e7d6c5b4a3f2e"]),
    compact=st.booleans(),
)
@example(text="hello", key="token", nested=False, digest="sha256:1ff6289664b0033a", compact=True)
@example(text="x", key="a", nested=True, digest="sha256:9f8e7d6c5b4a3f2e", compact=True)
def test_a_line_without_a_backslash_is_read_as_it_is_and_hides_nothing(
    text: str, key: str, nested: bool, digest: str, compact: bool
) -> None:
    """A line with no backslash is not rebuilt: its own ``"`` delimit its texts for RE2's
    set, the key-name test and the runs' test (``lines_secret_free``). Wherever it is
    called free, the full scan finds nothing (the lines here all take that path); a
    value in an args digest's form is skipped only as a top-level or nested
    ``args_digest``."""
    value: Any = {key: text}
    if nested:
        value = {"outer": [value, text], text: {"args_digest": digest, "d": digest}}
    record = {"seq": 1, "tool": "t", "args": {"q": 1}, "args_digest": digest, "response": value}
    raw = _line(record, False, compact)
    assert b"\\" not in raw
    _same(raw)
