"""The app's first look at two large files, drawn from the index alone, against the exact
diff (issue 31).

The first rows come from the files' first lines (``load_head``), by seq, with statuses from
the keys and the responses' bytes (``bytes_only``: no response parsed). These hold, over
random pairs of files: the first lines' rows are the first rows of the whole files' (the
same entries, keys and statuses); a status from the bytes is the exact status wherever
the bytes decide it, and where they cannot (same call, responses stored differently) it
is provisional, and the exact status there is ``same`` or ``response_drift``; the
provisional rows refined one by one give the exact statuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.diff.align import SeqRows, seq_statuses
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format import _readahead as readahead
from cassette_tui.core.format.cassette import dump_record, load, load_head
from cassette_tui.core.format.outcome import same_outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: a call: a tool and its args, few enough that runs share calls
_calls = st.tuples(st.sampled_from(["search", "read"]), st.sampled_from([{"q": 1}, {"q": 2}]))
#: an answer: the same value written two ways happens (spaced, compact), and errors
_answers = st.one_of(
    st.sampled_from([{"hits": 1}, {"hits": 2}, {"hits": 1.0}, [1, 2], "text", None]),
    st.just({"__error__": "boom"}),
)
_entries = st.lists(st.tuples(_calls, _answers, st.booleans()), max_size=30)


def _write(path: Path, entries: list[tuple[tuple[str, dict], Any, bool]]) -> Path:
    with path.open("wb") as fh:
        for seq, ((tool, args), answer, spaced) in enumerate(entries, 1):
            record: dict[str, Any] = {"seq": seq, "tool": tool, "args": args}
            if isinstance(answer, dict) and "__error__" in answer:
                record["error"] = {"type": "ToolError", "message": answer["__error__"]}
            else:
                record["response"] = answer
            line = json.dumps(record).encode() + b"\n" if spaced else dump_record(record)
            fh.write(line)
    return path


def _pair(tmp_path: Path, a: list, b: list) -> tuple[Path, Path]:
    return _write(tmp_path / "a.jsonl", a), _write(tmp_path / "b.jsonl", b)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=_entries, b=_entries, head=st.integers(min_value=1, max_value=3000),
       chunk=st.integers(min_value=64, max_value=4096))  # fmt: skip
def test_first_rows_from_the_index_are_the_exact_rows_once_refined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, a: list, b: list, head: int, chunk: int
) -> None:
    monkeypatch.setattr(readahead, "CHUNK", chunk)
    pa, pb = _pair(tmp_path, a, b)
    whole_a, whole_b = load(pa, keys=True), load(pb, keys=True)
    head_a, head_b = load_head(pa, max_bytes=head), load_head(pb, max_bytes=head)

    # the first lines are the first entries of the whole files, with the same keys
    for first, whole in ((head_a, whole_a), (head_b, whole_b)):
        n = len(first)
        assert n <= len(whole)
        assert [first.key(i) for i in range(n)] == [whole.key(i) for i in range(n)]
        assert first.response_hashes() == whole.response_hashes()[:n]

    # cut to what both hold (the app's first rows): the same first entries and keys
    both = min(len(head_a), len(head_b))
    for first in (head_a, head_b):
        cut = first.first(both)
        assert len(cut) == both and [cut.key(i) for i in range(both)] == [
            first.key(i) for i in range(both)
        ]
        assert cut.response_hashes() == first.response_hashes()[:both]
        assert [cut[i] for i in range(both)] == [first[i] for i in range(both)]

    # the first look's rows are the first rows of the whole files' first look
    first_look = SeqRows(head_a, head_b, exact=False, bytes_only=True)
    whole_look = SeqRows(whole_a, whole_b, exact=False, bytes_only=True)
    assert first_look.statuses[:both] == whole_look.statuses[:both]
    assert [(r.a, r.b) for r in first_look[:both]] == [(r.a, r.b) for r in whole_look[:both]]

    # from the bytes: exact where they decide, provisional where they cannot
    exact = seq_statuses(whole_a, whole_b)
    provisional = set(whole_look.provisional)
    for i, status in enumerate(whole_look.statuses):
        if i in provisional:
            assert status is Status.RESPONSE_DRIFT
            assert exact[i] in (Status.SAME, Status.RESPONSE_DRIFT)
        else:
            assert status is exact[i]

    # refined row by row (the exact comparison of each provisional pair): the exact statuses
    refined = list(whole_look.statuses)
    for i in provisional:
        same = same_outcome(whole_a, i, whole_b, i)
        refined[i] = Status.SAME if same else Status.RESPONSE_DRIFT
    assert refined == exact

    # and the first divergence it shows is the exact one's unless the refinement moves it
    # on (a provisional row found equal, or quiet: metadata, float noise)
    shown = diff_cassettes(whole_a, whole_b, "seq", exact=False, bytes_only=True)
    final = diff_cassettes(whole_a, whole_b, "seq")
    if shown.first_divergence is None:
        assert final.first_divergence is None
    elif final.first_divergence is not None:
        assert shown.first_divergence <= final.first_divergence


def test_a_first_look_parses_no_response(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first look reads no entry: every status comes from the keys and the bytes."""
    from cassette_tui.core.format._view import Cassette

    calls = [(("search", {"q": 1}), {"hits": i}, False) for i in range(50)]
    pa, pb = _pair(tmp_path, calls, [(c, {"hits": -1}, s) for c, _, s in calls])
    head_a, head_b = load_head(pa), load_head(pb)

    def refuse(self: Cassette, i: int, raw: bytes | None = None) -> None:
        raise AssertionError(f"entry {i} parsed")

    monkeypatch.setattr(Cassette, "_parse_entry", refuse)
    result = diff_cassettes(head_a, head_b, "seq", exact=False, bytes_only=True)
    assert not result.exact and result.first_divergence == 0
    assert result.counts[Status.RESPONSE_DRIFT] == 50
