"""Issue 31: the secret scan remembers texts up to a total length (``_CACHED_CHARS``), not
a count; what it finds is the same whatever that bound, down to a tiny one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cassette_tui.core.scan import _secret_detectors as detectors
from cassette_tui.core.scan._bytes_lru import BytesLRU
from cassette_tui.tui.cli import cli
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
OPENAI = "sk-proj-" + "Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nMq6wEr0tYu"  # fake
PIECES = (GHP, OPENAI, "hunter2-db-Pa55word", "password=", "Bearer ", "https://u:p@h/x", " ")
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=12), max_size=5).map("".join)


@contextmanager
def tiny_cache() -> Iterator[None]:
    """The scan's cache bounded to 16 characters: nearly every text is scanned afresh."""
    cache = detectors._scan_text_cached
    saved = cache.max_chars
    cache.clear()
    cache.max_chars = 16
    try:
        yield
    finally:
        cache.max_chars = saved
        cache.clear()


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=30), cap=st.integers(0, 64))
def test_bytes_lru_answers_as_the_function_and_keeps_under_its_bound(
    texts: list[str], cap: int
) -> None:
    calls: list[str] = []

    def compute(text: str, flag: object) -> tuple[str, object]:
        calls.append(text)
        return (text.upper(), flag)

    memo: BytesLRU[tuple[str, object]] = BytesLRU(compute, cap)
    for text in texts + texts[::-1]:
        assert memo(text, True) == (text.upper(), True)
        assert memo.chars <= cap
        assert memo.chars == sum(len(t) for t, _ in memo._kept)
    # a text seen twice in a row is computed once when it fits
    fitting = next((t for t in texts if len(t) <= cap), None)
    if fitting is not None:
        before = len(calls)
        memo(fitting, False)
        memo(fitting, False)
        assert len(calls) == before + 1


def test_bytes_lru_drops_the_least_recently_used_first() -> None:
    memo: BytesLRU[str] = BytesLRU(lambda text, _flag: text, 6)
    memo("aa", True)
    memo("bb", True)
    memo("aa", True)  # now the most recent
    memo("cc", True)
    memo("dd", True)  # 8 chars: "bb" goes first
    assert [t for t, _ in memo._kept] == ["aa", "cc", "dd"]


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=20), entropy=st.booleans())
def test_scan_text_finds_the_same_with_a_tiny_cache(texts: list[str], entropy: bool) -> None:
    cache = detectors._scan_text_cached
    saved = cache.max_chars
    try:
        for cap in (saved, 16, 0):
            cache.max_chars = cap
            cache.clear()
            for text in texts + texts:
                assert detectors.scan_text(text, entropy) == detectors._scan_text(text, entropy)
    finally:
        cache.max_chars = saved
        cache.clear()


def _diff_json(a: Path, b: Path) -> object:
    result = CliRunner().invoke(cli, ["diff", str(a), str(b), "--json"])
    assert result.exit_code == 1, result.output
    return json.loads(result.output)


def test_diff_json_is_the_same_with_a_tiny_cache(tmp_path: Path) -> None:
    rows_a, rows_b = [], []
    for seq in range(1, 41):
        secret = PIECES[seq % 3]
        rows_a.append(entry(seq, "login", {"password": secret, "n": seq % 4}, response={"t": GHP}))
        rows_b.append(
            entry(
                seq,
                "login",
                {"password": secret + "x" * (seq % 2), "n": seq % 4},
                response={"t": f"Bearer {OPENAI}" if seq % 5 else GHP},
            )
        )
    a = write_cassette(tmp_path / "a.jsonl", *rows_a)
    b = write_cassette(tmp_path / "b.jsonl", *rows_b)
    detectors._scan_text_cached.clear()
    default = _diff_json(a, b)
    with tiny_cache():
        assert _diff_json(a, b) == default
    assert "ghp_…(40 chars)" in json.dumps(default, ensure_ascii=False)  # the scan ran
