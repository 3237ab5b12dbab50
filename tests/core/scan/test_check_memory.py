"""Lint and the secret scan read a file-backed cassette without holding many entries at
once: their peak memory does not grow with the number of large entries (a cassette of
300 web pages of about 100 KB each: 30 MB; 12 MB peak at 994c19f, 74 MB at 52595ca).

Found by the breaker session on 52595ca: ``lint.entry_passes`` and ``secrets.SecretBatch``
hold 256 parsed entries and their lines at a time; ``check`` of a 268 MB cassette of
300 responses of 0.9 MB peaks at 752 MB RSS (58 MB at 994c19f), ``check --no-secrets``
at 602 MB (46 MB)."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

from cassette_tui.core.format.cassette import load
from cassette_tui.core.scan.check import lint_and_scan
from cassette_tui.core.scan.redact_config import SecretConfig

WORDS = ["alpha", "beta", "gamma", "delta", "page", "html", "div", "span"]


def write_pages(path: Path, n: int = 300, words: int = 17_000) -> None:
    rnd = random.Random(2)
    with path.open("w") as f:
        for i in range(n):
            body = " ".join(rnd.choice(WORDS) for _ in range(words))  # about 100 KB
            record = {
                "seq": i + 1,
                "tool": "fetch",
                "args": {"url": f"u{i}"},
                "response": {"body": body},
            }
            f.write(json.dumps(record) + "\n")


def test_check_holds_few_entries_at_once(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    write_pages(path)  # about 30 MB
    cassette = load(path)
    tracemalloc.start()
    try:
        lint_and_scan(cassette, SecretConfig(), workers=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 1024 * 1024, f"check peaked at {peak >> 20} MB"
