"""Fixtures shared by the CLI tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mcp_session import TIMEOUT, TOY_SERVER

from tests.cli.test_mcp_http import free_port, wait_listening
from tests.cli.test_mcp_http_bad_input import SERVER as RAW_SERVER

#: the SDK server whose streams drop mid-way (``support/mcp_http_resume_server.py``)
RESUME_SERVER = str(Path(TOY_SERVER).with_name("mcp_http_resume_server.py"))


def _served(script: str) -> Iterator[str]:
    """A server ``script`` (run as ``python script PORT``) on a free port: its URL while
    the test runs, stopped after."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, script, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


@pytest.fixture
def remote() -> Any:
    """The SDK server's URL, for the test's length."""
    yield from _served(RESUME_SERVER)


@pytest.fixture
def raw_remote() -> Any:
    """The hand-written server's URL (``support/mcp_raw_http_server.py``), for the test's
    length."""
    yield from _served(RAW_SERVER)
