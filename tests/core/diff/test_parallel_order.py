"""Diff of runs whose parallel calls were issued or finished in another order (issue 24):
the calls the recorder marked as overlapping (``batch``) pair with each other, so a
flaky answer shows as response drift side by side, never as a call only one run made."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from cassette_tui.core import Recorder, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import diff_cassettes
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, write_cassette

ONE_SIDED = {Status.ONLY_A, Status.ONLY_B}


def record(path: Path, cities: list[str], finish: list[int], temps: dict[str, int]) -> Path:
    """Record one turn with the real recorder: ``get_weather`` for each city issued at once
    (``asyncio.gather``, in the order given), finishing in the order ``finish`` (positions
    in ``cities``), then a ``summarize`` call."""
    n = len(cities)
    turn = {k: finish.index(k) for k in range(n)}

    async def run(dispatch) -> None:
        cond = asyncio.Condition()
        state = {"issued": 0, "next": 0}

        async def live(tool: str, args: dict) -> dict:
            if tool == "summarize":
                return {"ok": True}
            k = cities.index(args["city"])
            async with cond:
                state["issued"] += 1
                cond.notify_all()
                await cond.wait_for(lambda: state["issued"] == n and state["next"] == turn[k])
                state["next"] += 1
                cond.notify_all()
            return {"temp_c": temps[args["city"]]}

        recorded = dispatch(live)
        await asyncio.gather(*(recorded("get_weather", {"city": c}) for c in cities))
        await recorded("summarize", {"n": n})

    with Recorder(path) as rec:
        asyncio.run(run(rec.wrap))
    return path


TEMPS = {"Lisbon": 21, "Oslo": 4, "Cairo": 33}
CITIES = list(TEMPS)


@pytest.mark.parametrize("align", ["auto", "seq", "key"])
def test_another_completion_order_and_a_flaky_answer_is_drift_side_by_side(
    tmp_path: Path, align: str
) -> None:
    """Both runs issue the same calls; A's finish in reverse, B's in order, and Oslo's
    answer changed: seq is the issue order, so the calls line up whatever the alignment."""
    a = record(tmp_path / "a.jsonl", CITIES, [2, 1, 0], TEMPS)
    b = record(tmp_path / "b.jsonl", CITIES, [0, 1, 2], {**TEMPS, "Oslo": 5})
    result = diff_cassettes(load(a), load(b), align)
    assert not {r.status for r in result.rows} & ONE_SIDED
    drift = [r for r in result.rows if r.status is Status.RESPONSE_DRIFT]
    assert [(r.a_seq, r.b_seq, r.tool) for r in drift] == [(2, 2, "get_weather")]
    assert [r.status for r in result.rows] == [
        Status.SAME,
        Status.RESPONSE_DRIFT,
        Status.SAME,
        Status.SAME,
    ]


@pytest.mark.parametrize("align", ["auto", "seq", "key"])
def test_another_issue_order_and_a_flaky_answer_is_drift_side_by_side(
    tmp_path: Path, align: str
) -> None:
    """B issued the same parallel calls in another order (a thread pool's workers start in
    any order) and Oslo's answer changed: each call pairs with its twin."""
    a = record(tmp_path / "a.jsonl", CITIES, [0, 1, 2], TEMPS)
    b = record(tmp_path / "b.jsonl", ["Cairo", "Lisbon", "Oslo"], [2, 0, 1], {**TEMPS, "Oslo": 5})
    result = diff_cassettes(load(a), load(b), align)
    statuses = [r.status for r in result.rows]
    assert not set(statuses) & ONE_SIDED, statuses
    pairs = {(r.a_seq, r.b_seq): r.status for r in result.rows}
    assert pairs[(2, 3)] is Status.RESPONSE_DRIFT  # Oslo beside Oslo
    # the key alignment pairs one of the same calls as an anchor (``same``)
    assert {pairs[(1, 2)], pairs[(3, 1)]} <= {Status.MOVED, Status.SAME}
    assert pairs[(4, 4)] is Status.SAME
    first = result.findings[0]
    assert first.kind == "first_divergence"
    assert first.evidence["parallel_order"] is True
    assert "issued their parallel calls in another order" in first.message
    assert "did not" not in first.action


