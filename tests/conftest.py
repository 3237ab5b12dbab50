"""Shared fixtures of every test layer: the sample cassettes, ../shared/real (skipped with
the reason where absent) and a private tmux server. Plain helpers live in ``support/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import REAL, SAMPLES
from support.tmux import Tmux


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def real() -> Path:
    """``../shared/real``; tests that use it skip where it is absent."""
    if not REAL.is_dir():
        pytest.skip(f"real-world data not available: {REAL} is absent")
    return REAL


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A private tmux server (80x24), always killed at the end of the test."""
    server = Tmux(tmp_path)
    try:
        yield server
    finally:
        server.kill()
