"""Float noise is never the first divergence by itself when a real change follows (issue 10,
audit G3): without ``--tolerance``, a row whose numbers differ only within float32's epsilon
(relative) is passed over, but stays shown with its drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cassette_tui.core import diff_cassettes
from cassette_tui.core.diff_model import Status
from cassette_tui.core.refine import FLOAT_NOISE, numeric_drift
from support.factory import entry, make_cassette, write_cassette

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