def test_same_tool_other_args_in_a_batch_pair_as_args_drift(tmp_path: Path) -> None:
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "w", {"c": "L"}, response=21, batch=1),
        entry(2, "w", {"c": "O", "day": 1}, response=4, batch=1),
        entry(3, "s", {"t": 1}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "w", {"c": "O", "day": 2}, response=4, batch=1),
        entry(2, "w", {"c": "L"}, response=21, batch=1),
        entry(3, "s", {"t": 1}),
    )
    for align in ("seq", "key", "auto"):
        result = diff_cassettes(load(a), load(b), align)
        pairs = {(r.a_seq, r.b_seq): r.status for r in result.rows}
        assert pairs.keys() == {(1, 2), (2, 1), (3, 3)}, (align, pairs)
        assert pairs[(2, 1)] is Status.ARGS_DRIFT and pairs[(3, 3)] is Status.SAME
        assert pairs[(1, 2)] in (Status.MOVED, Status.SAME)  # key alignment: an anchor


def test_unmarked_calls_are_not_paired_across_positions(tmp_path: Path) -> None:
    """Without the recorder's mark the diff claims no parallel order (an old cassette)."""
    rows = [("L", 21), ("O", 4)], [("O", 5), ("L", 21)]
    paths = [
        write_cassette(
            tmp_path / f"{side}.jsonl",
            *(entry(k + 1, "w", {"c": c}, response=t) for k, (c, t) in enumerate(calls)),
        )
        for side, calls in zip("ab", rows, strict=True)
    ]
    result = diff_cassettes(load(paths[0]), load(paths[1]), "seq")
    assert {r.status for r in result.rows} == {Status.ARGS_DRIFT}


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=2, max_value=6).flatmap(
        lambda n: st.tuples(st.permutations(range(n)), st.integers(min_value=0, max_value=n - 1))
    ),
    st.sampled_from(["auto", "seq", "key"]),
)
def test_a_reordered_batch_with_one_changed_answer_pairs_every_call(
    case: tuple[list[int], int], align: str
) -> None:
    """Property: B issues A's batch in any order with one answer changed: every call pairs
    with its twin (no one-sided row), and exactly that call is response drift."""
    order, flaky = case
    n = len(order)
    calls = [(f"c{k}", k * 10) for k in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        a = write_cassette(
            Path(tmp) / "a.jsonl",
            *(entry(k + 1, "w", {"c": c}, response=t, batch=1) for k, (c, t) in enumerate(calls)),
            entry(n + 1, "s", {"t": 1}),
        )
        b_calls = [(calls[k][0], calls[k][1] + (1 if k == flaky else 0)) for k in order]
        b = write_cassette(
            Path(tmp) / "b.jsonl",
            *(entry(k + 1, "w", {"c": c}, response=t, batch=1) for k, (c, t) in enumerate(b_calls)),
            entry(n + 1, "s", {"t": 1}),
        )
        result = diff_cassettes(load(a), load(b), align)
    assert not {r.status for r in result.rows} & ONE_SIDED
    assert len(result.rows) == n + 1
    drift = [r for r in result.rows if r.status is Status.RESPONSE_DRIFT]
    assert [(r.a_seq, r.b_seq) for r in drift] == [(flaky + 1, order.index(flaky) + 1)]


@pytest.mark.parametrize("align", ["auto", "seq", "key"])
def test_a_reordered_batch_whose_answers_differ_in_metadata_only_is_the_same_run(
    tmp_path: Path, align: str
) -> None:
    """Paired across positions, a call whose answers differ only in a request id is
    ``metadata_drift`` (as it is at one position), so the runs are the same."""

    def answer(c: str, t: int, req: str) -> dict:
        return {"temp_c": t, "request_id": f"req_{req}{c}"}

    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "w", {"c": "L"}, response=answer("L", 21, "a1"), batch=1),
        entry(2, "w", {"c": "O"}, response=answer("O", 4, "a2"), batch=1),
        entry(3, "s", {"t": 1}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "w", {"c": "O"}, response=answer("O", 4, "b7"), batch=1),
        entry(2, "w", {"c": "L"}, response=answer("L", 21, "b8"), batch=1),
        entry(3, "s", {"t": 1}),
    )
    result = diff_cassettes(load(a), load(b), align)
    assert result.is_same and result.first_divergence is None
    assert {r.status for r in result.rows} <= {Status.SAME, Status.MOVED, Status.METADATA_DRIFT}
    assert Status.METADATA_DRIFT in {r.status for r in result.rows}
