"""Float noise is never the first divergence by itself when a real change follows (issue 10,
audit G3): without ``--tolerance``, a row whose numbers differ only within float32's epsilon
(relative) is passed over, but stays shown with its drift."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.refine import FLOAT_NOISE, numeric_drift
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import entry, make_cassette, write_cassette
from support.pilot import screen_text, settle, sync

# the same sum in another order: 0.1 + 0.2 + 0.3 vs 0.3 + 0.2 + 0.1 (one float64 ulp apart)
SUM_A, SUM_B = (0.1 + 0.2) + 0.3, (0.3 + 0.2) + 0.1
# 0.1 rounded once through float32 and printed as float64 (float32's half-ulp, relative)
F32 = 0.10000000149011612


def test_the_float_noise_examples_differ_and_are_within_the_bound() -> None:
    for x, y in ((SUM_A, SUM_B), (0.1, F32)):
        assert x != y and abs(x - y) <= FLOAT_NOISE * max(abs(x), abs(y))


def test_noise_then_a_real_change_parts_at_the_change() -> None:
    a = make_cassette([
        ("embed", {"t": 1}, {"v": [SUM_A, 0.5], "score": 0.1}),
        ("search", {"q": 1}, {"top": "a"}),
    ])  # fmt: skip
    b = make_cassette([
        ("embed", {"t": 1}, {"v": [SUM_B, 0.5], "score": F32}),
        ("search", {"q": 1}, {"top": "b"}),
    ])  # fmt: skip
    result = diff_cassettes(a, b)
    assert result.first_divergence == 1
    # the noise row is still shown, with its drift and its numbers line
    assert result.rows[0].status is Status.RESPONSE_DRIFT
    numbers = numeric_drift(result.drift(0))
    assert numbers is not None and numbers["count"] == 2
    assert diff_cassettes(a, b, align="key").first_divergence == 1


def test_noise_alone_is_still_the_first_divergence() -> None:
    a = make_cassette([("embed", {"t": 1}, {"v": [SUM_A]}), ("s", {"q": 1}, {"top": "a"})])
    b = make_cassette([("embed", {"t": 1}, {"v": [SUM_B]}), ("s", {"q": 1}, {"top": "a"})])
    result = diff_cassettes(a, b)
    assert result.first_divergence == 0 and not result.is_same
    assert result.rows[0].status is Status.RESPONSE_DRIFT


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (0.1000001, 0.1000003),  # 2e-6 relative: more than float32 rounds
        (1.0, 1.0 + 4 * FLOAT_NOISE),  # four float32 ulps
        (3, 4),  # integers that differ are a count, never noise
        (0.0, 1e-17),  # near zero nothing is noise
    ],
)
def test_numbers_above_the_bound_are_the_first_divergence(x: float, y: float) -> None:
    a = make_cassette([("m", {"r": 1}, {"score": x}), ("s", {"q": 1}, {"top": "a"})])
    b = make_cassette([("m", {"r": 1}, {"score": y}), ("s", {"q": 1}, {"top": "b"})])
    assert diff_cassettes(a, b).first_divergence == 0


def test_an_answer_change_beside_noise_is_not_noise() -> None:
    a = make_cassette([("m", {"r": 1}, {"score": SUM_A, "label": "cat"}), ("s", {}, {"t": 1})])
    b = make_cassette([("m", {"r": 1}, {"score": SUM_B, "label": "dog"}), ("s", {}, {"t": 2})])
    assert diff_cassettes(a, b).first_divergence == 0


def test_diff_cli_names_the_real_change_and_shows_the_noise(tmp_path: Path) -> None:
    pa = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "m", {"r": 1}, response={"score": SUM_A}),
        entry(2, "s", {"q": 1}, response={"top": "a"}),
    )
    pb = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "m", {"r": 1}, response={"score": SUM_B}),
        entry(2, "s", {"q": 1}, response={"top": "b"}),
    )
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "first divergence: row 2" in done.stdout  # the real change, not the noise
    assert "numbers: 1 differ" in done.stdout  # the noise row stays shown with its drift


# -- noise is not a stale recording (diagnose: stale_response) ---------------------------------
def _stale(findings: list) -> list:
    return [f for f in findings if f.kind == "stale_response"]


def _noise_and_real_pair(tmp_path: Path) -> tuple[Path, Path]:
    """embed answered with float noise only (rows 1 and 3), search with a real change (row
    2), embed with a real change too (row 4)."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "embed", {"t": 1}, response={"v": [SUM_A, 0.5], "score": 0.1}),
        entry(2, "search", {"q": 1}, response={"top": "a"}),
        entry(3, "embed", {"t": 2}, response={"v": [0.25, SUM_A]}),
        entry(4, "embed", {"t": 3}, response={"v": [0.5]}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "embed", {"t": 1}, response={"v": [SUM_B, 0.5], "score": F32}),
        entry(2, "search", {"q": 1}, response={"top": "b"}),
        entry(3, "embed", {"t": 2}, response={"v": [0.25, SUM_B]}),
        entry(4, "embed", {"t": 3}, response={"v": [0.75]}),
    )
    return a, b


