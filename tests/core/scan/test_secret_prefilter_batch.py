"""The secret prefilter over a batch of lines (``lines_secret_free``, as ``check`` runs it)
gives each line the answer it gets alone, and the scan of a batch with it finds exactly
what the full scan of every entry finds.

Issue 31 changed how a batch is matched: RE2's set for plain lines runs over all of them,
then the set for rebuilt lines (escapes decoded) over those, instead of the two in turn
line by line; so the batches here mix both kinds, in any order. It also cut from the set's
patterns a leading counted run of one class (``_without_leading_run``): the cut pattern
must still match wherever the pattern did. And the runs' test finds its runs inline
(``_runs_free``), the args digest passed over before its hex digits are searched for: it
answers as the test over ``_candidate_runs`` did.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cassette_tui.core.format.cassette import entry_from_record
from cassette_tui.core.format.jsontext import parse_json
from cassette_tui.core.scan import _secret_prefilter as P
from cassette_tui.core.scan._secret_prefilter import (
    _without_leading_run,
    line_secret_free,
    lines_secret_free,
)
from cassette_tui.core.scan.secrets import (
    entries_secret_findings,
    hit_finding,
    scan_entry,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
ENTROPY = "Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW"
#: texts that make a line plain or rebuilt (a newline, a quote, a backslash, a unicode
#: escape when written ASCII only), with and without a secret, and the usual cassette
#: shapes (paths, hex ids, words with a key-name stem)
_TEXTS = [
    GITHUB,
    ENTROPY,
    "AKIAIOSFODNN7EXAMPLE",
    "Bearer abc.DEF-123_xyz",
    "password = 'hunter2xyz'",
    "https://bob:hunter2@db.example.com/x",
    "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfYUJjRGVGZ0hpSmtMbU5vUHFSc1R1VndYeVowMTIzNDU2Nzg5",
    "token bucket secret vault passage key",
    "method/incident/vector-secret.toml",
    "f645bb258e97cab5",
    "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234",
    "line one\nline two",
    'a "quoted" word',
    "C:\\Users\\bob\\" + ENTROPY,
    "résumé",
    "\u0131",
    "plain words only",
]
_KEYS = ["q", "path", "x-req-id", "token", "api_key", "content", "Authorization", "note"]
_texts = st.sampled_from(_TEXTS) | st.text(max_size=10)
_values = st.recursive(
    _texts | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=6,
)
_records = st.builds(
    lambda seq, args, response, ascii_only: json.dumps(
        {
            "seq": seq,
            "tool": "t",
            "args": args,
            "args_digest": "sha256:1ff6289664b0033a",
            "response": response,
        },
        ensure_ascii=ascii_only,
        separators=(",", ":"),
    ).encode("utf-8"),
    st.integers(min_value=1, max_value=10_000),
    st.dictionaries(st.sampled_from(_KEYS), _values, max_size=3),
    _values,
    st.booleans(),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_records, min_size=1, max_size=12))
@example(
    lines=[
        b'{"seq":1,"tool":"t","args":{"q":"a\\nb"},"response":"' + GITHUB.encode() + b'"}',
        b'{"seq":2,"tool":"t","args":{"q":"x"},"response":"plain words"}',
        b'{"seq":3,"tool":"t","args":{"q":"x"},"response":"say \\"' + GITHUB.encode() + b'\\""}',
    ]
)
def test_a_batch_of_lines_gets_each_line_s_own_answer_and_the_full_scan_s_findings(
    lines: list[bytes],
) -> None:
    assert lines_secret_free(lines) == [line_secret_free(line) for line in lines]
    entries = [entry_from_record(parse_json(line)) for line in lines]
    full = [hit_finding(e.seq, hit) for e in entries for hit in scan_entry(e)]
    assert entries_secret_findings(entries, None, lines) == full


# -- a set's pattern cut of its leading run (``_without_leading_run``) ---------------------
_CLASSES = ["[0-9a-z]", "[A-Za-z0-9_-]", "[0-9a-f]"]
_RESTS = ["-us[0-9]{1,2}", "x", ":[0-9]{2}", "(?:ab|cd)", "k+"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_pattern_cut_of_its_leading_run_still_matches_wherever_it_did(data: Any) -> None:
    """The cut pattern is looser: every text the pattern matches, the cut one matches
    too (so the set still says "maybe" for every line it said it for)."""
    run = f"{data.draw(st.sampled_from(_CLASSES))}{{{data.draw(st.integers(1, 40))}}}"
    pattern = run + data.draw(st.sampled_from(_RESTS))
    cut = _without_leading_run(pattern)
    assert cut == pattern or pattern.endswith(cut)
    around = st.text(alphabet="ab -:\n1", max_size=8)
    text = data.draw(around) + data.draw(st.from_regex(pattern, fullmatch=True)) + data.draw(around)
    assert re.search(cut, text) is not None


def test_a_mailchimp_key_in_a_line_is_still_a_maybe() -> None:
    # the library's pattern whose leading run is cut from the set: ``-us`` and a digit
    key = "0123456789abcdef0123456789abcdef-us21"
    line = json.dumps({"seq": 1, "tool": "t", "args": {}, "response": {"k": key}}).encode()
    assert not line_secret_free(line)
    entry = entry_from_record(parse_json(line))
    assert scan_entry(entry), "the full scan finds it"


# -- the runs' test inline (``_runs_free``) against it over ``_candidate_runs`` ------------
def _reference_runs_free(raw: bytes, delimiter: bytes) -> bool:
    """``_runs_free`` as it was before issue 31's second round: each candidate run in
    turn from ``_candidate_runs``, the digest's run passed over after it was found."""
    digest_head = P._DIGEST_HEADS[delimiter]
    head_length = len(digest_head)
    for start, end in P._candidate_runs(raw):
        if (
            end - start == 16
            and start >= head_length
            and raw.startswith(digest_head, start - head_length)
        ):
            continue
        run = raw[start:end]
        if end - start >= P.B64_DECODE_MIN and P._run_hides_secret(run):
            return False
        if end - start < 23:
            if P._HEX_BYTES.fullmatch(run) is None or len(set(run)) < 9:
                continue
        else:
            distinct = len(set(run))
            if distinct < 9 or (distinct < 23 and P._HEX_BYTES.fullmatch(run) is None):
                continue
        if not P._entropy_skipped(raw, start, delimiter) and P._run_may_be_entropic(run):
            return False
    return True


