"""An MCP tool result with ``"isError": true`` is an error outcome for the engine: the
diff's error marks, the diagnosis and the app's ``!`` read it like a recorded error."""

from __future__ import annotations

import pytest
from cassette_tui.core.diff._diagnose import diagnose
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.outcome import is_error_outcome
from support.factory import make_cassette

FAILED = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
OK = {"content": [{"type": "text", "text": "written"}], "isError": False}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (FAILED, True),
        (OK, False),
        ({"content": []}, False),  # isError absent means false (MCP schema default)
        ({"isError": "true"}, False),  # only the JSON boolean counts
        ({"isError": False, "status": 503}, True),  # an HTTP status still counts
    ],
)
def test_mcp_is_error_result(response, expected) -> None:
    assert is_error_outcome(False, response) is expected


def test_diff_marks_and_diagnoses_an_is_error_result() -> None:
    a = make_cassette([("write_file", {"path": "a"}, FAILED)])
    b = make_cassette([("write_file", {"path": "a"}, OK)])
    result = diff_cassettes(a, b)
    (row,) = result.rows
    assert row.error_a and not row.error_b
    messages = " ".join(f.message for f in diagnose(result))
    assert "MCP isError" in messages and "disk full" in messages
