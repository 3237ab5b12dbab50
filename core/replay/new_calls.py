"""New calls in a replay: what a call the cassette never recorded gets (VCR's
``new_episodes``), so a fix that changes the agent's calls can be checked against the
failing recording.

The policy (``wrap_dispatcher(new_calls=...)``, ``CASSETTE_NEW_CALLS``, ``cassette-tui
replay --new-calls``; docs/format.md, "Replay semantics"):

- ``error`` (the default): a call never recorded raises ``CassetteMiss``, a call past the
  last recording of its key ``ReplayExhausted``; nothing goes live.
- ``report``: such a call is a *new call*: it goes to the live tool (the dispatcher the
  agent wrapped), its answer is returned and written nowhere.
- ``record``: as ``report``, and every new call is appended to a new cassette
  (``CASSETTE_NEW_PATH``, default ``NAME.new-<UTC>.jsonl`` beside the replayed cassette:
  ``new_cassette_path``), made at the first new call (a run without one leaves no file),
  never over an existing file.

Under every policy the recorded calls are served from the cassette as ever. A new call is
logged in the replay report with outcome ``new`` and listed in its ``new_calls`` (with
its nearest recorded calls, as a miss is), never among the misses: the result says which
calls were new. A replay with new calls went live: the loop counts it as no clean
offline replay unless the new calls were asked for (``--new-calls report|record``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.errors import CassetteMiss
from ..keys.normalize import NormalizationRules
from ..scan.redact import Redactor
from .recorder import Recorder

if TYPE_CHECKING:
    from .codec import Codec

#: what a call the cassette never recorded gets (see the module doc)
NEW_CALL_POLICIES = ("error", "report", "record")


class NewCall(CassetteMiss):
    """A call the cassette cannot serve under a ``report`` or ``record`` policy: raised by
    ``Replayer`` (already logged as ``new``) for its caller to answer live
    (``LiveNewCalls``). Attributes as ``CassetteMiss``."""


def check_policy(policy: str) -> str:
    """``policy`` lower-cased and stripped when it is one of ``NEW_CALL_POLICIES``.

    Raises:
        ValueError: another word (the message names the choices).
    """
    word = policy.strip().lower()
    if word not in NEW_CALL_POLICIES:
        raise ValueError(
            f"unknown new-calls policy {policy!r}; expected one of: {', '.join(NEW_CALL_POLICIES)}"
        )
    return word


def new_cassette_path(cassette: str | Path, when: datetime | None = None) -> Path:
    """Where ``record`` writes the new calls by default: beside ``cassette``,
    ``NAME.new-YYYYMMDDTHHMMSSZ.jsonl`` (UTC; ``when`` default now)."""
    p = Path(cassette)
    stamp = (when or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return p.with_name(f"{p.stem}.new-{stamp}.jsonl")


class LiveNewCalls:
    """Answers new calls live, and with ``record`` appends each one to ``path``.

    Args:
        policy: ``"report"`` or ``"record"``.
        path: the new cassette (``record``); made at the first new call, exclusively.
        rules: the rules for the new entries' ``args_digest``.
        redactor: redact each new call before it is written (the config's ``record =
            true``), or ``None``.
        codec: typed values (``codec.py``), recorded as the ``record`` mode records them.

    Raises:
        ValueError: another policy, or ``record`` without a path.
    """

    def __init__(
        self,
        policy: str,
        path: str | Path | None = None,
        rules: NormalizationRules | None = None,
        redactor: Redactor | None = None,
        codec: Codec | None = None,
    ) -> None:
        policy = check_policy(policy)
        if policy == "error":
            raise ValueError("new calls under the 'error' policy are never answered live")
        if policy == "record" and path is None:
            raise ValueError("the 'record' new-calls policy needs a path for the new calls")
        self.policy = policy
        self.path = Path(path) if path is not None else None
        self.rules = rules
        self.redactor = redactor
        self.codec = codec
        self._lock = threading.Lock()
        self._recorder: Recorder | None = None

    @property
    def written(self) -> Path | None:
        """The new cassette once a new call was written to it, else ``None``."""
        return self.path if self._recorder is not None else None

    def _recording(self) -> Recorder | None:
        if self.policy != "record":
            return None
        with self._lock:
            if self._recorder is None:
                assert self.path is not None
                # exclusive: an existing file is refused (FileExistsError), never replaced
                self._recorder = Recorder(
                    self.path, rules=self.rules, redactor=self.redactor, codec=self.codec
                )
            return self._recorder

    def answer(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """``dispatch(tool, args)`` live (recorded under ``record``); its exception raised
        as it is (recorded as an ``error`` entry under ``record``)."""
        recorder = self._recording()
        if recorder is None:
            return dispatch(tool, args)
        return recorder.call(dispatch, tool, args)

    async def aanswer(self, dispatch: Callable[[str, Any], Any], tool: str, args: Any) -> Any:
        """``answer`` for an async dispatcher."""
        recorder = self._recording()
        if recorder is None:
            return await dispatch(tool, args)
        return await recorder.acall(dispatch, tool, args)

    def close(self) -> None:
        """Finish the new cassette (when one was made). Idempotent."""
        with self._lock:
            recorder = self._recorder
        if recorder is not None:
            recorder.close()
