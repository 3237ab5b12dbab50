"""The app's typed state and its workers: the session, statuses from the bytes refined by
the exact diff, a core job's progress in the header and escape stopping it, ``n`` answered
from an index, and the keymap's screen table built from the screen classes."""

from __future__ import annotations

import threading
from collections.abc import Generator
from pathlib import Path

import pytest
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.result import DiffResult, diff_cassettes
from cassette_tui.core.format.jobs import CancelToken, Progress
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.keymap import keymap_problem, screens
from cassette_tui.tui.screens.bisect import BisectScreen
from cassette_tui.tui.screens.gate import GateScreen
from cassette_tui.tui.screens.help import HelpScreen
from cassette_tui.tui.screens.loop import LoopScreen
from cassette_tui.tui.screens.loop_pair import LoopPairScreen
from cassette_tui.tui.screens.no_agent import NoAgentScreen
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.pin import PinScreen
from cassette_tui.tui.screens.replay import MissScreen, ReplayScreen
from cassette_tui.tui.screens.rerecord import RerecordScreen
from cassette_tui.tui.screens.select import SelectScreen
from cassette_tui.tui.screens.single import SingleScreen
from cassette_tui.tui.screens.step import StepScreen
from cassette_tui.tui.session import Session
from cassette_tui.tui.text.rows import PairRows
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, make_cassette, write_cassette
from support.pilot import notes, screen_text, settle, sync

SIZE = (80, 24)
#: more pairs than the engine compares one by one: the first screen takes the bytes' word
MANY = 2_600


