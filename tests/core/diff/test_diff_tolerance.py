"""``diff_cassettes(tolerance=...)`` takes a finite number >= 0 only: NaN would make no
number equal to any, infinity every number equal to any other."""

from __future__ import annotations

import math

import pytest
from cassette_tui.core import diff_cassettes
from support.factory import make_cassette


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.0, -1e-300])
def test_a_tolerance_that_is_not_finite_and_at_least_0_is_refused(bad: float) -> None:
    c = make_cassette([("t", {"q": 1}, {"score": 0.5})])
    with pytest.raises(ValueError, match="tolerance must be a finite number >= 0"):
        diff_cassettes(c, c, tolerance=bad)


def test_a_finite_tolerance_is_used() -> None:
    a = make_cassette([("t", {"q": 1}, {"score": 0.5})])
    b = make_cassette([("t", {"q": 1}, {"score": 0.50001})])
    assert not diff_cassettes(a, b).is_same
    assert diff_cassettes(a, b, tolerance=0.001).is_same
    assert diff_cassettes(a, a, tolerance=0.0).is_same
