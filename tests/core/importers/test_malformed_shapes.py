"""A file in the outline of a framework's format with a value of another type inside (a
number where a list of spans or tool calls is, a number as a run id) is refused with an
error naming the file, never a traceback, whether the format is detected or forced."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core.format.errors import CassetteFormatError
from cassette_tui.core.importers.sources import open_cassette

#: format -> a document of that format's outline with one value of the wrong type
MALFORMED: dict[str, object] = {
    "otel": {"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": 5}]}]}]},
    "smolagents": [{"step_number": 1, "tool_calls": 5, "observations": "x"}],
    "langchain": [{"type": "ai", "data": {"content": "", "tool_calls": 5}}],
    "pydantic-ai": [
        {"kind": "request", "parts": [], "run_id": 5},
        {"kind": "request", "parts": [], "run_id": "a"},
    ],
}


@pytest.mark.parametrize(("case", "fmt"), [(c, f) for c in MALFORMED for f in (None, c)], ids=str)
def test_malformed_value_is_a_format_error_naming_the_file(
    tmp_path: Path, case: str, fmt: str | None
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(MALFORMED[case]))
    with pytest.raises(CassetteFormatError) as caught:
        open_cassette(path, fmt=fmt)
    assert caught.value.path == str(path)
    assert "malformed" in caught.value.reason


def test_cli_import_exits_2_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(MALFORMED["otel"]))
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cassette_tui.tui.cli",
            "import",
            "--from",
            "otel",
            str(path),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "spans.json" in done.stderr and "malformed otel file" in done.stderr
    assert not out.exists()