def _byte_different_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A and B with the same calls; every B response differs from A's in its bytes, but
    only the odd rows differ in value (the even ones list the same keys in another order).
    Row 0 is one of the same-valued ones: the bytes put the first divergence on row 0,
    the exact diff on row 1."""
    a_records, b_records = [], []
    for i in range(MANY):
        response = {"hits": i, "top": f"doc-{i}"}
        a_records.append(entry(i + 1, args={"q": f"q{i}"}, response=response))
        # odd rows: another value; even rows: the same value in other bytes
        changed = {"hits": i, "top": "other"} if i % 2 else {"top": f"doc-{i}", "hits": i}
        b_records.append(entry(i + 1, args={"q": f"q{i}"}, response=changed))
    return (
        write_cassette(tmp_path / "a.jsonl", *a_records),
        write_cassette(tmp_path / "b.jsonl", *b_records),
    )


def test_the_engine_can_answer_from_the_bytes_first(tmp_path: Path) -> None:
    a_path, b_path = _byte_different_pair(tmp_path)
    a, b = open_cassette(a_path), open_cassette(b_path)
    quick = diff_cassettes(a, b, exact=False)
    exact = diff_cassettes(a, b)
    assert not quick.exact and exact.exact
    assert quick.first_divergence == 0 and exact.first_divergence == 1
    assert quick.counts[Status.RESPONSE_DRIFT] == MANY
    assert exact.counts[Status.RESPONSE_DRIFT] == MANY // 2
    # a small pair is exact at once, whatever was asked
    small = diff_cassettes(
        make_cassette([("t", {}, 1)]), make_cassette([("t", {}, 2)]), exact=False
    )
    assert small.exact


@sync
async def test_statuses_from_the_bytes_are_replaced_by_the_exact_ones(tmp_path: Path) -> None:
    a_path, b_path = _byte_different_pair(tmp_path)
    app = CassetteApp(open_cassette(a_path), open_cassette(b_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen) and screen.result is not None
        assert screen.result.exact
        assert app.session.cached_diff("seq") is screen.result
        statuses = [row.status for row in screen.result.rows]
        assert statuses == [row.status for row in diff_cassettes(*app.session.pair()).rows]
        # the cursor was never moved: it goes to the exact first divergence
        assert screen.steps.cursor == 1
        text = screen_text(app)
        assert "statuses from the bytes" not in text
        assert f"{MANY // 2}~" in text
        # n walks the exact differences: every odd row
        await pilot.press("n")
        await settle(pilot)
        assert screen.steps.cursor == 3


def _held_job(started: threading.Event) -> object:
    """A stand-in for ``Session.diff_job`` that reports progress, then holds until its
    token is cancelled (so that the test, not the machine's speed, decides when escape
    lands)."""

    def job(self: Session, align: str, token: CancelToken) -> Generator[Progress, None, DiffResult]:
        yield Progress("outcomes", 0, 2, "files", "a.jsonl")
        started.set()
        token.wait(10)
        token.raise_if_cancelled()
        raise AssertionError("escape did not cancel the job")

    return job


@sync
async def test_a_job_shows_its_progress_and_escape_stops_it(
    samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    monkeypatch.setattr(Session, "diff_job", _held_job(started))
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    app = CassetteApp(a, b, align="key")
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if started.is_set() and "escape stops" in screen_text(app):
                break
        text = screen_text(app)
        assert "reading every response (0/2 files) a.jsonl" in text
        assert "escape stops" in text
        await pilot.press("escape")
        await settle(pilot)
        assert "diff by key stopped" in notes(app)
        screen = app.screen
        assert isinstance(screen, PairScreen)
        # never an empty screen: the rows by seq (tests/tui/test_diff_stopped.py)
        assert screen.result is not None and screen.result.align == "seq"
        assert not screen.steps.loading


def test_the_diff_job_reports_each_stage_and_stops_when_cancelled(samples: Path) -> None:
    from cassette_tui.core.diff.result import diff_job
    from cassette_tui.core.format.jobs import Cancelled, run_job

    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    events: list[Progress] = []
    result = run_job(diff_job(a, b, "key"), events.append)
    stages = [e.stage for e in events]
    assert stages.index("keys") < stages.index("outcomes") < stages.index("align")
    assert events[-1].stage == "align" and events[-1].done == events[-1].total
    assert result.exact and result.rows == diff_cassettes(a, b, "key").rows
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        run_job(diff_job(a, b, "seq", token))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["x", "y"]), min_size=0, max_size=40),
    st.lists(st.sampled_from(["x", "y"]), min_size=0, max_size=40),
    st.integers(min_value=0, max_value=45),
)
def test_n_answers_from_the_index_as_a_walk_would(a_tools, b_tools, start) -> None:
    a = make_cassette([(tool, {"q": 1}, {"r": i % 3}) for i, tool in enumerate(a_tools)])
    b = make_cassette([(tool, {"q": 1}, {"r": i % 2}) for i, tool in enumerate(b_tools)])
    for align in ("seq", "key"):
        rows = PairRows(diff_cassettes(a, b, align))
        n = len(rows)
        cursor = min(start, max(n - 1, 0))  # the step list keeps its cursor on a row
        for direction in (1, -1):
            walk = range(cursor + direction, n if direction > 0 else -1, direction)
            expected = next((i for i in walk if rows.notable(i)), None)
            assert rows.next_notable(cursor, direction) == expected


def test_the_keymap_checks_every_screen_class() -> None:
    table = screens()
    assert set(table) == {
        cls.KEYMAP_NAME
        for cls in (
            PairScreen,
            SingleScreen,
            StepScreen,
            HelpScreen,
            SelectScreen,
            PinScreen,
            LoopScreen,
            RerecordScreen,
            ReplayScreen,
            MissScreen,
            GateScreen,
            BisectScreen,
            NoAgentScreen,
            LoopPairScreen,
        )
    }
    assert all(table.values())
    problem = keymap_problem({"step.expand": "n"})
    assert problem is not None and "on the step screen" in problem


def test_the_session_forgets_the_diffs_of_other_runs(samples: Path) -> None:
    a, b = open_cassette(samples / "fail.jsonl"), open_cassette(samples / "fix.jsonl")
    session = Session(a, b)
    first = session.quick_diff("seq")
    assert first.exact and session.cached_diff("seq") is first
    session.loop.gate = "verdict"
    session.open_runs(b, a)
    assert session.cached_diff("seq") is None and session.loop.gate is None
    assert session.pair() == (b, a)
    with pytest.raises(ValueError, match="align"):
        Session(a, b, align="diagonal")
    with pytest.raises(ValueError, match="two cassettes"):
        Session(a).pair()


def test_the_app_is_typed_without_attr_defined_escapes() -> None:
    """Screens reach the app's state through typed attributes (``AppScreen.app``, the
    ``Session``), so mypy (``make lint``: ``mypy core tui``) sees every use: no
    ``type: ignore[attr-defined]`` is left in tui/."""
    root = Path(__file__).resolve().parents[2] / "tui"
    escapes = [
        f"{path.relative_to(root.parent)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore[attr-defined]" in line
    ]
    assert escapes == []


@sync
async def test_auto_alignment_picks_key_for_an_inserted_step_and_a_toggles() -> None:
    """``cassette-tui A B`` aligns with ``auto``: an extra lookup in A (B's call comes one
    step later in A) opens by key, with A's extra step as the first divergence; ``a``
    still toggles to seq; a pair picked later chooses again."""
    calls = [("get", {"id": x}, {"r": x}) for x in ("x", "y")] + [("pay", {"id": "y"}, {"ok": 1})]
    a = make_cassette(calls)
    b = make_cassette(calls[1:])
    app = CassetteApp(a, b, align="auto")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PairScreen) and screen.result is not None
        assert app.session.align == "key" and screen.result.align == "key"
        assert app.session.align_reason and "A makes 1 extra call" in app.session.align_reason
        row = screen.result.rows[screen.steps.cursor]
        assert row.status is Status.ONLY_A and row.a_seq == 1
        assert "by key (auto)" in screen_text(app)
        await pilot.press("a")
        await settle(pilot)
        assert app.session.align == "seq" and screen.result.align == "seq"
        assert not app.session.align_auto
    session = Session(b, a, align="auto")
    assert session.resolve_align() == "key"
    session.open_runs(a, a)  # another pair: chosen again, for it
    assert session.align_auto and session.resolve_align() == "seq"
    assert "same calls" in (session.align_reason or "")


def test_set_align_sets_the_three_alignment_fields_together() -> None:
    """``Session.set_align``: the one writer of ``align``, ``align_auto`` and
    ``align_reason`` from outside the session; the reason ``auto`` gave stays with the
    alignment it chose and goes with any other."""
    calls = [("get", {"id": x}, {"r": x}) for x in ("x", "y")] + [("pay", {"id": "y"}, {"ok": 1})]
    a, b = make_cassette(calls), make_cassette(calls[1:])
    session = Session(a, b, align="auto")
    session.set_align("key")  # settled before auto chose: no reason to keep
    assert (session.align, session.align_auto, session.align_reason) == ("key", False, None)
    session = Session(a, b, align="auto")
    assert session.resolve_align() == "key" and session.align_reason
    session.set_align("key")  # a stopped diff fell back to the alignment auto chose
    assert session.align == "key" and not session.align_auto and session.align_reason
    session.set_align("seq")  # the user chose the other one
    assert (session.align, session.align_auto, session.align_reason) == ("seq", False, None)
    with pytest.raises(ValueError):
        session.set_align("auto")  # type: ignore[arg-type]
