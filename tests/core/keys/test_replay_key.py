"""The replay key, its index and the lookup of a live call (core/keys/replay_key.py)."""

from __future__ import annotations

from typing import Any

from cassette_tui.core import Cassette, Entry, NormalizationRules
from cassette_tui.core.format.digest import digest
from cassette_tui.core.keys.replay_key import (
    KeyIndex,
    args_digest,
    call_key,
    is_repeated,
    lookup_key,
)

DROP_TS = NormalizationRules.from_mapping({"drop": ["ts"]})


def test_the_key_is_the_tool_and_the_digest_of_the_normalized_args() -> None:
    args = {"q": "x", "ts": 1}
    assert args_digest(DROP_TS, "search", args) == digest({"q": "x"})
    assert call_key(DROP_TS, "search", args) == ("search", digest({"q": "x"}))
    assert call_key(NormalizationRules(), "search", args) == ("search", digest(args))


def test_the_index_of_a_cassette_keeps_file_order() -> None:
    c = Cassette.from_entries(
        Entry(seq, tool, args)
        for seq, (tool, args) in enumerate(
            [("a", {"x": 1}), ("b", {}), ("a", {"x": 1}), ("a", {"x": 2}), ("a", {"x": 1})], 1
        )
    )
    index = KeyIndex.of(c)
    key = c.key(0)
    assert index[key] == [0, 2, 4] and index.count(key) == 3 and index.first(key) == 0
    assert index.count(("a", "nope")) == 0 and index.first(("a", "nope")) is None
    assert index.repeated() == {key: [0, 2, 4]}
    assert list(index) == [c.key(0), c.key(1), c.key(3)]


def test_an_index_of_a_subset_keeps_its_positions() -> None:
    index = KeyIndex.from_keys(["k", "j", "k"], [3, 7, 9])
    assert index == {"k": [3, 9], "j": [7]}


class Masks:
    """Replaces the secret ``s3cr3t`` in the ``token`` arg."""

    def redact_args(self, tool: str, args: Any) -> Any:
        if args.get("token") == "s3cr3t":
            return {**args, "token": "<redacted>"}
        return args


def test_lookup_tries_the_redacted_args_when_the_raw_ones_miss() -> None:
    rules = NormalizationRules()
    raw = {"token": "s3cr3t"}
    redacted_key = call_key(rules, "t", {"token": "<redacted>"})
    assert lookup_key({redacted_key}, rules, Masks(), "t", raw) == redacted_key
    assert lookup_key({redacted_key}, rules, None, "t", raw) == call_key(rules, "t", raw)
    raw_key = call_key(rules, "t", raw)
    assert lookup_key({raw_key, redacted_key}, rules, Masks(), "t", raw) == raw_key
    assert lookup_key(set(), rules, Masks(), "t", raw) == raw_key  # a miss names the raw key


def test_a_key_is_repeated_when_called_twice_or_called_and_recorded_twice() -> None:
    assert is_repeated(recorded=1, calls=2)
    assert is_repeated(recorded=2, calls=1)
    assert not is_repeated(recorded=1, calls=1)
    assert not is_repeated(recorded=3, calls=0)