def test_noise_rows_are_no_stale_response_and_real_changes_still_are(tmp_path: Path) -> None:
    from cassette_tui.core import load

    pa, pb = _noise_and_real_pair(tmp_path)
    result = diff_cassettes(load(pa), load(pb))
    stale = {f.evidence["tool"]: f for f in _stale(result.findings)}
    assert set(stale) == {"search", "embed"}
    # embed: only row 4 (a real change), never the noise rows 1 and 3
    assert stale["embed"].seqs == {"a": [4], "b": [4]}
    assert stale["embed"].evidence["steps"] == 1
    # the noise rows are still shown as response drift, with their numbers
    for row in (0, 2):
        assert result.rows[row].status is Status.RESPONSE_DRIFT
        assert numeric_drift(result.drift(row)) is not None


def test_noise_alone_is_no_stale_response_and_the_first_divergence_says_so() -> None:
    a = make_cassette([("embed", {"t": 1}, {"v": [SUM_A]}), ("s", {"q": 1}, {"top": "a"})])
    b = make_cassette([("embed", {"t": 1}, {"v": [SUM_B]}), ("s", {"q": 1}, {"top": "a"})])
    findings = diff_cassettes(a, b).findings
    assert not _stale(findings)
    first = findings[0]
    assert first.kind == "first_divergence" and "Only float noise" in first.message
    assert first.evidence["float_noise"] is True


@pytest.mark.parametrize(
    ("x", "y"),
    [(0.1000001, 0.1000003), (1.0, 1.0 + 4 * FLOAT_NOISE), (3, 4), (0.0, 1e-17)],
)
def test_numbers_above_the_bound_are_still_stale(x: float, y: float) -> None:
    a = make_cassette([("m", {"r": 1}, {"score": x})])
    b = make_cassette([("m", {"r": 1}, {"score": y})])
    findings = diff_cassettes(a, b).findings
    assert len(_stale(findings)) == 1 and "Only float noise" not in findings[0].message


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(
        st.floats(min_value=1e-6, max_value=1e6, allow_nan=False).filter(lambda v: v != 0),
        min_size=1,
        max_size=5,
    ),
    ulps=st.lists(st.integers(min_value=1, max_value=8), min_size=5, max_size=5),
)
def test_any_float_noise_is_never_stale(values: list[float], ulps: list[int]) -> None:
    # a few float64 ulps apart: far inside float32's epsilon, always noise
    noisy = [math.nextafter(v, math.inf) if n % 2 else v + n * math.ulp(v)
             for v, n in zip(values, ulps, strict=False)]  # fmt: skip
    a = make_cassette([("embed", {"t": 1}, {"v": values}), ("s", {}, {"t": 1})])
    b = make_cassette([("embed", {"t": 1}, {"v": noisy}), ("s", {}, {"t": 1})])
    result = diff_cassettes(a, b)
    assert not _stale(result.findings)
    if noisy != values:
        assert result.rows[0].status is Status.RESPONSE_DRIFT  # still shown


def test_diff_cli_raises_no_stale_response_for_noise(tmp_path: Path) -> None:
    pa, pb = _noise_and_real_pair(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    stale = {
        f["evidence"]["tool"]: f["seqs"] for f in doc["findings"] if f["kind"] == "stale_response"
    }
    assert stale == {"search": {"a": [2], "b": [2]}, "embed": {"a": [4], "b": [4]}}
    assert doc["rows"][0]["numbers"]["count"] == 2  # the noise row, shown with its numbers
    text = subprocess.run(
        [sys.executable, "-m", "cassette_tui.tui.cli", "diff", str(pa), str(pb)],
        capture_output=True, text=True, timeout=120, check=False,
    ).stdout  # fmt: skip
    assert "first divergence: row 2" in text and "numbers: 2 differ" in text


@sync
async def test_the_app_header_names_no_stale_response_for_noise(tmp_path: Path) -> None:
    from cassette_tui.core.importers.sources import open_cassette
    from cassette_tui.tui.app import CassetteApp

    noise = [entry(1, "embed", {"t": 1}, response={"v": [x]}) for x in (SUM_A, SUM_B)]
    pa = write_cassette(tmp_path / "a.jsonl", noise[0], entry(2, "s", {"q": 1}, response={"t": 1}))
    pb = write_cassette(tmp_path / "b.jsonl", noise[1], entry(2, "s", {"q": 1}, response={"t": 1}))
    app = CassetteApp(open_cassette(pa), open_cassette(pb))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "findings: first divergence" in text and "stale" not in text
    # a real change in the same place is still a stale response
    pc = write_cassette(tmp_path / "c.jsonl", entry(1, "embed", {"t": 1}, response={"v": [0.7]}),
                        entry(2, "s", {"q": 1}, response={"t": 1}))  # fmt: skip
    app = CassetteApp(open_cassette(pa), open_cassette(pc))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "stale response" in screen_text(app)
