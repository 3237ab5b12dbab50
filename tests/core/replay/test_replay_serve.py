"""``Replayer.serve``: the entry that answers a call, logged and counted as ``__call__``
does, without raising a recorded error nor rebuilding its class."""

from __future__ import annotations

import warnings

import pytest
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.format.errors import CassetteMiss, ReplayExhausted, ToolError
from cassette_tui.core.replay.replayer import Replayer


def _cassette() -> Cassette:
    return Cassette.from_entries(
        [
            Entry(1, "reject", {"r": 1}, error={"type": "NoSuchClass", "message": "no",
                                                "module": "no.such.module"}),
            Entry(2, "echo", {"t": "hi"}, response={"text": "hi"}),
        ]
    )  # fmt: skip


def test_serve_returns_the_error_entry_without_raising_or_warning() -> None:
    replayer = Replayer(_cassette())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ToolErrorClassWarning: no class is rebuilt
        entry = replayer.serve("reject", {"r": 1})
    assert entry.seq == 1 and entry.error == {
        "type": "NoSuchClass",
        "message": "no",
        "module": "no.such.module",
    }
    assert replayer.serve("echo", {"t": "hi"}).response == {"text": "hi"}
    report = replayer.report()
    assert [c["outcome"] for c in report["calls"]] == ["error", "hit"]
    assert report["used"] == 2 and report["unused_seqs"] == []


def test_serve_raises_misses_and_exhaustion_like_a_call() -> None:
    replayer = Replayer(_cassette())
    with pytest.raises(CassetteMiss):
        replayer.serve("echo", {"t": "bye"})
    replayer.serve("echo", {"t": "hi"})
    with pytest.raises(ReplayExhausted):
        replayer.serve("echo", {"t": "hi"})


def test_a_call_still_raises_the_recorded_error() -> None:
    replayer = Replayer(_cassette())
    with pytest.warns(UserWarning), pytest.raises(ToolError, match="no"):
        replayer("reject", {"r": 1})
