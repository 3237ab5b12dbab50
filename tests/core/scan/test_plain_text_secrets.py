"""A long plain string's secrets found piece by piece (``core/scan/plain_text_secrets.py``)
are those of the scan of the whole string (``scan_text``), wherever the secrets and what
finds them (a keyword, a URL, a bearer word, blank space) fall against the cuts."""

from __future__ import annotations

from typing import Any

import pytest
from cassette_tui.core.scan import plain_text_secrets as module
from cassette_tui.core.scan._secret_detectors import (
    _pattern_hits,
    _url_hits,
    pattern_groups,
    scan_text,
)
from cassette_tui.core.scan.plain_text_secrets import plain_text_secrets
from hypothesis import given, settings
from hypothesis import strategies as st

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
FRAGMENTS = [
    "the quick brown fox jumps over the lazy dog",
    "hunter2xyz",
    "password = 'hunter2xyz'",
    'api_key: "aB3dE9fG1hJ2kL4mN6pQ8rS0tU"',
    "my secret is",
    "= 'zz9yy8xx7'",
    GITHUB,
    "https://user:pw1234xyz@host.example.com/path",
    "https://example.com/docs/page?id=42&q=fox",
    "//host",
    "@",
    "Bearer",
    "abcdefgh12345678",
    "Basic",
    "dXNlcjpwYXNzd29yZA==",
    "request_id:",
    "8f3a9c2e7b1d4f6a8c0e2b4d6f8a1c3e",
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
    "token=abc123def456ghi",
    "zQ8vN3kL1xR7mB5wT2yH9pF4jD6sG0cA",
    "line 123: ok",
    "é",
    "cloudant_key" + " " * 300 + "=> " + "0123456789abcdef" * 4,
    "pass_key =",
    "request_id: 8f3a9c2e7b1d4f6a8c0e2b4d6f8a1c3e7b1d",
    "x = ",
    "token",
    "'",
    '"',
    "aws",
    "https://api softlayer.com/soap/v3/" + "0123456789abcdef" * 4,
    "https://api.softlayer.com/soap/v3.1/" + "abcdef0123456789" * 4,
]
SEPARATORS = [" ", "\n", "  ", "\t", " \n ", "\n\n", "", ", ", " " * 300, "\n" * 200]


@st.composite
def long_texts(draw: Any) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 120))):
        parts.append(draw(st.sampled_from(FRAGMENTS)))
        parts.append(draw(st.sampled_from(SEPARATORS)))
        if draw(st.integers(0, 4)) == 0:  # filler that the cuts fall in
            parts.append("plain words here " * draw(st.integers(1, 80)))
    return "".join(parts)


@pytest.fixture(autouse=True)
def _small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "PIECE", 600)
    monkeypatch.setattr(module, "_PIECE_MIN", 401)


@settings(max_examples=100, deadline=None)
@given(long_texts(), st.booleans())
def test_the_secrets_of_the_pieces_are_those_of_the_whole(text: str, entropy: bool) -> None:
    found = plain_text_secrets(text, entropy)
    assert found == scan_text(text, entropy)


def test_a_password_far_from_its_text_is_found() -> None:
    text = "hunter2xyz is it\n" + "the quick brown fox\n" * 6_000 + "password = 'hunter2xyz'\n"
    assert len(module._cuts(text)) > 10
    assert plain_text_secrets(text) == (("hunter2xyz", "password_assignment"),)


@pytest.mark.parametrize(
    "rule",
    [
        "<redacted:github_token:1a2b3c4d>",
        "-----BEGIN PRIVATE KEY-----",
        "a%20b",
        "_authToken",
        "İ",
    ],
)
def test_a_rule_that_reads_the_whole_text_leaves_it_to_the_whole_scan(rule: str) -> None:
    assert plain_text_secrets("words " * 2_000 + rule) is None


def test_many_urls_are_cleared_by_the_prefilter_without_a_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    urls = " ".join(f"https://user@example{i % 97}.com/docs/{i}" for i in range(20_000))
    scanned: list[str] = []

    def scan(text: str, entropy: bool = True) -> tuple[()]:
        scanned.append(text)
        return ()

    monkeypatch.setattr(module, "scan_text", scan)
    assert plain_text_secrets(urls) == ()
    assert len(scanned) < len(module._cuts(urls)) - 1


@settings(max_examples=100, deadline=None)
@given(long_texts())
def test_the_url_patterns_without_npm_s_on_a_text_without_its_word_find_the_same(
    text: str,
) -> None:
    """``_url_hits`` leaves npm's pattern out when the text lacks ``_authToken``: what the
    whole list of patterns finds, with the word put in or not."""
    for variant in (text, text.replace("//host", "//host/:_authToken=npm_abc123def456")):
        found: list[tuple[str, str]] = []
        _url_hits(variant, found)
        every: list[tuple[str, str]] = []
        _pattern_hits(variant, pattern_groups()[2], every)
        assert found == every


