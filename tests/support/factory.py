"""The one cassette factory of the test suite.

``entry(...)`` builds one record (a dict, as written on disk); ``write_cassette`` writes
records or raw lines to a file; ``make_cassette`` builds an in-memory ``Cassette`` from
``(tool, args, response)`` triples, where a response ``{"__error__": msg}`` is a recorded
error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry


def entry(seq: int, tool: str = "search_docs", args: object = None, **fields: object) -> dict:
    """One cassette record; ``response`` defaults to ``{"hits": 1}`` unless ``error`` is
    given."""
    record: dict[str, object] = {
        "seq": seq,
        "tool": tool,
        "args": {"q": "x"} if args is None else args,
    }
    record.update(fields)
    if "response" not in record and "error" not in record:
        record["response"] = {"hits": 1}
    return record


def line(seq: int, tool: str = "search_docs", args: object = None, **fields: object) -> str:
    """``entry(...)`` as one JSON line (no newline)."""
    return json.dumps(entry(seq, tool, args, **fields))


def write_cassette(path: Path, *records: dict | str, end: str = "\n") -> Path:
    """Write records (dicts are dumped as JSON, strings written as they are), one a line."""
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + end for r in records)
    path.write_text(text, encoding="utf-8")
    return path


def make_cassette(calls: Iterable[tuple[str, Any, Any]]) -> Cassette:
    """An in-memory cassette from (tool, args, response) triples, seqs 1..n."""
    entries = []
    for seq, (tool, args, response) in enumerate(calls, 1):
        if isinstance(response, dict) and "__error__" in response:
            err = {"type": "ToolError", "message": response["__error__"]}
            entries.append(Entry(seq, tool, args, error=err))
        else:
            entries.append(Entry(seq, tool, args, response))
    return Cassette.from_entries(entries)


def call_records(run: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """Entries for ``run``, a list of ``(tool, args value, response kind)``: kinds 0-2 a
    value ``{"status": 200, "v": kind}``, 3 a 429, 4 an error entry; seqs from 1."""
    records = []
    for seq, (tool, arg, kind) in enumerate(run, 1):
        if kind == 4:
            records.append(entry(seq, tool, {"q": arg}, error={"type": "E", "message": "m"}))
        elif kind == 3:
            records.append(entry(seq, tool, {"q": arg}, response={"status": 429}))
        else:
            records.append(entry(seq, tool, {"q": arg}, response={"status": 200, "v": kind}))
    return records
