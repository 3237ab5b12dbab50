"""``check``'s pass a batch at a time (issue 31, sixth round, branch check-cpu2) gives what
the pass an entry at a time gave, for any cassette (hypothesis):

- ``Cassette.entry_batches`` gives ``entries_read``'s entries and line bytes, in order, a
  batch at a time;
- ``lint.pass_columns`` (``entry_pass`` inline, the secret scan's batch handed over at
  once) gives the columns ``entry_passes`` gave, as main's loops kept them (a copy of
  them below, main at 1ab12af), and ``SecretBatch.add_batch`` the findings of ``add``;
- ``lint`` and ``check.lint_and_scan`` (both processes) give the same findings.

The cassettes mix entries with volatile args, binary-looking text, errors, identity
headers, context words, a run outcome, stale and missing digests, repeated keys and
secrets; the batches are made small so that several come up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format import _view
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.digest import digest
from cassette_tui.core.keys.repeats import NO_HEADERS_FORM
from cassette_tui.core.scan import lint
from cassette_tui.core.scan.check import lint_and_scan
from cassette_tui.core.scan.redact_config import SecretConfig
from cassette_tui.core.scan.secrets import SecretBatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ARGS = st.sampled_from(
    [
        {"q": "rollback registry"},
        {"q": "x", "top_k": 3},
        {"path": "/tmp/abc/run.log"},
        {"id": "123e4567-e89b-12d3-a456-426614174000"},
        {"at": 1_700_000_000},
        {"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
        {"nested": {"a": [1, 2.5, None, True]}},
    ]
)
RESPONSES = st.sampled_from(
    [
        {"response": {"hits": 1}},
        {"response": "plain text\nwith a newline"},
        {"response": {"content": "\x1f\x8bgzip"}},
        {"response": {"status": 503}},
        {"response": "Error: user not found"},
        {"response": {"auth": "Bearer abcdefghijklmnopqrstuvwxyz012345"}},
        {"response": {"blob": "U2VjcmV0OiBzay1saXZlLWFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6"}},
        {"error": {"type": "TimeoutError", "message": "took too long"}},
    ]
)
EXTRAS = st.sampled_from(
    [
        {},
        {"request_headers": {"Accept": "application/json", "X-Api-Version": "2"}},
        {"context": {"before": "the user asked"}},
        {"context": 5},
        {"run_outcome": {"status": "passed"}},
        {"arguments_error": "Expecting value"},
        {"recorded_at": "2026-12-04T19:00:00Z", "duration_ms": 12},
    ]
)
DIGESTS = st.sampled_from(["right", "stale", "none"])


@st.composite
def cassettes(draw: Any) -> list[str]:
    """The lines of a cassette of 1 to 40 entries (tools and args from small pools, so
    keys repeat)."""
    lines = []
    for seq in range(1, draw(st.integers(1, 40)) + 1):
        args = draw(ARGS)
        record: dict[str, Any] = {"seq": seq, "tool": draw(st.sampled_from(["a", "b"]))}
        record["args"] = args
        stored = draw(DIGESTS)
        if stored != "none":
            record["args_digest"] = digest(args) if stored == "right" else digest({"x": seq})
        record.update(draw(RESPONSES))
        record.update(draw(EXTRAS))
        lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
    return lines


def _main_columns(cassette: Any, start: int, each: Any) -> lint.TailResult:
    """The columns of ``entry_pass`` from ``start`` on as main kept them (``check.py``'s
    worker loop at 1ab12af): ``entry_passes``, an entry at a time."""
    digests: list[str] = []
    found_at: dict[int, list[Any]] = {}
    failed = bytearray()
    header_forms: dict[int, str] = {}
    for i, _entry, (dig, found, fail, form) in lint.entry_passes(cassette, start, None, each):
        digests.append(dig)
        if found:
            found_at[i - start] = found
        failed.append(fail)
        if form != NO_HEADERS_FORM:
            header_forms[i - start] = form
    return lint.TailResult(digests, found_at, failed, header_forms)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of at most 3 entries or 300 bytes of lines (several a cassette)."""

    def full(entries: int, size: int) -> bool:
        return entries >= 3 or size >= 300

    monkeypatch.setattr(_view, "batch_full", full)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=cassettes(), start=st.integers(0, 10), data=st.data())
def test_the_batched_pass_gives_the_same_columns(
    tmp_path: Path, small_batches: None, lines: list[str], start: int, data: Any
) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cassette = load(path)
    start = min(start, len(cassette))
    stop = data.draw(st.one_of(st.none(), st.integers(start, len(cassette))))

    read = [
        (i, e, raw)
        for first, es, raws in cassette.entry_batches(start, stop)
        for i, e, raw in zip(range(first, first + len(es)), es, raws, strict=True)
    ]
    assert read == list(cassette.entries_read(start, stop))

    config = SecretConfig()
    one, batched = SecretBatch(config), SecretBatch(config)
    expected = _main_columns(cassette, start, lambda _i, e, raw: one.add(e, raw))
    assert lint.pass_columns(cassette, start, None, batched.add_batch) == expected
    assert batched.flush() == one.flush()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=cassettes())
def test_lint_and_the_two_processes_find_the_same(
    tmp_path: Path, small_batches: None, lines: list[str]
) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cassette = load(path)
    seen: list[int] = []
    findings = lint.lint(cassette, each=lambda i, _e, _raw: seen.append(i))
    assert seen == list(range(len(cassette)))
    reference = SecretBatch(SecretConfig())
    _main_columns(cassette, 0, lambda _i, e, raw: reference.add(e, raw))
    for workers in (1, 2):
        assert lint_and_scan(cassette, SecretConfig(), workers=workers) == (
            findings,
            reference.flush(),
        )


def test_an_in_memory_cassette_is_read_in_batches(small_batches: None) -> None:
    from cassette_tui.core.format.entry import Entry

    cassette = load_entries(
        [Entry(seq=k, tool="t", args={"k": k}, response=k) for k in range(1, 8)]
    )
    batches = list(cassette.entry_batches(1, 6))
    assert [(first, [e.seq for e in es], raws) for first, es, raws in batches] == [
        (1, [2, 3, 4], [None] * 3),
        (4, [5, 6], [None] * 2),
    ]


def load_entries(entries: list[Any]) -> Any:
    from cassette_tui.core.format.cassette import Cassette

    return Cassette.from_entries(entries)
