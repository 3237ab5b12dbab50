"""Lint reads a file-backed cassette one batch at a time: what it keeps after the pass does
not grow with the size of the args it read (a cassette of long, distinct prompts).

Found by the breaker session on 52595ca: ``lint._KIND_SEEN`` (the volatile kinds of
strings met before) keeps every distinct arg string alive, bounded by count (65536), not
by size: ``check --no-secrets`` of a 325 MB cassette of 20k distinct 16 KB prompts peaks
at 363 MB RSS (52 MB at 994c19f, 56 MB with the cache disabled)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

from cassette_tui.core.format.cassette import load
from cassette_tui.core.scan.lint import lint


def test_lint_keeps_no_arg_strings_after_the_pass(tmp_path: Path) -> None:
    path = tmp_path / "prompts.jsonl"
    with path.open("w") as f:
        for i in range(400):
            # distinct (the seq in front), with a "-" (a character a volatile value may hold)
            prompt = f"{i}-" + "lorem ipsum dolor sit amet " * 2000  # about 54 KB
            record = {"seq": i + 1, "tool": "llm", "args": {"prompt": prompt}, "response": "ok"}
            f.write(json.dumps(record) + "\n")
    cassette = load(path)
    gc.collect()
    tracemalloc.start()
    try:
        findings = lint(cassette)
        del findings
        gc.collect()
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # about 21 MB of args were read; at 994c19f lint kept well under 1 MB of them
    assert retained < 4 * 1024 * 1024, f"lint kept {retained >> 20} MB after the pass"
