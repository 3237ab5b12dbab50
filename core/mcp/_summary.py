"""What one ``mcp record`` session did (``RecordSummary``): the files it wrote, the entries
and other exchanges it kept, the server's exit, the problems said on stderr and a refused
cassette write; the proxy's own exit status (``exit_status``) and the JSON report of
``--report`` (``report``). Kept apart from the proxy, which fills it in as the session
goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cassette_tui.core.format.constants import EXIT_BAD_INPUT, EXIT_CLEAN


@dataclass
class RecordSummary:
    """What a recording session did.

    Attributes:
        cassette, sidecar: the files written.
        entries: tool calls recorded; errors: of them, JSON-RPC errors or ``isError``.
        exchanges: other answered requests kept in the sidecar.
        unanswered: methods of host requests the server never answered.
        server_exit: the server's exit status (negative: killed by that signal), ``None``
            if it could not be started.
        server_crashed: the server exited before the host closed the session.
        terminated: the proxy had to signal the server to stop it.
        removed: nothing was recorded (no tool call, no other answer), so the two files
            this session created were removed: a retry starts clean.
        write_error: the cassette refused a write (``_write_failure``): what was said on
            stderr; the recording stopped there, the session went on unrecorded.
    """

    cassette: Path
    sidecar: Path
    entries: int = 0
    errors: int = 0
    exchanges: int = 0
    unanswered: list[str] = field(default_factory=list)
    server_exit: int | None = None
    server_crashed: bool = False
    terminated: bool = False
    removed: bool = False
    server_messages: int = 0
    kept_aside: int = 0
    problems: list[str] = field(default_factory=list)
    write_error: str | None = None

    def exit_status(self) -> int:
        """The proxy's own exit status: the server's when it crashed (128+N for a signal),
        else ``EXIT_BAD_INPUT`` (2) when the cassette refused a write, else 0."""
        code = self.server_exit
        if not self.server_crashed or code is None or code == 0:
            return EXIT_BAD_INPUT if self.write_error is not None else EXIT_CLEAN
        return 128 - code if code < 0 else code

    def report(self) -> dict[str, Any]:
        """``{"mode": "record", "cassette", "entries", "errors", "mcp": {...}}``."""
        return {
            "mode": "record",
            "cassette": str(self.cassette),
            "entries": self.entries,
            "errors": self.errors,
            "mcp": {
                "sidecar": str(self.sidecar),
                "exchanges": self.exchanges,
                "unanswered": list(self.unanswered),
                "server_exit": self.server_exit,
                "server_crashed": self.server_crashed,
                "removed": self.removed,
                "server_messages": self.server_messages,
                "kept_aside": self.kept_aside,
                "problems": list(self.problems),
                "write_error": self.write_error,
            },
        }
