"""Float noise is never the first divergence by itself when a real change follows: without
``--tolerance``, a row whose numbers differ only within float32's epsilon (relative) is
passed over, but stays shown with its drift; ``numeric_drift`` gives the size of a numeric
change and the tolerance that would hide it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes
from cassette_tui.core.diff.model import Status
from cassette_tui.core.diff.refine import FLOAT_NOISE, numeric_drift
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cases import F32, SUM_A, SUM_B, noise_and_real_pair
from support.factory import make_cassette


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


# -- noise is not a stale recording (diagnose: stale_response) ---------------------------------
def _stale(findings: list) -> list:
    return [f for f in findings if f.kind == "stale_response"]


def test_noise_rows_are_no_stale_response_and_real_changes_still_are(tmp_path: Path) -> None:
    from cassette_tui.core import load

    pa, pb = noise_and_real_pair(tmp_path)
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


# -- numbers --------------------------------------------------------------------------------------
def test_numeric_drift_size_and_tolerance() -> None:
    a = make_cassette([("embed", {"t": 1}, {"v": [0.1000001, 0.2]}), ("s", {"q": 1}, {"top": "a"})])
    b = make_cassette([("embed", {"t": 1}, {"v": [0.1000003, 0.2]}), ("s", {"q": 1}, {"top": "b"})])
    plain = diff_cassettes(a, b)
    assert plain.first_divergence == 0
    numbers = numeric_drift(plain.drift(0))
    assert numbers is not None and numbers["count"] == 1
    assert numbers["max_abs_delta"] == pytest.approx(2e-7)
    loose = diff_cassettes(a, b, tolerance=1e-6)
    assert loose.rows[0].status is Status.SAME
    assert loose.first_divergence == 1  # noise is never the first divergence
    assert diff_cassettes(a, b, tolerance=1e-9).rows[0].status is Status.RESPONSE_DRIFT
