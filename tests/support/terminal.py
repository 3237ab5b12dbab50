"""Run a command in a real pseudo-terminal of a given size (what a person's terminal is to
the command: ``isatty()`` true, a window size), and read what it wrote."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
import time
from collections.abc import Sequence
from pathlib import Path

TIMEOUT = 60.0


def run_in_terminal(
    argv: Sequence[str | Path],
    *,
    columns: int = 80,
    lines: int = 24,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
) -> tuple[int, str]:
    """Run ``argv`` with stdin, stdout and stderr on a new pseudo-terminal of
    ``columns`` x ``lines``; return its exit status and everything it wrote (``\\r\\n``
    turned back into ``\\n``)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [str(a) for a in argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**base, **(env or {})},
        cwd=cwd,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        else:
            proc.kill()
            raise AssertionError(f"{argv} still running after {TIMEOUT} s")
        status = proc.wait(timeout=TIMEOUT)
    finally:
        os.close(master)
    return status, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