def test_a_line_of_urls_with_a_percent_escape_is_scanned_whole_in_linear_time() -> None:
    """A percent escape sends the text to the whole scan: 20k URLs with user names on one
    line (npm's pattern, run on it, backtracked from each ``//``: minutes)."""
    urls = " ".join(f"https://reader{i}@example.com/a%20b/{i}" for i in range(20_000))
    assert plain_text_secrets(urls) is None
    assert scan_text(urls) == ()


URL_FRAGMENTS = [
    "https://hooks.slack.com/services/T0001ABC/B0002DEF/xyzXYZ0123",
    "https://HOOKS.SLACK.COM/services/t0001/b0002/x",
    "https://hooks.slacK.com/services/T0001/B0002/x",  # K: the Kelvin sign
    "https://hooks.slack.com/services/Tı0/Bİ0/x",  # dotless and dotted I
    "https://hooks.ſlack.com/services/T0/B0/x",  # long s
    "https://reader1@example.com/docs/page/1",
    "https://user:pw1234xyz@host.example.com/path",
    "https://abc-def:" + "0123456789abcdef" * 4 + "@acct.cloudant.com",
    "https://abc:abcdefghijklmnopqrstuvwx@acct.CLOUDANT.com",
    "https://api.softlayer.com/soap/v3/" + "abcdef0123456789" * 4,
    "http://api.softlayer.com/soap/v3.1/" + "ABCDEF0123456789" * 4,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(URL_FRAGMENTS + FRAGMENTS + SEPARATORS), max_size=12))
def test_no_url_answers_as_python_s_url_patterns(parts: list[str]) -> None:
    """``_no_url`` (RE2's loosened URL patterns, Slack's verbose one among them, the dotted
    and dotless I asked of Python's once a piece) never says no URL pattern but npm's
    matches when one of Python's own does (RE2's are looser)."""
    text = "".join(parts)
    patterns = [r for _, r in pattern_groups()[2] if "_authToken" not in r.pattern]
    expected = not any(r.search(text) for r in patterns)
    line = b"\x00" + text.encode("utf-8") + b"\x00"
    if not expected:
        assert not module._no_url(text, line)


def test_every_url_pattern_is_run_by_re2() -> None:
    """Each URL pattern but npm's is RE2's, Slack's verbose one included: Python's own
    searches took 50 ms over 2.4 MB of URLs with user names."""
    import re2

    for matches in module._url_matchers():
        assert any(isinstance(d, re2._Regexp) for d in matches.__defaults__)
    text = " ".join(f"https://reader{i}@example.com/docs/page/{i}" for i in range(2_000))
    assert module._no_url(text, b"\x00" + text.encode() + b"\x00")


@settings(max_examples=100, deadline=None)
@given(
    long_texts(),
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(FRAGMENTS)),
             min_size=1, max_size=3),
    st.booleans(),
)  # fmt: skip
def test_a_text_read_after_another_is_read_as_alone(
    text: str, edits: list[tuple[float, int, str]], entropy: bool
) -> None:
    """The two sides of a drift: B (A with a few characters replaced) read after A takes
    A's pieces where they are the same at the same place, and finds what the scan of B
    alone finds; A read again, after B, too."""
    other = text
    for where, drop, fragment in edits:
        at = int(where * len(other))
        other = other[:at] + fragment + other[at + drop :]
    module._SEEN.clear()
    first = plain_text_secrets(text, entropy)
    second = plain_text_secrets(other, entropy)
    assert second == scan_text(other, entropy)
    assert plain_text_secrets(text, entropy) == first == scan_text(text, entropy)


def test_a_piece_is_taken_from_a_text_kept_only_where_it_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text whose pieces are another's at the same places but one: that one alone is
    asked of the prefilter; a secret put in it is found (a token: no keyword, which
    would move the cuts after it)."""
    a = "plain words here " * 400
    b = a[:3300] + GITHUB + a[3300 + len(GITHUB) :]
    asked: list[str] = []
    piece_secrets = module._piece_secrets
    monkeypatch.setattr(
        module, "_piece_secrets", lambda p, d, e: (asked.append(p), piece_secrets(p, d, e))[1]
    )
    module._SEEN.clear()
    assert plain_text_secrets(a) == ()
    first = len(asked)
    assert plain_text_secrets(b) == scan_text(b) != ()
    assert len(asked) == first + 1 and GITHUB in asked[-1]
