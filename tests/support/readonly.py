"""A folder made read-only for one command: run it in a new mount namespace with the folder
bind-mounted read-only over itself (``unshare -m``), so even root gets ``EROFS``, as on a
read-only file system. The folder stays writable for everything else."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path


@functools.cache
def read_only_problem() -> str | None:
    """``None`` when this machine can run a command with a read-only folder, else why not."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount is not installed"
    with tempfile.TemporaryDirectory(prefix="ro-probe-") as folder:
        probe = Path(folder) / "probe"
        done = subprocess.run(
            read_only(Path(folder), ["sh", "-c", f"! touch '{probe}' 2>/dev/null"]),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        return f"no private read-only bind mount here: {done.stderr.strip() or done.returncode}"
    return None


def read_only(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` run with ``folder`` read-only (see the module doc)."""
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(folder), *argv]
