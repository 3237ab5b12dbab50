"""``check``'s lint and secret scan over two processes (core/scan/check.py) give exactly
what one process gives: the same findings in the same order, the same error for a bad
line, also when the worker fails; and a Ctrl-C leaves no worker behind."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.scan import check as checkscan
from cassette_tui.core.scan.check import lint_and_scan
from cassette_tui.core.scan.lint import lint
from cassette_tui.core.scan.redact_config import SecretConfig
from cassette_tui.core.scan.secrets import secret_findings
from support.factory import entry, write_cassette

pytestmark = pytest.mark.skipif(not checkscan.can_fork(), reason="no fork or one CPU here")

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def _records(n: int) -> list[dict]:
    """Every kind of per-entry and whole-cassette finding, spread over the file."""
    out = []
    for seq in range(1, n + 1):
        fields: dict = {"response": {"hits": [f"doc {seq % 7}"], "req": "x"}}
        args: dict = {"q": f"term {seq % 5}"}
        if seq % 9 == 0:
            args["at"] = "2024-05-01T12:00:00Z"  # volatile_arg
        if seq % 11 == 0:
            fields["response"] = {"body": "\x1f\x8bgzip bytes"}  # binary_as_text
        if seq % 13 == 0:
            fields["response"] = {"note": f"use {GITHUB}"}  # secret
        if seq % 17 == 0:
            fields["args_digest"] = "sha256:0000000000000000"  # stale_digest
        if seq % 19 == 0:
            fields["context"] = 5  # bad_context
        if seq % 23 == 0:
            fields = {"error": {"type": "Timeout", "message": f"t{seq % 3}"}}
        if seq % 5 == 3:  # a key that fails most of the time, in several ways
            fields = {"response": {"status": 500 + seq % 4}}
        if seq % 5 == 4 and seq % 3 == 0:  # header variants on another key
            fields["request_headers"] = {"Accept": "text/csv" if seq % 2 else "application/json"}
        out.append(entry(seq if seq % 29 else seq - 3, "search_docs", args, **fields))
    out[-1]["run_outcome"] = {"reward": "high"}
    return out


def _both(path: Path, config: SecretConfig | None) -> tuple[list, list]:
    cassette = load(path)
    return lint_and_scan(cassette, config, workers=2)


@pytest.mark.parametrize("n", [2, 3, 50, 400])
def test_two_processes_give_what_one_gives(tmp_path: Path, n: int) -> None:
    path = write_cassette(tmp_path / "c.jsonl", *_records(n))
    config = SecretConfig()
    one = (lint(load(path)), secret_findings(load(path), config))
    assert one[0] and (n < 13 or one[1])
    if n == 400:  # every kind of repeated key, classified from what each process kept
        kinds = {f.kind for f in one[0]}
        assert {"repeated_key", "distinct_errors", "header_variants"} <= kinds, kinds
    assert _both(path, config) == one
    assert lint_and_scan(load(path), config, workers=1) == one
    assert _both(path, None) == (one[0], [])
    kinds = {f.kind for f in one[0]}
    if n >= 400:
        assert kinds >= {
            "volatile_arg",
            "binary_as_text",
            "stale_digest",
            "bad_context",
            "seq_order",
            "repeated_key",
        }


def test_a_bad_line_in_the_workers_part_is_the_same_error(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _records(100)]
    # a repeated key inside a response: the load reads only the top level, the entry
    # parse refuses it
    lines[80] = lines[80].replace('"req": "x"', '"req": "x", "req": "y"')
    path = write_cassette(tmp_path / "bad.jsonl", *lines)
    with pytest.raises(CassetteFormatError) as one:
        lint(load(path))
    with pytest.raises(CassetteFormatError) as two:
        lint_and_scan(load(path), SecretConfig(), workers=2)
    assert str(two.value) == str(one.value) and "bad.jsonl:81:" in str(one.value)


def test_a_worker_that_fails_hands_its_part_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_cassette(tmp_path / "c.jsonl", *_records(200))
    one = (lint(load(path)), secret_findings(load(path), SecretConfig()))

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("worker broke")

    # the fork copies the patched module: the worker's own work raises there
    monkeypatch.setattr(checkscan, "pass_columns", broken)
    assert _both(path, SecretConfig()) == one


def test_an_interrupt_leaves_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_cassette(tmp_path / "c.jsonl", *_records(200))
    calls = []

    def interrupted(*_args: object, **_kwargs: object) -> None:
        calls.append(1)
        raise KeyboardInterrupt

    # the module (``cassette_tui.core.scan.lint`` is also the package's ``lint`` function)
    monkeypatch.setattr(sys.modules[lint.__module__], "_entry_findings", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _both(path, SecretConfig())
    assert calls
    assert multiprocessing.active_children() == []
