"""Shared test fixtures: paths to the project's sample cassettes and to ../shared/real."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_cassettes"
#: Real-world recordings by other people; never copied into the project.
REAL = ROOT.parent / "shared" / "real"


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def real() -> Path:
    """``../shared/real``; tests that use it skip where it is absent."""
    if not REAL.is_dir():
        pytest.skip(f"real-world data not available: {REAL} is absent")
    return REAL
