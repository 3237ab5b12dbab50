"""Parallel calls (issue 24): seq is the order calls were issued, whatever order they
finish in; calls that overlapped carry ``batch``; a key recorded twice in parallel is
served in issue order, each call its own recorded answer. Completion order is forced with
events, never with sleeps, so nothing here depends on timing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cassette_tui.core import Recorder, Replayer, load
from cassette_tui.core.format.constants import BATCH_FIELD
from cassette_tui.core.scan.lint import lint
from hypothesis import given, settings
from hypothesis import strategies as st


def _reverse_finisher(n: int):
    """An async dispatcher whose ``n`` calls all start before any returns, and return in
    reverse issue order (call k waits for call k+1 to finish); later calls return at once."""
    issued: list[int] = []
    done = [asyncio.Event() for _ in range(n + 1)]
    done[n].set()
    all_in = asyncio.Event()

    async def live(tool: str, args: dict) -> dict:
        k = len(issued)
        issued.append(k)
        if k >= n:
            return {"answer": k}
        if len(issued) == n:
            all_in.set()
        await all_in.wait()
        await done[k + 1].wait()
        done[k].set()
        return {"city": args["city"], "answer": k}

    return live


def test_gather_finishing_in_reverse_keeps_issue_order(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    cities = ["Lisbon", "Oslo", "Cairo"]

    async def run(dispatch) -> list[dict]:
        answers = await asyncio.gather(*(dispatch("get_weather", {"city": c}) for c in cities))
        await dispatch("summarize", {"n": 3})
        return answers

    with Recorder(path) as rec:
        dispatch = rec.wrap(_reverse_finisher(3))
        answers = asyncio.run(run(dispatch))
    assert [a["answer"] for a in answers] == [0, 1, 2]
    on_disk = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    # written as they finished (a crash loses only calls in flight), numbered as issued
    assert [(r["seq"], r["args"].get("city")) for r in on_disk[:3]] == [
        (3, "Cairo"),
        (2, "Oslo"),
        (1, "Lisbon"),
    ]
    cassette = load(path)
    assert [(e.seq, e.args.get("city")) for e in cassette] == [
        (1, "Lisbon"),
        (2, "Oslo"),
        (3, "Cairo"),
        (4, None),
    ]
    assert [e.extra.get(BATCH_FIELD) for e in cassette] == [1, 1, 1, None]
    assert [cassette.line(i) for i in range(4)] == [3, 2, 1, 4]
    assert lint(cassette) == []  # lines in completion order are no finding


def test_a_sequential_run_has_no_batch_field(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Recorder(path) as rec:
        dispatch = rec.wrap(lambda tool, args: args)
        for i in range(3):
            dispatch("t", {"i": i})
    assert all(BATCH_FIELD not in e.extra for e in load(path))
    assert b'"batch"' not in path.read_bytes()


def test_threads_finishing_in_reverse_keep_issue_order(tmp_path: Path) -> None:
    """On a ``ThreadPoolExecutor``: call 0 issues first and returns only after call 1
    has finished."""
    path = tmp_path / "run.jsonl"
    issued_0, finished_1 = threading.Event(), threading.Event()
    results: dict[int, dict] = {}

    def live(tool: str, args: dict) -> dict:
        if args["who"] == 0:
            issued_0.set()
            assert finished_1.wait(30)
        return {"who": args["who"]}

    with Recorder(path) as rec, ThreadPoolExecutor(max_workers=2) as pool:
        dispatch = rec.wrap(live)

        def worker(who: int) -> None:
            if who == 1:
                assert issued_0.wait(30)
            results[who] = dispatch("lookup", {"who": who})
            if who == 1:
                finished_1.set()

        for future in [pool.submit(worker, w) for w in (0, 1)]:
            future.result()
    assert results == {0: {"who": 0}, 1: {"who": 1}}
    on_disk = [json.loads(x)["seq"] for x in path.read_text(encoding="utf-8").splitlines()]
    assert on_disk == [2, 1]
    cassette = load(path)
    assert [(e.seq, e.args["who"], e.extra.get(BATCH_FIELD)) for e in cassette] == [
        (1, 0, 1),
        (2, 1, 1),
    ]


def _same_key_twice(path: Path) -> None:
    """Record one key twice in parallel: the first issued answers ``first`` and finishes
    last."""
    order: list[str] = []
    second_done = asyncio.Event()

    async def live(tool: str, args: dict) -> str:
        mine = "first" if not order else "second"
        order.append(mine)
        if mine == "first":
            await second_done.wait()
        else:
            second_done.set()
        return mine

    async def run(dispatch) -> list[str]:
        return await asyncio.gather(dispatch("fetch", {"u": 1}), dispatch("fetch", {"u": 1}))

    with Recorder(path) as rec:
        assert asyncio.run(run(rec.wrap(live))) == ["first", "second"]


def test_same_key_in_parallel_replays_each_its_own_answer_under_gather(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _same_key_twice(path)
    assert [json.loads(x)["response"] for x in path.read_text().splitlines()] == [
        "second",
        "first",
    ]
    replay = Replayer(load(path))

    async def call(tool: str, args: dict) -> str:
        return replay(tool, args)

    async def run() -> list[str]:
        return await asyncio.gather(call("fetch", {"u": 1}), call("fetch", {"u": 1}))

    assert asyncio.run(run()) == ["first", "second"]
    assert replay.report()["unused_seqs"] == []


def test_same_key_in_parallel_replays_each_its_own_answer_under_threads(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _same_key_twice(path)
    replay = Replayer(load(path))
    first_issued = threading.Event()
    got: dict[int, str] = {}

    def worker(who: int) -> None:
        if who == 1:
            assert first_issued.wait(30)
        got[who] = replay("fetch", {"u": 1})
        if who == 0:
            first_issued.set()

    with ThreadPoolExecutor(max_workers=2) as pool:
        # the later call is submitted first: it still waits for the first one issued
        for future in [pool.submit(worker, w) for w in (1, 0)]:
            future.result()
    assert got == {0: "first", 1: "second"}


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=2, max_value=7).flatmap(lambda n: st.permutations(range(n))))
def test_any_completion_order_loads_in_issue_order(finish: list[int]) -> None:
    """Whatever order ``n`` overlapping calls finish in, the file holds them in that order
    and the load gives seqs 1..n in issue order, each with its own answer and one batch."""
    n = len(finish)
    turn = {k: finish.index(k) for k in range(n)}

    async def run(dispatch) -> list[int]:
        cond = asyncio.Condition()
        state = {"issued": 0, "next": 0}

        async def live(tool: str, args: dict) -> int:
            async with cond:
                state["issued"] += 1
                cond.notify_all()
                await cond.wait_for(
                    lambda: state["issued"] == n and state["next"] == turn[args["k"]]
                )
                state["next"] += 1
                cond.notify_all()
            return args["k"] * 10

        recorded = dispatch(live)
        return await asyncio.gather(*(recorded("t", {"k": k}) for k in range(n)))

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        with Recorder(path) as rec:
            assert asyncio.run(run(rec.wrap)) == [k * 10 for k in range(n)]
        on_disk = [json.loads(x)["args"]["k"] for x in path.read_text().splitlines()]
        assert on_disk == finish
        cassette = load(path)
        assert [(e.seq, e.args["k"], e.response) for e in cassette] == [
            (k + 1, k, k * 10) for k in range(n)
        ]
        assert {e.extra[BATCH_FIELD] for e in cassette} == {1}


def test_a_cancelled_call_leaves_no_batch_behind(tmp_path: Path) -> None:
    """A call cancelled in flight is out of flight: the next call, alone, has no mark."""
    path = tmp_path / "run.jsonl"

    async def live(tool: str, args: dict) -> str:
        if tool == "slow":
            await asyncio.Event().wait()  # never returns: cancelled below
        return tool

    async def run(dispatch) -> str:
        task = asyncio.create_task(dispatch("slow", {}))
        await asyncio.sleep(0)  # let it start: it is in flight now
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return await dispatch("after", {})

    with Recorder(path) as rec:
        assert asyncio.run(run(rec.wrap(live))) == "after"
    after = [e for e in load(path) if e.tool == "after"]
    assert len(after) == 1 and BATCH_FIELD not in after[0].extra


@settings(max_examples=60, deadline=None)
@given(
    turns=st.lists(
        st.integers(min_value=1, max_value=4).flatmap(lambda n: st.permutations(range(n))),
        min_size=1,
        max_size=4,
    ),
    retried=st.booleans(),
)
def test_calls_with_slots_follow_the_model_order_whatever_order_they_run_in(
    turns: list[list[int]], retried: bool
) -> None:
    """Model turns whose calls run one after another in any order (``turns``: the order
    each turn's calls ran in): with their slots (``replay/turn.py``), each turn's calls
    have consecutive seqs in the model's order, one ``batch`` (the turn's first seq) when
    the turn has several calls and none when it has one; a retried slot takes the next
    seq. Without slots the same run was numbered in run order and never batched."""
    from cassette_tui.core.replay.turn import CALL_SLOT, CallSlot

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "turns.jsonl"
        expected: list[tuple[int, str, int | None]] = []
        with Recorder(path) as recorder:
            dispatch = recorder.wrap(lambda tool, args: {"ok": args["i"]})
            seq = 0
            for t, order in enumerate(turns):
                count, first = len(order), seq + 1
                for i in order:
                    token = CALL_SLOT.set(CallSlot(("turn", t), i, count))
                    try:
                        dispatch(f"t{t}", {"i": i})
                    finally:
                        CALL_SLOT.reset(token)
                expected += [
                    (first + i, f"t{t}", first if count > 1 else None) for i in range(count)
                ]
                seq += count
                if retried:  # the turn's first call again: after the turn, in its batch
                    token = CALL_SLOT.set(CallSlot(("turn", t), 0, count))
                    try:
                        dispatch(f"t{t}", {"i": 0})
                    finally:
                        CALL_SLOT.reset(token)
                    seq += 1
                    expected.append((seq, f"t{t}", first if count > 1 else None))
        got = [(e.seq, e.tool, e.extra.get(BATCH_FIELD)) for e in load(path)]
        assert got == expected
        assert [e.args["i"] for e in load(path) if e.seq <= len(turns[0])] == sorted(turns[0])
