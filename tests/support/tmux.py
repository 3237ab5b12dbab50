"""A private tmux server running the installed app at 80x24, for end-to-end tests."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from .paths import SAMPLES, SCRIPT

DEADLINE = 20.0


class Tmux:
    """One private tmux server with one 80x24 session running a command."""

    def __init__(self, tmp: Path) -> None:
        self.socket = f"cassette-e2e-{uuid.uuid4().hex[:10]}"
        self.conf = tmp / "tmux.conf"
        # keep the pane after the app exits (to check the terminal it left behind); a
        # short escape-time so escape is a key, as an SSH user would set it
        self.conf.write_text("set -g remain-on-exit on\nset -sg escape-time 25\n")

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.conf), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=10,
        )
        self.last_error = out.stderr
        return out.stdout

    def start(
        self, *command: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        """Start ``command`` in the session (in the folder ``cwd``, if given); ``env`` is set
        for the command only (``NO_COLOR``, ``TERM=vt100``: tmux itself keeps its own
        terminal)."""
        if env:
            command = ("env", *(f"{k}={v}" for k, v in env.items()), *command)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                str(self.conf),
                "new-session",
                "-d",
                "-x",
                "80",
                "-y",
                "24",
                "-s",
                "e2e",
                *(("-c", str(cwd)) if cwd is not None else ()),
                *command,
            ],
            check=True,
            env=env,
            timeout=10,
        )

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "e2e", *keys)

    def screen(self, *, history: bool = False) -> str:
        """The visible screen; with ``history``, also what scrolled off, wrapped lines
        joined."""
        extra = ("-J", "-S", "-") if history else ()
        return self.run("capture-pane", "-p", *extra, "-t", "e2e")

    def screen_escapes(self) -> str:
        """The visible screen with its colours and attributes (``capture-pane -e``)."""
        return self.run("capture-pane", "-p", "-e", "-t", "e2e")

    def pane(self, fmt: str) -> str:
        return self.run("display-message", "-p", "-t", "e2e", fmt).strip()

    def wait_for(self, check: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + DEADLINE
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen}")

    def wait_exit(self) -> str:
        """Wait until the app's process has exited; its exit status, or "" when tmux does
        not report one (tmux 3.3 sometimes leaves it empty for a moment after the death)."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if self.pane("#{pane_dead}") == "1":
                for _ in range(20):
                    status = self.pane("#{pane_dead_status}")
                    if status:
                        return status
                    time.sleep(0.05)
                return ""
            time.sleep(0.05)
        raise AssertionError(f"the app is still running; the screen shows:\n{self.screen()}")

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True, timeout=10
        )


#: the terminals the app is run in: a 256-colour one, NO_COLOR, a 16-colour vt100
TERMINALS: dict[str, dict[str, str]] = {
    "256-colour": {"TERM": "screen-256color"},
    "NO_COLOR": {"TERM": "screen-256color", "NO_COLOR": "1"},
    "vt100": {"TERM": "vt100"},
}


def open_pair(tmux: Tmux, env: dict[str, str] | None = None) -> str:
    tmux.start(str(SCRIPT), str(SAMPLES / "fail.jsonl"), str(SAMPLES / "fix.jsonl"), env=env)
    return tmux.wait_for(lambda s: "first divergence" in s and "findings:" in s, "main screen")
