"""Where the tests find the project's files and the real-world data beside it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_cassettes"
#: Real-world recordings by other people; never copied into the project.
REAL = ROOT.parent / "shared" / "real"
#: the installed console script, next to the interpreter running the tests
SCRIPT = Path(sys.executable).parent / "cassette-tui"
