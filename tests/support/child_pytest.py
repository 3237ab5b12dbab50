"""The command line of a pytest subprocess that runs a small project with the cassette
plugin (its entry point loaded as a user's pytest loads it)."""

from __future__ import annotations

import sys

#: plugins of the test environment that the small projects never use, blocked in the
#: subprocess (and its xdist workers): loading them cost about 2.8 s of CPU per pytest
#: start (langsmith's plugin alone 1.4 s, hypothesis's 0.8 s), most of these tests' time
UNUSED_PLUGINS = (
    "langsmith_plugin",
    "hypothesispytest",
    "anyio",
    "textual-snapshot",
    "syrupy",
)


def pytest_argv(*args: str) -> list[str]:
    """``python -m pytest`` with the cache off, the unused plugins blocked, then ``args``."""
    blocked = [word for name in UNUSED_PLUGINS for word in ("-p", f"no:{name}")]
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *blocked, *args]
