"""A known-format token glued to a run longer than the scan's token limit (8192 characters of
base64 or path) is still found: by the scan, ``check`` (the installed CLI), ``redact`` and
the app's masking; a long random base64 blob with no token stays free of findings."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import load
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.scan._secret_detectors import scan_text
from cassette_tui.core.scan._secret_prefilter import line_secret_free
from cassette_tui.core.scan.masking import mask_long_text, mask_text, mask_value
from cassette_tui.core.scan.redact import redact_job
from cassette_tui.core.scan.secrets import scan_value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette

GHP = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3gH5"
LONG = "/usr/lib/" * 1000 + GHP  # 9,040 characters: one token over the limit
SHORT = "/usr/lib/" * 500 + GHP

#: known formats whose patterns need nothing before them (any neighbour in a run)
TOKENS = [
    GHP,
    "AKIA" + "Q3EGRIZ7XMPL4HSN",
    "xoxb-" + "1234567890-abcdefghijKLMN",
    "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
]


def _cli() -> str:
    return str(Path(sys.executable).with_name("cassette-tui"))


def test_scan_finds_token_after_long_path_run() -> None:
    for text in (SHORT, LONG):
        found = scan_text(text)
        assert [kind for _, kind in found] == ["github_token"]
        assert found[0][0] == GHP


def test_scan_value_and_masking_agree_on_long_run() -> None:
    value = {"out": LONG}
    hits = scan_value(value, ())
    assert [h.secret for h in hits] == [GHP]
    assert GHP not in json.dumps(mask_value(value))
    assert GHP not in mask_text(LONG)
    assert not line_secret_free(json.dumps({"response": value}).encode())


def test_check_cli_reports_token_after_long_run(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1, response={"out": LONG}))
    done = subprocess.run(
        [_cli(), "check", "--json", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, done.stderr
    report: Any = json.loads(done.stdout)
    text = json.dumps(report)
    assert "secret" in text and "github" in text
    assert GHP not in done.stdout  # shown masked


def test_redact_masks_token_after_long_run(tmp_path: Path) -> None:
    src = write_cassette(tmp_path / "c.jsonl", entry(1, response={"out": LONG}))
    out = tmp_path / "out.jsonl"
    run_job(redact_job(load(src), out))
    written = out.read_text(encoding="utf-8")
    assert GHP not in written
    assert "<redacted:github_token:" in written
    assert "/usr/lib/" * 1000 in written  # the run itself is kept


def _blob(seed: int, size: int) -> str:
    """The base64 of ``size`` random bytes (an image's, say), drawn from ``seed``."""
    return base64.b64encode(random.Random(seed).randbytes(size)).decode()


_B64 = st.builds(_blob, st.integers(0, 2**32), st.integers(6200, 9000))
_WORDS = ["usr", "lib", "python3", "site-packages", "x_y", "share", "a-b"]


def _path(seed: int) -> str:
    """A path of random words, over 8,400 characters long, drawn from ``seed``."""
    rng = random.Random(seed)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < 8400:
        words.append(rng.choice(_WORDS))
    return "/" + "/".join(words) + "/"


_PATH = st.builds(_path, st.integers(0, 2**32))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=st.one_of(_B64, _PATH), token=st.sampled_from(TOKENS), where=st.floats(0, 1))
def test_known_token_anywhere_in_long_run_is_found(run: str, token: str, where: float) -> None:
    at = int(len(run) * where)
    text = run[:at] + token + run[at:]
    assert len(text) > 8192
    found = scan_text(text)
    assert found, "no finding"
    assert token not in mask_text(text)
    assert not line_secret_free(json.dumps({"response": {"out": text}}).encode())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.builds(_blob, st.integers(0, 2**32), st.integers(6200, 60000)))
def test_long_random_base64_blob_has_no_finding(text: str) -> None:
    assert scan_text(text) == ()
    assert scan_value({"image": text}, ()) == []


