"""Pinned fixtures over a base cassette or live tools: one answer held fixed while the rest
of the run goes on (docs/format.md, "Replay semantics").

A fixture is a cassette, usually the one-entry file ``cassette-tui pin`` writes
(``loop/pin.py``). ``wrap_dispatcher(fixtures=[...])`` (``CASSETTE_FIXTURES``, paths
joined by ``os.pathsep``; ``cassette-tui replay --fixture``) looks every call up in the
fixtures first: a call whose key a fixture holds gets the pinned answer (a fixture with
several entries of one key serves them in recorded order, then the last one again: a
pinned answer is held, never used up); every other call goes on as the mode says: served
from the base cassette (replay), run live (live), run live and recorded (record, where the
pinned answers are recorded too: the recording is what the agent saw). With several
fixtures, the first one that holds a key answers it. The keys are computed under the same
rules as the base cassette's.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.cassette import Cassette, load
from ..format.entry import Entry
from ..keys.normalize import NormalizationRules
from ..keys.replay_key import Key, KeyIndex, lookup_key
from ..scan.redact import Redactor

if TYPE_CHECKING:
    from .codec import Codec


class PinnedFixtures:
    """The pinned answers of one or more fixture cassettes.

    Args:
        fixtures: fixture cassettes, loaded or as paths.
        rules: normalization rules for the keys (default: none).
        redactor: live args that miss are looked up again redacted, as ``Replayer``
            does (a fixture redacted after pinning still matches the real call).
        codec: typed values (``codec.py``): live args are encoded by it before they are
            looked up, and ``value`` decodes a response recorded with ``response_types``.

    Raises:
        CassetteFormatError: a fixture path that cannot be loaded (names the file and line).
        ValueError: no fixture given.
    """

    def __init__(
        self,
        fixtures: Sequence[Cassette | str | Path],
        rules: NormalizationRules | None = None,
        redactor: Redactor | None = None,
        codec: Codec | None = None,
    ) -> None:
        if not fixtures:
            raise ValueError("no fixture given")
        self.rules = rules or NormalizationRules()
        self.redactor = redactor if redactor is not None else Redactor()
        self.codec = codec
        self.cassettes: list[Cassette] = []
        for f in fixtures:
            c = f if isinstance(f, Cassette) else load(f, rules=self.rules)
            self.cassettes.append(c.with_rules(self.rules) if c.rules != self.rules else c)
        # the first fixture holding a key answers it: (fixture number, positions)
        self._index: dict[Key, tuple[int, list[int]]] = {}
        for number, c in enumerate(self.cassettes):
            for key, positions in KeyIndex.of(c).items():
                self._index.setdefault(key, (number, positions))
        self._lock = threading.Lock()
        self._calls: dict[Key, int] = {}
        #: how many calls a pinned answer served
        self.served = 0

    @property
    def paths(self) -> list[str]:
        """The fixtures' paths (``"?"`` for one built in memory)."""
        return [str(c.path) if c.path is not None else "?" for c in self.cassettes]

    def answer(self, tool: str, args: Any) -> tuple[Key, Entry] | None:
        """The pinned entry for the call ``(tool, args)`` and its key, or ``None`` when no
        fixture holds its key. The entry is the fixture's own: ``outcome()`` copies it."""
        if self.codec is not None:  # the args as the fixture digested them
            args = self.codec.encode(args)[0]
        key = lookup_key(self._index, self.rules, self.redactor, tool, args)
        found = self._index.get(key)
        if found is None:
            return None
        number, positions = found
        with self._lock:
            n = self._calls.get(key, 0)
            self._calls[key] = n + 1
            self.served += 1
        index = positions[min(n, len(positions) - 1)]
        return key, self.cassettes[number]._entry(index)

    def value(self, entry: Entry) -> Any:
        """What the agent gets from a pinned ``entry``: its response (a fresh copy,
        decoded by the codec when it was recorded with ``response_types``), or its
        recorded error raised as ``ToolError``."""
        value = entry.outcome()
        types = entry.extra.get("response_types")
        if self.codec is not None and isinstance(types, dict):
            value = self.codec.decode(value, types)
        return value
