"""New episodes: serve what a cassette recorded, record the calls it did not live, into a
new file beside it (the new-calls policy of docs/format.md, "Replay semantics": a miss
falls back to the live tool only when the user chose it).

A call whose key the cassette has is served as ``Replayer`` serves it (recorded order, a
recorded error raised as ``ToolError``). A call it has not (a miss, or a key called more
times than it was recorded: pytest-recording's ``new_episodes`` records those too) runs
live and is recorded by a ``Recorder`` into a staging file beside the output, one line
per call as it returns (a crash keeps every completed call there).

The cassette itself is never written. ``close()`` writes the output file atomically: the
cassette's lines as they are, then the new calls with ``seq`` going on after the
cassette's last one, so the output is a complete cassette (review it with ``cassette-tui
diff CASSETTE OUTPUT``, adopt it by moving it over the cassette) and its new calls are the
seqs past ``last_recorded_seq``. No new call: no output file.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..format.atomic import write_atomic
from ..format.cassette import Cassette, dump_line, load
from ..format.errors import CassetteMiss
from ..keys.config import ProjectConfig
from ..keys.normalize import NormalizationRules, rules_of
from ..scan.redact import Redactor, record_redactor
from ..scan.redact_config import load_secret_config
from .recorder import Recorder, _is_async
from .replayer import Replayer

_staging_ids = itertools.count(1)


def new_episodes_path(cassette: str | Path) -> Path:
    """Where the new calls of ``cassette`` go by default: ``NAME.new-episodes.jsonl``
    beside it (``refund.jsonl`` -> ``refund.new-episodes.jsonl``)."""
    path = Path(cassette)
    return path.with_name(f"{path.stem}.new-episodes{path.suffix or '.jsonl'}")


class NewEpisodes:
    """Replays ``cassette`` and records the calls it lacks live (see the module doc).

    Args:
        cassette: a loaded ``Cassette`` or a path to load (file-backed: its lines are
            copied into the output as they are).
        out: the output file (default ``new_episodes_path(cassette)``); written only at
            ``close()``, and only when a call was new.
        overwrite: replace an existing ``out`` (else ``close()`` raises ``TargetExists``).
        repeat: the replay policy for a key called more times than recorded: ``"error"``
            (default: the call is new, recorded live) or ``"last"`` (served again).
        rules: normalization rules (default: the cassette's own).
        redactor: applied to live args that miss (``Replayer``'s).
        record_redactor: applied to the new calls as they are written (``Recorder``'s).

    Raises:
        ValueError: an unknown ``repeat`` policy, or a cassette with no file behind it.
        CassetteFormatError: ``cassette`` is a path that cannot be loaded.
    """

    def __init__(
        self,
        cassette: Cassette | str | Path,
        out: str | Path | None = None,
        *,
        overwrite: bool = False,
        repeat: str = "error",
        rules: NormalizationRules | None = None,
        redactor: Redactor | None = None,
        record_redactor: Redactor | None = None,
    ) -> None:
        self.replayer = Replayer(cassette, repeat=repeat, rules=rules, redactor=redactor)
        self.cassette = self.replayer.cassette
        if self.cassette.path is None:
            raise ValueError("new episodes need a cassette file: its lines start the output")
        self.out = Path(out) if out is not None else new_episodes_path(self.cassette.path)
        self.overwrite = overwrite
        #: the seq past which the output's calls are new
        self.last_recorded_seq = max(self.cassette.seqs, default=0)
        staging = self.out.with_name(
            f".{self.out.name}.recording-{os.getpid()}-{next(_staging_ids)}"
        )
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()  # a left-over of a process with the same pid
        self.recorder = Recorder(staging, rules=rules_of(self.cassette), redactor=record_redactor)
        self.written: Path | None = None
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(
        cls,
        cassette: str | Path,
        out: str | Path | None = None,
        *,
        config: str | Path | None = None,
        overwrite: bool = False,
        repeat: str = "error",
    ) -> NewEpisodes:
        """``NewEpisodes`` of the cassette file under the project's config (rules and
        redaction, as ``wrap_dispatcher`` reads them: ``config``, ``CASSETTE_CONFIG``,
        else the project's ``cassette.toml`` / ``pyproject.toml``).

        Raises:
            CassetteFormatError: the cassette or the config cannot be loaded.
        """
        project = ProjectConfig.load(config)
        rules = project.rules()
        redaction = load_secret_config(project)
        return cls(
            load(cassette, rules=rules),
            out,
            overwrite=overwrite,
            repeat=repeat,
            redactor=Redactor(redaction),
            record_redactor=record_redactor(redaction),
        )

    @property
    def new_calls(self) -> int:
        """How many calls were recorded live so far."""
        return self.recorder.entries

    def call(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """Serve ``tool(args)`` from the cassette, or run it live and record it.

        Raises:
            ToolError: the cassette recorded an error for this call.
            NotSerializable: a new call's args or response cannot be stored as JSON.
        """
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        try:
            return self.replayer(tool, args)
        except CassetteMiss:  # a miss, or past the last recording (ReplayExhausted)
            return self.recorder.call(dispatch, tool, args)

    async def acall(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """``call`` for an async dispatcher."""
        __tracebackhide__ = True  # pytest: a failure shows no raw args (secrets)
        try:
            return self.replayer(tool, args)
        except CassetteMiss:
            return await self.recorder.acall(dispatch, tool, args)

    def wrap(self, dispatch: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
        """A dispatcher (async if ``dispatch`` is) served as ``call`` serves."""
        if _is_async(dispatch):

            async def served_async(tool: str, args: Any) -> Any:
                __tracebackhide__ = True
                return await self.acall(dispatch, tool, args)

            return served_async

        def served(tool: str, args: Any) -> Any:
            __tracebackhide__ = True
            return self.call(dispatch, tool, args)

        return served

    def report(self) -> dict[str, Any]:
        """``{"mode": "new_episodes", "cassette", "replay": the replay report (its misses
        are the calls that ran live), "new_calls", "new_file"}`` (``new_file``: the output
        once written, else ``None``)."""
        return {
            "mode": "new_episodes",
            "cassette": str(self.cassette.path),
            "replay": self.replayer.report(),
            "new_calls": self.new_calls,
            "new_file": str(self.written) if self.written is not None else None,
        }

    def close(self, out: str | Path | None = None) -> Path | None:
        """Finish the recording and write the output (to ``out`` when given, else
        ``self.out``); return where it went, or ``None`` when no call was new. Idempotent
        (a second call returns the first one's answer).

        Raises:
            TargetExists: the output exists and ``overwrite`` is false (the staging file
                is kept, with every new call).
            OSError: the output cannot be written.
        """
        with self._lock:
            if self._closed:
                return self.written
            self._closed = True
            self.recorder.close()
            staging = self.recorder.path
            if self.recorder.entries == 0:
                with contextlib.suppress(FileNotFoundError):
                    staging.unlink()
                return None
            target = Path(out) if out is not None else self.out
            write_atomic(target, self._merged(staging), overwrite=self.overwrite)
            staging.unlink()
            self.written = target
            return target

    def _merged(self, staging: Path) -> Iterator[bytes]:
        """The cassette's bytes, then the new calls numbered on from its last seq."""
        assert self.cassette.path is not None
        old = Path(self.cassette.path).read_bytes()
        yield old
        if old and not old.endswith(b"\n"):
            yield b"\n"
        new = load(staging, rules=self.replayer.rules)
        for _, entry, _ in new.entries_read():
            renumbered = replace(entry, seq=self.last_recorded_seq + entry.seq, line=None)
            yield dump_line(renumbered, self.replayer.rules)
