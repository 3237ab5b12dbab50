"""``mask_part`` (the part of an answer a screen shows, asked of the prefilter first) masks
a value as ``mask_value`` does, and a part the prefilter calls free is not scanned a
string at a time."""

from __future__ import annotations

from typing import Any

import pytest
from cassette_tui.core.scan import masking
from cassette_tui.core.scan.masking import mask_part, mask_value
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.scan.test_json_text_secrets import values
from tests.core.scan.test_secret_prefilter import GITHUB, keys


class _Opaque:
    """What orjson cannot write (the screen's masked long strings are such objects)."""


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=values
    | st.lists(values, max_size=40)
    | st.dictionaries(keys, values, max_size=40)
    | st.lists(values | st.builds(_Opaque), max_size=5)
)
# an object key found by its high-entropy run alone (no pattern of the prefilter hits)
@example(value={"Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW": None})
def test_a_part_is_masked_as_mask_value_masks_it(value: Any) -> None:
    assert mask_part(value) == mask_value(value)


def test_a_part_free_of_secrets_is_not_scanned_a_string_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 2,000 lines of an expanded list answer: one pass of the prefilter, not a scan
    of each string; a part with a secret is still masked."""
    part = {"content": [f"line {i}: the quick brown fox jumps" for i in range(2_000)]}
    secret = {"content": [*part["content"][:5], f"token {GITHUB}"]}
    expected = mask_value(secret)
    assert expected != secret

    def scanned(*args: object) -> None:
        raise AssertionError("scanned a string at a time")

    monkeypatch.setattr(masking, "string_leaf_secrets", scanned)
    assert mask_part(part) is part
    monkeypatch.undo()
    assert mask_part(secret) == expected
