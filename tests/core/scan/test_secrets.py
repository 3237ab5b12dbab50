"""The secret scan (core/scan/secrets.py): what it finds, where, and that it never shows a value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.keys.normalize import NormalizationConfigError
from cassette_tui.core.scan._secret_detectors import is_secret_key, scan_text
from cassette_tui.core.scan.masking import mask
from cassette_tui.core.scan.redact_config import SecretConfig, load_secret_config
from cassette_tui.core.scan.secrets import (
    check_rows,
    hit_finding,
    scan_entry,
    scan_value,
    secret_findings,
)
from support.factory import entry, write_cassette

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9x0c1Z2\nq8fJ3kL0p\n"
    "-----END RSA PRIVATE KEY-----"
)
ENTROPY = "Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW"


def kinds(text: str) -> dict[str, str]:
    return {secret: kind for secret, kind in scan_text(text)}


def test_provider_formats_come_from_detect_secrets() -> None:
    found = kinds(f"token {GITHUB} and key {AWS} and {JWT} end")
    assert found[GITHUB] == "github_token"
    assert found[AWS] == "aws_access_key"
    assert found[JWT] == "json_web_token"  # the whole token, signature included


def test_private_key_is_the_whole_pem_block() -> None:
    found = kinds("config:\n" + PEM + "\nafter")
    assert found == {PEM: "private_key"}


def test_password_in_url_bearer_and_query_parameters() -> None:
    found = kinds("GET https://bob:hunter2@db.example.com/x?access_token=q1w2e3r4&page=2")
    assert found["hunter2"] == "basic_auth_credentials"
    assert found["q1w2e3r4"] == "key_name"
    assert "2" not in found
    assert kinds("Authorization: Bearer abc.DEF-123_xyz")["abc.DEF-123_xyz"] == "bearer_token"


def test_high_entropy_strings_but_not_ids_uuids_or_prose() -> None:
    assert kinds(f"value {ENTROPY} here")[ENTROPY] == "high_entropy_base64"
    assert kinds("sum 7f3a9c2e1b4d5f60aa")["7f3a9c2e1b4d5f60aa"] == "high_entropy_hex"
    assert scan_text('{"id": "chatcmpl-CugUcrVnIGFI01Ty76IqBP4iwcdk1"}') == ()
    assert scan_text("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11") == ()
    assert scan_text("retry budget backoff jitter idempotent throughput " * 50) == ()


@pytest.mark.parametrize(
    "key",
    [
        "Authorization",
        "api_key",
        "x-api-key",
        "apiKey",
        "access_token",
        "refreshToken",
        "password",
        "db_passwd",
        "client_secret",
        "Cookie",
        "Set-Cookie",
        "secret_key",
    ],
)
def test_key_name_rules_match(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "token_type", "total_tokens", "keyword", "secretary", "q", "cookies_ok"]
)
def test_key_name_rules_do_not_match(key: str) -> None:
    assert not is_secret_key(key)


def test_scan_entry_paths_at_any_depth_in_json_text_and_headers() -> None:
    deep: dict = {"leaf": {"password": "pa55word!"}}
    for _ in range(300):
        deep = {"d": deep}
    e = Entry(
        seq=4,
        tool="http",
        args={"body": json.dumps({"auth": {"api_key": "k-12345678"}}), "deep": deep},
        response={"items": [{"note": f"use {GITHUB}"}]},
        extra={"request_headers": {"Authorization": ["Bearer sk-live-EXAMPLE0000000000000000"]}},
    )
    hits = {(h.path, h.secret): h for h in scan_entry(e)}
    body = hits[("$.args.body", "k-12345678")]
    assert body.detector == "key_name" and body.inner == ("auth", "api_key")
    assert ("$.args.deep" + ".d" * 300 + ".leaf.password", "pa55word!") in hits
    assert hits[("$.response.items[0].note", GITHUB)].detector == "github_token"
    header = hits[("$.request_headers.Authorization[0]", "sk-live-EXAMPLE0000000000000000")]
    assert header.detector == "bearer_token"


def test_masked_values_placeholders_numbers_and_envelopes_are_not_secrets() -> None:
    value = {
        "authorization": ["XXXX-XXXX"],
        "api_key": "<redacted:secret:1234abcd>",
        "token": "Bearer <redacted:github_token:1234abcd>",
        "password": "",
        "max_tokens": 4096,
        "secret": True,
        "blob": {"_binary": True, "encoding": "base64", "data": ENTROPY * 3},
        "tmpl": "{{ api_key }}",
    }
    assert scan_value(value, ("args",)) == []


def test_mask_keeps_at_most_four_characters_and_a_quarter() -> None:
    assert mask(GITHUB) == "ghp_…(40 chars)"
    assert mask("hunter2") == "h…(7 chars)"
    assert mask("abc") == "…(3 chars)"
    for secret in (GITHUB, "hunter2", "x" * 9, PEM):
        shown = mask(secret).split("…")[0]
        assert len(shown) <= 4 and len(shown) <= len(secret) // 4


def test_findings_never_hold_the_value(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "call_api", {"headers": {"Authorization": f"token {GITHUB}"}}),
        entry(2, "read_file", {"path": "k.pem"}, response={"text": PEM}),
    )
    findings = secret_findings(load(path))
    assert [(f.seq, f.path, f.kind) for f in findings] == [
        (1, "$.args.headers.Authorization", "secret"),
        (2, "$.response.text", "secret"),
    ]
    text = json.dumps(check_rows(findings)) + " ".join(f.message for f in findings)
    assert GITHUB not in text and GITHUB[4:12] not in text
    assert "MIIEowIBAAKCAQEA" not in text
    assert check_rows(findings)[0]["secret"]["masked"] == mask(GITHUB)


def test_allow_by_path_and_by_hash(tmp_path: Path) -> None:
    value = {"sig": ENTROPY, "note": f"use {GITHUB}"}
    (_, hit_note) = scan_value(value, ("response",))
    by_path = SecretConfig(allow=["$.response.sig"])
    assert [h.path for h in scan_value(value, ("response",), by_path)] == ["$.response.note"]
    by_hash = SecretConfig(allow_hashes=(hit_note.hash8,))
    assert [h.path for h in scan_value(value, ("response",), by_hash)] == ["$.response.sig"]
    anywhere = SecretConfig(allow=["**.sig", "**.note"])
    assert scan_value(value, ("response",), anywhere) == []


def test_redact_paths_are_reported_until_redacted() -> None:
    config = SecretConfig(paths=["$.args.user.email"])
    hits = scan_value({"user": {"email": "ann@example.com"}}, ("args",), config)
    assert [(h.path, h.detector) for h in hits] == [("$.args.user.email", "redact_path")]


def test_config_from_pyproject_and_cassette_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\nrecord = true\npaths = ["$.args.email"]\n'
        'allow = ["**.thought_signature"]\nallow_hashes = ["sha256:4BB6405A"]\n'
    )
    config = load_secret_config(root=tmp_path)
    assert config.record and config.paths == ("$.args.email",)
    assert config.allow_hashes == ("4bb6405a",)
    short = tmp_path / "cassette.toml"
    short.write_text("redact = true\n")
    assert load_secret_config(short).record is True
    assert load_secret_config(root=tmp_path / "nowhere-else").record in (True, False)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[redact]\nallow_hashes = ["xyz"]\n', "redact.allow_hashes[0]"),
        ('[redact]\npaths = ["$.a..b"]\n', "redact.paths[0]"),
        ("[redact]\nrecrd = true\n", "redact.recrd"),
        ('[redact]\nrecord = "yes"\n', "redact.record"),
    ],
)
def test_bad_config_names_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "cassette.toml"
    path.write_text(text)
    with pytest.raises(NormalizationConfigError) as info:
        load_secret_config(path)
    assert info.value.field == field


def test_git_ids_digests_uuids_and_path_variables_are_not_secrets() -> None:
    """Issue 26's false alarms: git's 40- and 64-hex object ids, digests, UUIDs, opaque
    signatures, and the values of path variables (``PWD``, ``HOME``, ``*_PATH``, ``*_DIR``)."""
    import hashlib

    sha1 = hashlib.sha1(b"first note").hexdigest()
    sha256 = hashlib.sha256(b"first note").hexdigest()
    log = f"Commit: '{sha1}'\nAuthor: Ada\nTree: {sha256}\nsha256:{sha256}\n"
    assert scan_text(log) == ()
    assert scan_text("6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11") == ()
    env = {
        "PWD": "/home/ada/src/app",
        "OLDPWD": "/home/ada",
        "HOME": "/home/ada",
        "VIRTUAL_ENV_PATH": "/home/ada/.venv/lib/python3.11/site-packages/Ab9Zq",
        "XDG_CACHE_DIR": "/home/ada/.cache/uv/archive-v0/Q2hhbmdlIHRoaXMgcGFzc3dvcmQ",
        "thought_signature": ENTROPY,
    }
    assert scan_value(env, ("response",)) == []
    # still secrets: an upper-case 40-hex run, a password under a lower-case "pwd"
    assert kinds(f"key {sha1.upper()}") == {sha1.upper(): "high_entropy_hex"}
    assert [h.secret for h in scan_value({"pwd": "hunter2"}, ("args",))] == ["hunter2"]


def test_basic_credentials_in_free_text_and_url_encoded_secrets() -> None:
    import base64
    import urllib.parse

    basic = base64.b64encode(b"deploy:s3cr3t-pass").decode()
    assert kinds(f"curl -H 'Authorization: Basic {basic}' https://x") == {basic: "basic_auth"}
    assert scan_text("basic usage of the tool, basic test") == ()
    proj = "sk-proj-" + "aB3dE9fG" * 6
    encoded = urllib.parse.quote(json.dumps({"key": proj}), safe="")
    assert [k for s, k in scan_text(f"https://x/cb?state={encoded}") if proj in s]
    # a secret holding escaped characters is found as it is written (percent-encoded)
    bearer = urllib.parse.quote("Authorization: Bearer abc/def+ghi==", safe="")
    assert kinds(f"https://x/?h={bearer}") == {"abc%2Fdef%2Bghi%3D%3D": "bearer_token"}


def test_provider_prefixes_inside_words_are_not_keys() -> None:
    assert scan_text("task-" + "Ab1" * 12) == ()
    assert kinds("x=%22sk-" + "Ab1" * 12 + "%22") == {"sk-" + "Ab1" * 12: "openai_token"}


@pytest.mark.parametrize(
    ("secret", "label"),
    [
        ("AKIAIOSFODNN7EXAMPLE", "an aws access key at $.args.k"),
        ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "a github token at $.args.k"),
    ],
)
def test_finding_names_the_kind_with_its_article(secret: str, label: str) -> None:
    [hit] = scan_value({"k": secret}, ("args",))
    assert hit_finding(1, hit).message.startswith(label)
