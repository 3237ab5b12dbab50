"""A cassette write the file refused (a full disk, a file size limit): what ``mcp record``
says of it, and how the recording ends.

The proxy relays first and records second: when the cassette refuses a write, the entry
being written is cut back (the file ends at its last whole line, every entry before it
kept), nothing more is recorded, and the host's session goes on, unrecorded, to its end;
the proxy then exits with ``EXIT_BAD_INPUT`` (docs/mcp.md, "When the cassette cannot be
written").
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WriteFailure"]


@dataclass(frozen=True, slots=True)
class WriteFailure:
    """The write of ``path`` that failed: ``error`` the OS error (``errno``, ``strerror``),
    ``seq`` the entry whose line it was (``None``: the file's close, after every entry),
    ``cut_left``: the line's written part could not be removed (the file ends with a cut
    line, which ``load`` reports as such, every line before it whole)."""

    path: Path
    error: OSError
    seq: int | None
    cut_left: bool = False

    def message(self) -> str:
        """One sentence for stderr: ``cannot write to cassette PATH: File too large (errno
        27); the recording stopped at seq 2 (the 1 entry before it is kept); the session
        goes on unrecorded``."""
        code = self.error.errno
        reason = self.error.strerror or (os.strerror(code) if code else str(self.error))
        name = errno.errorcode.get(code, "") if code else ""
        said = f"{reason} ({name}, errno {code})" if code else reason
        head = f"cannot write to cassette {self.path}: {said}"
        if self.seq is None:
            return f"{head} while closing it; its entries may not all be on disk"
        kept = self.seq - 1
        entries = "entry" if kept == 1 else "entries"
        text = (
            f"{head}; the recording stopped at seq {self.seq} (the {kept} {entries} before "
            f"it are kept); the session goes on unrecorded"
        )
        if kept == 1:
            text = text.replace("are kept", "is kept")
        if self.cut_left:
            text += (
                f"; the cut line of seq {self.seq} could not be removed: a load reports it "
                "(every line before it is whole)"
            )
        return text
