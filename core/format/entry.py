"""One recorded tool call: the ``Entry`` of a cassette (cassette format v1, docs/format.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ToolError
from .jsonvalue import json_copy

#: Fields with a meaning in format version 1; any other field is kept verbatim in ``extra``.
KNOWN_FIELDS = frozenset({"seq", "tool", "args", "args_digest", "response", "error"})


@dataclass(frozen=True)
class Entry:
    """A recorded call.

    Attributes:
        seq: 1-based position of the call in its run.
        tool: the tool name as the dispatcher knows it.
        args: the arguments exactly as recorded (never normalized in place).
        response: the tool's return value; ``None`` when the call raised (see ``error``).
        error: ``{"type": str, "message": str, ...}`` when the tool raised, else ``None``
            (the fields: docs/format.md, "The error field").
        args_digest: the digest stored in the file, if any (may be stale; lookups use the
            digest recomputed with the current normalization rules).
        extra: unknown fields (``recorded_at``, ``duration_ms``, ...), kept verbatim.
        line: 1-based line number in the source file, or ``None`` for an entry made in memory.
    """

    seq: int
    tool: str
    args: Any
    response: Any = None
    error: dict[str, Any] | None = None
    args_digest: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    line: int | None = None

    @property
    def is_error(self) -> bool:
        """True when the call raised and the entry carries ``error`` instead of ``response``."""
        return self.error is not None

    def outcome(self) -> Any:
        """The value that replay serves: a fresh copy of the response (nothing done to it
        changes the entry), or raise the recorded error as ``ToolError.from_record``: an
        instance of the recorded class too where it can be rebuilt, with the recorded
        ``str()``, ``repr()``, ``args`` and attributes (see ``ToolError``)."""
        if self.error is not None:
            raise ToolError.from_record(self.error, self.seq)
        return json_copy(self.response)

    def fresh(self) -> Entry:
        """A copy of the entry whose args, response, error and extra are new objects."""
        return replace(
            self,
            args=json_copy(self.args),
            response=json_copy(self.response),
            error=json_copy(self.error),
            extra=json_copy(self.extra),
        )

    def to_record(self, args_digest: str) -> dict[str, Any]:
        """The entry as a JSON object for a cassette line, with ``args_digest`` set.

        Unknown fields come first and are overridden by the known ones, so an ``extra``
        can never shadow ``seq``/``tool``/``args``.
        """
        record: dict[str, Any] = dict(self.extra)
        record.update(seq=self.seq, tool=self.tool, args=self.args, args_digest=args_digest)
        if self.error is not None:
            record["error"] = self.error
        else:
            record["response"] = self.response
        return record
