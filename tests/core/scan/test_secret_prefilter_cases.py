"""Lines where ``check``'s secret prefilter
(``_secret_prefilter.line_secret_free``) calls a line free while the full scan (``scan_entry``) of
its entry finds a secret, so ``check`` misses it; and a line that makes the prefilter
raise. Each test states the line byte for byte."""

from __future__ import annotations

import json
from typing import Any

from cassette_tui.core.format.cassette import entry_from_record
from cassette_tui.core.format.jsontext import parse_json
from cassette_tui.core.scan._secret_prefilter import line_secret_free
from cassette_tui.core.scan.secrets import entry_secret_findings, scan_entry


def _entry(raw: bytes) -> Any:
    return entry_from_record(parse_json(raw))


def test_a_query_token_after_another_query_in_a_compact_line_is_found() -> None:
    """Pre-existing (also at 6eb101f). ``_QUERY`` is run over the whole rebuilt line: its
    value class ``[^&#\\s\"'<>]+`` does not stop at a text's end (``\\x00``), so in a
    compact line (no space after ``,``/``:``) the first ``?page=2`` value runs on over the
    next text and swallows its ``?access_token=...``; the scan of that text alone finds it.
    The same entry written by ``json.dumps``' default separators is reported."""
    raw = (
        b'{"seq":1,"tool":"http_get","args":{"url":"https://api.example.com/v1/items?page=2",'
        b'"next":"https://api.example.com/v1/items?access_token=s3cr3tvalue"},'
        b'"response":{"status":200}}'
    )
    entry = _entry(raw)
    assert [h.path for h in scan_entry(entry)] == ["$.args.next"]
    assert not line_secret_free(raw)
    assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry)


def test_the_same_with_short_texts() -> None:
    raw = b'{"seq":1,"tool":"t","args":{"u":"?a=b","v":"?token=hunter2"},"response":{}}'
    entry = _entry(raw)
    assert scan_entry(entry)
    assert not line_secret_free(raw)


def test_the_stored_digest_cut_out_of_a_key_keeps_the_texts_aligned() -> None:
    """New at cc751d3 (be8df1e; 6eb101f calls it a maybe). ``line_secret_free`` cuts the
    first ``"args_digest":"<stored>"`` out of the line. Here that byte sequence starts
    inside a key (``foo\\"args_digest``) that comes before the top-level field, so the cut
    leaves a lone backslash (``{"foo\\,...``). The old rebuild gave up on any backslash
    left over; a rebuild that keeps it (``_texts_line``) reads every quote after it the
    wrong way round, ``"password"`` is no longer seen as a key, and the password is
    missed."""
    raw = (
        b'{"seq":1,"tool":"t","args":{"foo\\"args_digest":"D","p":"C:\\\\x",'
        b'"password":"hunter2"},"args_digest":"D","response":{}}'
    )
    entry = _entry(raw)
    assert entry.args["password"] == "hunter2"
    assert [h.path for h in scan_entry(entry)] == ["$.args.password"]
    assert not line_secret_free(raw)
    assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry)


def test_a_stored_digest_holding_a_lone_surrogate_does_not_crash_the_scan() -> None:
    """Pre-existing. ``"args_digest":"\\ud800"`` loads (a string), but
    ``line_secret_free`` encodes it as UTF-8 and raises ``UnicodeEncodeError`` ("Raises
    nothing", says its docstring); ``cassette-tui check FILE`` then exits 2 with
    "'utf-8' codec can't encode character..." and no file, line or field, while
    ``check --no-secrets`` and ``diff`` read the file."""
    raw = b'{"seq":1,"tool":"t","args":{"q":"x"},"args_digest":"\\ud800","response":{"a":1}}'
    record: dict[str, Any] = parse_json(raw)
    assert record["args_digest"] == "\ud800"
    assert line_secret_free(raw) in (True, False)
    entry = _entry(raw)
    assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry) == []


def test_json_dumps_spacing_is_reported_control() -> None:
    """Control (passes): the first test's entry written with spaces is reported."""
    record = json.loads(
        b'{"seq":1,"tool":"http_get","args":{"url":"https://api.example.com/v1/items?page=2",'
        b'"next":"https://api.example.com/v1/items?access_token=s3cr3tvalue"},'
        b'"response":{"status":200}}'
    )
    raw = json.dumps(record).encode()
    assert not line_secret_free(raw)


def test_a_stored_digest_ending_in_a_backslash_keeps_the_texts_aligned() -> None:
    """The same cut (new at cc751d3), without an odd key: the stored digest ends with a
    backslash (``"a\\\\"``), so the pattern cut out is ``"args_digest":"a\\"``, which is
    the start of a nested ``"args_digest":"a\\"rest"``; the cut leaves ``rest"`` and
    every later quote reads the wrong way round (the stored digest's own ``\\\\`` sends the
    line down the exact path)."""
    raw = (
        b'{"seq":1,"tool":"t","args":{"args_digest":"a\\"rest","password":"hunter2"},'
        b'"args_digest":"a\\\\","response":{}}'
    )
    entry = _entry(raw)
    assert entry.args_digest == "a\\"
    assert [h.path for h in scan_entry(entry)] == ["$.args.password"]
    assert not line_secret_free(raw)
    assert entry_secret_findings(entry, None, raw) == entry_secret_findings(entry)