_RUN_PIECES = [
    GITHUB,
    ENTROPY,
    "ZXhwb3J0IEdJVEhVQl9UT0tFTj1naHBfYUJjRGVGZ0hpSmtMbU5vUHFSc1R1VndYeVowMTIzNDU2Nzg5",
    "f645bb258e97cab5",
    "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234",
    "0123456789abcdef0",
    "this/registry/at/hit-cancel",
    "application/json",
    "abcdefghijklmnopqrstuvwxyz",
    "AbCdEfGhIjKlMnOpQrStUvWxYz01",
    '"args_digest":"sha256:',
    "\x00args_digest\x00:\x00sha256:",
    '"x-req-id":"',
    '"etag":"',
    '":"',
    '"',
    "\x00",
    " ",
    "==",
    "-",
    "/",
    "é",
]


@settings(max_examples=500, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_RUN_PIECES) | st.text(max_size=6), max_size=8),
    rebuilt=st.booleans(),
)
@example(pieces=['"args_digest":"sha256:', "1ff6289664b0033a", '"'], rebuilt=False)
@example(pieces=['"etag":"', "3f2a9c2e1b4d5f60aa3f2a9c2e1b4d5f60aa1234", '"'], rebuilt=False)
def test_the_runs_test_inline_answers_as_it_did(pieces: list[str], rebuilt: bool) -> None:
    raw = "".join(pieces).encode("utf-8", "surrogatepass")
    delimiter = b"\x00" if rebuilt else b'"'
    assert P._runs_free(raw, delimiter) == _reference_runs_free(raw, delimiter)
