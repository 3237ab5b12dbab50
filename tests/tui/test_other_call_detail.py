"""The detail pane of a by-seq row where the two runs call different tools shows the two
calls side by side, never one tool's args as drift of the other's
(tests/core/diff/test_blame.py holds the row)."""

from __future__ import annotations

from cassette_tui.core import diff_cassettes
from cassette_tui.tui.text.detail import Limits, pair_detail
from rich.console import Console
from support.cases import other_call_pair


def test_detail_pane_puts_the_two_calls_side_by_side() -> None:
    a, b = other_call_pair()
    d = diff_cassettes(a, b, "seq")
    console = Console(width=100, record=True, color_system=None)
    console.print(pair_detail(d, 1, d.drift(1), Limits(), {}))
    text = console.export_text()
    assert "search_direct ≠ search_onestop" in text
    assert "two different calls at this step, side by side" in text
    assert "A search_direct args" in text and "B search_onestop args" in text
    assert "drift (" not in text and "no drift" not in text
    console = Console(width=100, record=True, color_system=None)
    console.print(pair_detail(d, 2, d.drift(2), Limits(), {}))  # same tool: drift as ever
    assert "drift (" in console.export_text()