def test_app_long_text_paths_mask_token_after_long_run() -> None:
    """The app's long answers (``mask_long_text``): prose around the run, a JSON list of
    such texts and a JSON object, each the same as ``mask_value`` and without the token."""
    prose = "line of text\n" * 3000 + LONG + "\nmore text\n" * 3000
    shapes = [
        prose,
        json.dumps([LONG, "x" * 100, "ok"] * 3),
        json.dumps({"files": [LONG], "n": 1}),
    ]
    for text in shapes:
        masked = mask_long_text(text, "content")
        assert masked is not None
        assert GHP not in masked
        assert masked == mask_value(text, "content")


def _reference_long_hits(token: str) -> tuple[tuple[str, str], ...]:
    """The long token's secrets as main found them: the library's patterns searched by
    Python over the whole token (quadratic on some runs), every match's secret, then the
    providers' patterns; the longest kept (``_longest_first``, as the scan does)."""
    from cassette_tui.core.scan._secret_detectors import (
        PROVIDERS,
        _long_token_search,
        _longest_first,
        _plugin_span,
        looks_masked,
        pattern_groups,
    )

    found: list[tuple[str, str]] = []
    if not _long_token_search()(token):
        return ()
    for slug, regex in pattern_groups()[0]:
        for m in regex.finditer(token):
            start, end = _plugin_span(m, token)
            if token[start:end] and not looks_masked(token[start:end]):
                found.append((token[start:end], slug))
    for slug, regex in PROVIDERS:
        found.extend((hit, slug) for hit in regex.findall(token) if not looks_masked(hit))
    return _longest_first(found)


#: tokens whose library pattern backtracks (OpenAI's ``sk-...T3BlbkFJ...``) and others
_OPENAI_LEGACY = "sk-" + "aB3dE5gH7jK9mN1pQ3sT" + "T3BlbkFJ" + "vW7yZ9bC1dF3gH5jK7mN"
_JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
_PIECES = [*TOKENS, _OPENAI_LEGACY, _JWT, "eyJhbGc.", "sk-proj-", "sk-", "T3BlbkFJ", ".", "-", "_"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    run=st.one_of(_B64, _PATH),
    pieces=st.lists(st.tuples(st.sampled_from(_PIECES), st.floats(0, 1)), max_size=6),
)
def test_long_token_hits_agree_with_the_whole_token_search(
    run: str, pieces: list[tuple[str, float]]
) -> None:
    from cassette_tui.core.scan._secret_detectors import _long_token_hits, _longest_first

    text = run
    for piece, where in pieces:
        at = int(len(text) * where)
        text = text[:at] + piece + text[at:]
    found: list[tuple[str, str]] = []
    _long_token_hits(text, found)
    assert _longest_first(found) == _reference_long_hits(text)


@pytest.mark.parametrize(
    ("run", "kind"),
    [
        # the library's OpenAI pattern, searched from each ``sk-``, backtracks over the run:
        # 30 s of CPU for 200 KB, about 120 s for this
        ("sk-proj-" * 50_000, "openai_token"),
        # the JWT pattern matches each ``eyJ...`` part and each was carried to the end of
        # the token: quadratic in time and in the secrets' text (gigabytes for this)
        ("eyJhbGc." * 50_000, "json_web_token"),
        # tokens under the long token's limit: 60 ms each, 2,000 of them 120 s
        (("sk-proj-" * 1_000 + " ") * 2_000, "openai_token"),
    ],
    ids=["openai", "jwt", "openai-8k-tokens"],
)
def test_a_long_run_of_key_prefixes_is_scanned_in_linear_time(
    tmp_path: Path, run: str, kind: str
) -> None:
    """400 KB of one token (every character a token character) made of a key's prefix,
    or 16 MB of 8 KB ones, under ``check``: a CPU limit of 30 s (over ten times what the whole command takes now)
    and 3 GB of memory stand for "it ends"."""
    path = write_cassette(tmp_path / "c.jsonl", entry(1, response={"out": run}))
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_CPU, (30, 30)); "
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
        "from cassette_tui.tui.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "check", "--json", str(path)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert kind in done.stdout and run[:24] not in done.stdout
