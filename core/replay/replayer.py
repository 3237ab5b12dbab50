"""Replay: serve an agent's tool calls from a cassette, never from the live tool.

A call is looked up by ``(tool, digest(rules.apply(tool, args)))`` (docs/format.md, "Replay
semantics"). A key recorded several times serves its recordings in recorded order (a 429
then a 200 stays a 429 then a 200); past the last one the ``repeat`` policy decides:
``"error"`` (default) raises ``ReplayExhausted``, ``"last"`` serves the last recording
again. A recorded ``error`` is raised as ``ToolError`` (``acall``: a recorded cancellation
waits to be cancelled again). A codec gives typed responses back. A miss raises
``CassetteMiss`` with the nearest recorded calls of the same tool; under a ``new_calls``
policy other than ``"error"`` it (and a call past the last recording) is a new call
instead: logged ``new`` and raised as ``NewCall`` for the wrapper to answer live
(``new_calls.py``). A call a pinned fixture answered is logged ``pinned``
(``note_pinned``; ``fixtures.py``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format._answers import NOT_PLAIN
from ..format.cassette import Cassette, load
from ..format.digest import live_digest
from ..format.entry import Entry
from ..format.errors import CassetteMiss, ReplayExhausted
from ..keys.normalize import NormalizationRules, rules_of
from ..keys.replay_key import KeyIndex, is_repeated, lookup_key
from ..scan.redact import Redactor
from ._miss_shown import shown_miss
from .new_calls import NewCall, check_policy
from .report import CallRecord, KeyRepeat, Miss, ReplayReport

if TYPE_CHECKING:
    from .codec import Codec

REPEAT_POLICIES = ("error", "last")

#: a ``CallRecord``'s fields, as ``CallRecord.to_json`` names them
_CALL_FIELDS = ("n", "tool", "digest", "seq", "outcome")

#: one call as the log keeps it: ``(n, tool, digest, seq, outcome)``, the fields of a
#: ``CallRecord`` (built for the report only: a frozen dataclass per call cost ~2 us)
LoggedCall = tuple[int, str, str, "int | None", str]


class Replayer:
    """Serves calls from a cassette. Thread-safe: calls from several threads are served
    one at a time, each key's recordings still in recorded order.

    Args:
        cassette: a loaded ``Cassette``, or a path to load.
        repeat: ``"error"`` (past the last recording of a key raise ``ReplayExhausted``)
            or ``"last"`` (serve the last recording again).
        rules: normalization rules for the keys (default: the cassette's own rules).
        redactor: the redaction applied to live args that miss, so a cassette redacted
            after recording still matches the real call (default: ``Redactor()``, the
            scan with no config).
        new_calls: ``"error"`` (a miss raises ``CassetteMiss``), or ``"report"`` /
            ``"record"``: a call never recorded, or past the last recording of its key,
            is logged as a new call and raises ``NewCall`` (``new_calls.py``).
        codec: gives typed values back (``codec.py``): live args are encoded by it
            before they are looked up, and a response recorded with ``response_types``
            is decoded to its types (``None``: the recorded JSON as it is).
        repeat_last: tools served past their last recording with the last answer again,
            whatever ``repeat`` says (the MCP stand-in's read-only tools).

    A file-backed cassette has every line checked by the entry parse's rules when the
    replayer is made (``Cassette.checked_answers``: a key repeated in a nested object,
    nesting too deep, a rule of the format), in one read that also computes the keys; a
    call then decodes its answer's bytes afresh (a new object for each call), or, at an
    entry's first serve on a small cassette, hands out the value the start parsed and
    drops it (``format._answers.HELD_ANSWER_BYTES``: no object is handed out twice).

    Raises:
        ValueError: an unknown ``repeat`` or ``new_calls`` policy.
        CassetteFormatError: ``cassette`` is a path that cannot be loaded, or a line of
            it does not parse by the engine's rules (file, line, field), or its file
            changed since the load.
    """

    def __init__(
        self,
        cassette: Cassette | str | Path,
        repeat: str = "error",
        rules: NormalizationRules | None = None,
        redactor: Redactor | None = None,
        new_calls: str = "error",
        codec: Codec | None = None,
        repeat_last: Collection[str] = (),
    ) -> None:
        self.new_calls = check_policy(new_calls)
        if repeat not in REPEAT_POLICIES:
            raise ValueError(f"unknown repeat policy {repeat!r}; expected 'error' or 'last'")
        if not isinstance(cassette, Cassette):
            cassette = load(cassette, rules=rules)
        elif rules is not None and rules != rules_of(cassette):
            cassette = cassette.with_rules(rules)
        self.cassette = cassette
        self.rules = cassette.rules
        self.repeat = repeat
        self.repeat_last = frozenset(repeat_last)
        #: live args that miss are looked up again redacted (see ``replay_key.lookup_key``)
        self.redactor = redactor if redactor is not None else Redactor()
        self.codec = codec
        self._lock = threading.Lock()
        # every line checked fully now, once, with the keys in the same read (a bad line
        # is refused here, naming the file, the line and the field): a call then decodes
        # its answer's bytes only (``format._answers``); ``None`` for a cassette in memory
        self._answers = cassette.checked_answers()
        self._index = KeyIndex.of(cassette)
        #: the rules' ``apply``, ``None`` when they are the identity (a call skips it)
        self._apply = None if self.rules.is_empty else self.rules.apply
        self._calls_per_key: dict[tuple[str, str], int] = {}
        self._served: set[int] = set()
        self._log: list[LoggedCall] = []
        self._misses: list[Miss] = []
        self._new: list[Miss] = []
        #: where the ``record`` new-calls policy writes the new calls (set by the wrapper)
        self.new_cassette: str | None = None
        #: called after each call is logged, under the lock (so in call order), with the
        #: call (``LoggedCall``), its miss (or ``None``) and its key's recorded count: the
        #: report journal
        self.listeners: list[Callable[[LoggedCall, Miss | None, int], None]] = []

    def _logged(self, call: LoggedCall, miss: Miss | None = None, recorded: int = 0) -> None:
        """Log ``call`` (and ``miss``) and tell the listeners. Under ``_lock``."""
        self._log.append(call)
        if miss is not None:
            (self._new if call[4] == "new" else self._misses).append(miss)
        for listener in self.listeners:
            listener(call, miss, recorded)

    def __call__(self, tool: str, args: Any) -> Any:
        """Serve one call: return the recorded response (a new object, this call's own).

        Raises:
            CassetteMiss: the key was never recorded (with the nearest candidates).
            ReplayExhausted: the key's recordings are used up under ``repeat="error"``.
            ToolError: the recording is an ``error`` entry.
        """
        # pytest lists each frame's arguments in a failure: this one's are the raw live args
        __tracebackhide__ = True
        answers = self._answers
        if answers is not None and self.codec is None:
            # a hit on a plain answer, ``_answer`` inline (the common case: one frame and
            # one tuple less); anything else goes on to ``_answer`` with the key made
            apply = self._apply
            dig = live_digest(args if apply is None else apply(tool, args))
            key = (tool, dig)
            positions = self._index.get(key)
            if positions is not None:
                with self._lock:
                    calls = self._calls_per_key
                    done = calls.get(key, 0)
                    if done < len(positions):
                        at = positions[done]
                        value = answers.read(at)
                        if value is not NOT_PLAIN:
                            calls[key] = done + 1
                            self._served.add(at)
                            log = self._log
                            call = (len(log) + 1, tool, dig, answers.seqs[at], "hit")
                            log.append(call)
                            for listener in self.listeners:
                                listener(call, None, len(positions))
                            return value
            value, entry = self._answer(tool, args, key)
        else:
            value, entry = self._answer(tool, args)
        return value if entry is None else self._value(entry)

    async def acall(self, tool: str, args: Any) -> Any:
        """``__call__`` for an async agent. A call recorded as cancelled (``"cancelled":
        true``: ``asyncio.wait_for`` or a task group cancelled it live) waits to be
        cancelled again, so the agent's own timeout or task group ends it as it did live
        (``wait_for`` raises ``TimeoutError``); it waits at most twice its recorded
        ``duration_ms`` plus one second, then raises the recorded ``CancelledError`` as a
        ``ToolError``.

        Raises:
            the errors of ``__call__``; ``asyncio.CancelledError`` when the agent cancels.
        """
        __tracebackhide__ = True  # pytest: a failure shows no raw args (they hold secrets)
        value, entry = self._answer(tool, args)
        if entry is None:
            return value
        if entry.error is not None and entry.error.get("cancelled") is True:
            import asyncio  # here: importing the engine must not load asyncio

            took = entry.extra.get("duration_ms")
            took = took / 1000 if isinstance(took, (int, float)) and took >= 0 else 0.0
            await asyncio.sleep(2 * took + 1.0)  # the agent's cancellation comes first
        return self._value(entry)

    def _answer(
        self, tool: str, args: Any, key: tuple[str, str] | None = None
    ) -> tuple[Any, Entry | None]:
        """Serve one call: ``(response, None)`` when its entry is a plain answer the start
        checked (``format._answers``: its bytes decoded afresh, a new object), else
        ``(None, entry)``: the entry parsed for this call by the engine's rules
        (``_serve``), for ``_value`` to answer from (an error, a codec's types). ``key``:
        the live key, when the caller has made it already.

        Raises:
            CassetteMiss, ReplayExhausted, NewCall: as ``serve``.
        """
        __tracebackhide__ = True  # pytest: a failure shows no raw args (they hold secrets)
        answers = self._answers
        if self.codec is not None or answers is None:
            return None, self._serve(tool, self._json_args(args))
        # the key as ``lookup_key`` makes it, inline: a call that hits is the common case
        if key is None:
            apply = self._apply
            key = (tool, live_digest(args if apply is None else apply(tool, args)))
        index = self._index  # made once: read outside the lock
        positions = index.get(key)
        if positions is None:
            key = lookup_key(index, self.rules, self.redactor, tool, args)  # redacted?
            positions = index.get(key)
        with self._lock:
            # ``_pick`` inline for the next recording of a key (the common case)
            calls = self._calls_per_key
            done = calls.get(key, 0)
            if positions is not None and done < len(positions):
                calls[key] = done + 1
                at = positions[done]
                self._served.add(at)
                recorded = len(positions)
            else:
                at, recorded = self._pick(key, tool, args)
            value = answers.read(at)
            if value is NOT_PLAIN:
                return None, self._entry_logged(tool, key[1], at, recorded)
            # ``_logged`` inline (no miss)
            log = self._log
            call = (len(log) + 1, tool, key[1], answers.seqs[at], "hit")
            log.append(call)
            for listener in self.listeners:
                listener(call, None, recorded)
        return value, None

    def _json_args(self, args: Any) -> Any:
        """The live args as the recording digested them: the codec's JSON of them."""
        return args if self.codec is None else self.codec.encode(args)[0]

    def _value(self, entry: Entry) -> Any:
        """What the agent gets from ``entry`` (one ``_serve`` gave: its own objects): its
        response decoded by the codec, or its recorded error raised as ``ToolError``."""
        if entry.error is not None:
            entry.outcome()  # raises the recorded error as ToolError
        value = entry.response  # a new object for this call: no copy (``owned_entry``)
        if self.codec is not None:
            types = entry.extra.get("response_types")
            if isinstance(types, dict):
                value = self.codec.decode(value, types)
        return value

    def serve(self, tool: str, args: Any) -> Entry:
        """Serve one call as ``__call__`` does (the call log, the report), but return the
        recorded entry that answers it instead of its outcome: a recorded ``error`` is then
        not raised, and its class is not rebuilt (for a caller that answers the recorded
        error as it is, such as the MCP stand-in server). The entry is a new object, the
        caller's own (``Cassette.owned_entry``).

        Raises:
            CassetteMiss: the key was never recorded (with the nearest candidates).
            ReplayExhausted: the key's recordings are used up under ``repeat="error"``.
            NewCall: either of those under a ``new_calls`` policy other than ``"error"``.
        """
        __tracebackhide__ = True  # pytest: a failure shows no raw args (they hold secrets)
        return self._serve(tool, args)

    def _serve(self, tool: str, args: Any) -> Entry:
        """``serve``; the entry returned is a new object, this call's own
        (``Cassette.owned_entry``)."""
        __tracebackhide__ = True  # pytest: a failure shows no raw args (they hold secrets)
        key = lookup_key(self._index, self.rules, self.redactor, tool, args)
        with self._lock:
            at, recorded = self._pick(key, tool, args)
            return self._entry_logged(tool, key[1], at, recorded)

    def _pick(self, key: tuple[str, str], tool: str, args: Any) -> tuple[int, int]:
        """``(position, recorded count)`` of the entry that answers this call of ``key``
        (the next of its recordings, or the last one again), marked served; a miss or a
        key used up is logged and raised here. Under ``_lock``.

        Raises:
            CassetteMiss, ReplayExhausted, NewCall: as ``serve``.
        """
        __tracebackhide__ = True  # pytest: a failure shows no raw args (they hold secrets)
        dig = key[1]
        recorded = self._index.get(key)
        if recorded is None:
            n = len(self._log) + 1
            # the message, the report and the commands show no live secret (issue 26)
            shown, cands = shown_miss(self.cassette, self.rules, self.redactor, tool, args)
            miss = Miss(tool, dig, copy.deepcopy(shown), tuple(cands))
            if self.new_calls != "error":
                self._logged((n, tool, dig, None, "new"), miss)
                raise NewCall(tool, dig, shown, cands)
            self._logged((n, tool, dig, None, "miss"), miss)
            raise CassetteMiss(tool, dig, shown, cands)
        calls = self._calls_per_key
        call_number = calls.get(key, 0) + 1
        calls[key] = call_number
        if call_number > len(recorded):
            strict = self.repeat == "error" and tool not in self.repeat_last
            n = len(self._log) + 1
            if strict and self.new_calls != "error":
                from ..scan.masking import mask_value  # as _miss_shown: on a miss only

                shown = mask_value(self.redactor.redact_args(tool, args))
                new = Miss(tool, dig, copy.deepcopy(shown))
                self._logged((n, tool, dig, None, "new"), new, len(recorded))
                raise NewCall(tool, dig, shown, [])
            if strict:
                self._logged((n, tool, dig, None, "exhausted"), None, len(recorded))
                seqs = [self.cassette.seq(i) for i in recorded]
                shown = self.redactor.redact_args(tool, args)
                raise ReplayExhausted(tool, dig, shown, call_number, len(recorded), seqs)
            at = recorded[-1]
        else:
            at = recorded[call_number - 1]
        self._served.add(at)
        return at, len(recorded)

    def _entry_logged(self, tool: str, dig: str, at: int, recorded: int) -> Entry:
        """Entry ``at`` parsed for this call (a new object: no copy), its call logged.
        Under ``_lock``.

        Raises:
            CassetteFormatError: its line does not parse (file, line, field).
        """
        entry = self.cassette.owned_entry(at)
        outcome = "error" if entry.error is not None else "hit"
        self._logged((len(self._log) + 1, tool, dig, entry.seq, outcome), None, recorded)
        return entry

    def note_pinned(self, tool: str, digest: str) -> None:
        """Log a call that a pinned fixture answered (outcome ``pinned``, no seq: the
        answer is not this cassette's; ``fixtures.py``)."""
        with self._lock:
            self._logged((len(self._log) + 1, tool, digest, None, "pinned"))

    def report(self) -> dict[str, Any]:
        """The replay report as JSON data (``ReplayReport.to_json()`` of
        ``replay_report()``): what the agent writes to ``CASSETTE_REPORT``."""
        with self._lock:
            log = list(self._log)
            data = self._replay_report(()).to_json()
        # each call straight from the log (a CallRecord each was most of a long run's
        # last write); "calls" keeps its place in the schema's order
        data["calls"] = [dict(zip(_CALL_FIELDS, call, strict=True)) for call in log]
        return data

    def summary(self) -> dict[str, Any]:
        """``{"calls", "used", "unused_seqs"}`` so far: the report journal's last line
        (``report_sink``)."""
        with self._lock:
            c = self.cassette
            unused = [c.seq(i) for i in range(len(c)) if i not in self._served]
            return {"calls": len(self._log), "used": len(self._served), "unused_seqs": unused}

    def replay_report(self) -> ReplayReport:
        """The replay report so far (``report.py``; docs/format.md, "Replay
        semantics").

        ``used`` counts recorded entries served at least once; ``repeats`` lists every key
        called more than once, or called and recorded more than once, with its call count
        against its recorded count (a key never called is unused, not repeated: its
        entries are in ``unused_seqs``).
        """
        with self._lock:
            return self._replay_report(tuple(CallRecord(*call) for call in self._log))

    def _replay_report(self, calls: tuple[CallRecord, ...]) -> ReplayReport:
        """``replay_report`` with ``calls`` as its call log. Under ``_lock``."""
        c = self.cassette
        repeats = tuple(
            KeyRepeat(tool, dig, self._calls_per_key.get((tool, dig), 0), len(idxs))
            for (tool, dig), idxs in self._index.items()
            if is_repeated(len(idxs), self._calls_per_key.get((tool, dig), 0))
        )
        return ReplayReport(
            mode="replay",
            cassette=str(c.path) if c.path is not None else None,
            entries=len(c),
            used=len(self._served),
            unused_seqs=tuple(c.seq(i) for i in range(len(c)) if i not in self._served),
            repeats=repeats,
            misses=tuple(self._misses),
            calls=calls,
            new_calls=tuple(self._new) if self.new_calls != "error" else None,
            new_cassette=self.new_cassette,
        )
