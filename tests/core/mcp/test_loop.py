"""The MCP proxies' event loop (``mcp/_loop.py``): uvloop on Linux when it can be imported,
else asyncio's own loop (not installed, or another system)."""

from __future__ import annotations

import asyncio
import sys

import pytest
from cassette_tui.core.mcp import _loop


async def _running() -> type:
    return type(asyncio.get_running_loop())


def test_uvloop_taken_on_linux_when_installed() -> None:
    uvloop = pytest.importorskip("uvloop")
    if not sys.platform.startswith("linux"):
        pytest.skip("uvloop is taken on Linux only")
    assert _loop.loop_factory() is uvloop.new_event_loop
    assert issubclass(_loop.run(_running()), uvloop.Loop)


def test_asyncio_loop_when_uvloop_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # its import raises ImportError
    assert _loop.loop_factory() is None
    ran = _loop.run(_running())
    assert ran.__module__.startswith("asyncio"), ran


def test_asyncio_loop_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _loop.loop_factory() is None
