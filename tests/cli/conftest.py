"""Fixtures shared by the CLI tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_session import TIMEOUT, TOY_SERVER

from tests.cli.test_mcp_http import free_port, wait_listening

#: the SDK server whose streams drop mid-way (``support/mcp_http_resume_server.py``)
RESUME_SERVER = str(Path(TOY_SERVER).with_name("mcp_http_resume_server.py"))


@pytest.fixture
def remote() -> Any:
    """The SDK server's URL, for the test's length."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, RESUME_SERVER, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
