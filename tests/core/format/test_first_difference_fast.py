"""``textspot.first_difference`` a chunk at a time gives the index the halving of the
whole gave (a copy of it kept here)."""

from __future__ import annotations

import pytest
from cassette_tui.core.format import textspot
from cassette_tui.core.format.textspot import first_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _old_first_difference(a: str, b: str) -> int:
    """``first_difference`` before it compared a chunk at a time (main at 3e945f1)."""
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@pytest.fixture(params=[3, 65_536])
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(textspot, "_CHUNK", request.param)
    return int(request.param)


@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    base=st.text(alphabet="ab\u00e9\u2026\U0001f600", max_size=60),
    cut=st.integers(min_value=0, max_value=70),
    tail_a=st.text(alphabet="abc\u2026", max_size=5),
    tail_b=st.text(alphabet="abc\u2026", max_size=5),
)
def test_the_same_index_as_the_halving(
    chunk: int, base: str, cut: int, tail_a: str, tail_b: str
) -> None:
    a, b = base[:cut] + tail_a, base[:cut] + tail_b
    assert first_difference(a, b) == _old_first_difference(a, b)
    assert first_difference(base, a) == _old_first_difference(base, a)


def test_a_long_text_differing_at_its_end() -> None:
    a = "x" * 200_000 + "«a»"
    b = "x" * 200_000 + "«b»"
    assert first_difference(a, b) == _old_first_difference(a, b) == 200_001
    assert first_difference(a, a) == len(a)
    assert first_difference(a, a[:5]) == 5
