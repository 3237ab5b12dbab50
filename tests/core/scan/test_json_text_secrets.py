"""The secrets of a JSON text found part by part (``json_text_secrets``: the prefilter over
the parts, the scan of those it cannot call free) are those the scan of every node finds
(``scan_string``), for any value, any split of it, and any layout of its text; a screen
masks with them (``mask_json_text`` is ``mask_value`` of the text)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from cassette_tui.core.scan import json_text_secrets as module
from cassette_tui.core.scan import masking
from cassette_tui.core.scan._secret_detectors import is_secret_key, scan_string
from cassette_tui.core.scan.json_text_secrets import json_text_secrets
from cassette_tui.core.scan.masking import mask_json_text, mask_value
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.scan.test_secret_prefilter import GITHUB, keys, texts

#: the values of ``test_secret_prefilter`` (each detector's texts and near misses, secret
#: and id-like keys, binary envelopes, JSON held in a string), wider: a part splits when
#: it has more children than one
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: (
        st.lists(inner, max_size=20)
        | st.dictionaries(keys, inner, max_size=20)
        | st.builds(lambda v, a: json.dumps(v, ensure_ascii=a), inner, st.booleans())
    ),
    max_leaves=60,
)


def _scanned(text: str, key: str | None) -> set[str]:
    return {secret for secret, _, _ in scan_string(text, key)}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inner=st.lists(values, max_size=40) | st.dictionaries(keys, values, max_size=40),
    scan_bytes=st.sampled_from([0, 40, 300, module.SCAN_BYTES]),
    split=st.sampled_from([2, 3, module.SPLIT]),
    indent=st.sampled_from([None, 2]),
    ascii_only=st.booleans(),
    key=st.sampled_from([None, "text", "request_id", "content"]),
)
@example(  # a password's value repeated in a note the first part holds, not flagged there
    inner=[
        {"note": "hunter2-rocks-42 is it"},
        *([{"n": 1}] * 30),
        {"password": "hunter2-rocks-42"},
    ],
    scan_bytes=0,
    split=2,
    indent=None,
    ascii_only=False,
    key="text",
)
@example(  # a list under a secret-named key: each of its strings is a secret by that key
    inner={"password": ["abc12345", "x" * 5, ["hunter2-rocks-42"]], "q": [1] * 20},
    scan_bytes=0,
    split=2,
    indent=2,
    ascii_only=True,
    key=None,
)
def test_the_parts_give_the_secrets_of_the_whole(
    inner: Any,
    scan_bytes: int,
    split: int,
    indent: int | None,
    ascii_only: bool,
    key: str | None,
) -> None:
    try:
        text = json.dumps(inner, ensure_ascii=ascii_only, indent=indent, allow_nan=False)
        parsed = orjson.loads(text)
    except (ValueError, orjson.JSONDecodeError):
        return  # not a text the scan parses (a lone surrogate, a huge number)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "SCAN_BYTES", scan_bytes)
        mp.setattr(module, "SPLIT", split)
        found = json_text_secrets(parsed)
        masked = mask_json_text(text, parsed, key)
    assert found == _scanned(text, key), text
    assert masked == mask_value(text, key)


def test_a_long_text_free_of_secrets_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """40k small objects with no secret: the prefilter calls the whole text free at once,
    no node is scanned."""
    inner = [{"n": i, "text": f"line {i}: the quick brown fox"} for i in range(40_000)]
    scanned: list[Any] = []
    monkeypatch.setattr(module, "_scan_node", lambda *a: scanned.append(a))
    assert json_text_secrets(inner) == set() and scanned == []


def test_a_secret_deep_in_a_long_text_is_found_by_scanning_its_part_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inner = [{"n": i, "text": f"line {i}: the quick brown fox"} for i in range(40_000)]
    inner[31_337]["auth"] = {"api_key": "not-random-but-named"}
    inner[39_999]["text"] = f"token {GITHUB}"
    scanned: list[Any] = []
    scan_node = module._scan_node
    monkeypatch.setattr(module, "_scan_node", lambda *a: (scanned.append(a), scan_node(*a)))
    found = json_text_secrets(inner)
    assert found == _scanned(json.dumps(inner), None) == {"not-random-but-named", GITHUB}
    assert 0 < sum(len(orjson.dumps(node)) for node, *_ in scanned) <= 4 * module.SCAN_BYTES


#: pieces of a text and of its secrets: the cut characters, the masks' own characters, a
#: character JSON escapes, overlapping and repeated runs
_BITS = ["a", "ab", "aba", "b", "\n", "{", ",", "}", " ", "«", "»", "…", "(", "4 chars)", '"', "é"]


@settings(max_examples=500, deadline=None)
@given(
    text=st.lists(st.sampled_from(_BITS), max_size=80).map("".join),
    secrets=st.lists(
        st.lists(st.sampled_from(_BITS), max_size=4).map("".join), max_size=6
    ),  # fmt: skip
    piece=st.integers(1, 8),
)
def test_a_long_text_is_masked_by_pieces_as_whole(
    text: str, secrets: list[str], piece: int
) -> None:
    """Cut at a character no secret holds, each piece masked in turn gives the text masked
    whole, whatever the secrets (one inside another, across one another's masks)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(masking, "_PIECE", piece)
        got = masking._mask_long_text(text, secrets)
    assert got == masking._mask_text(text, secrets)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inner=st.lists(values, max_size=40) | st.dictionaries(keys, values, max_size=40),
    first_parts=st.sampled_from([2, 3, 16, 100]),
    indent=st.sampled_from([None, 2]),
    ascii_only=st.booleans(),
    key=st.sampled_from([None, "text", "request_id", "content", "pass word", 'a"b', "x\\y"]),
    tail=st.sampled_from(["", " ", "\n", " (changed)", "]", "}", "x"]),
)
@example(  # a key named so among many free objects: the proof of the whole fails
    inner=[{"n": i, "text": "the quick brown fox"} for i in range(30)]
    + [{"api_key": "sk-proj-aB3_dE-9aB3_dE-9aB3_dE-9"}],
    first_parts=16,
    indent=None,
    ascii_only=False,
    key="text",
    tail="",
)
@example(  # an object key found by its high-entropy run alone (no pattern of the prefilter hits)
    inner=[None, {"Q2hhbmdlIHRoaXMgcGFzc3dvcmQgc29vbiE9kZ3xY7pW": None}],
    first_parts=2,
    indent=None,
    ascii_only=False,
    key=None,
    tail="",
)
def test_a_long_json_text_is_masked_as_mask_value_masks_it(
    inner: Any,
    first_parts: int,
    indent: int | None,
    ascii_only: bool,
    key: str | None,
    tail: str,
) -> None:
    """``mask_long_text`` of a JSON text, or of one with more after it (read as text, not
    parsed), is ``mask_value`` of it: the prefilter asked about the whole text first
    (``string_secrets.prefilter_free``), then, when it cannot call it free, about
    ``first_parts`` parts of its value; the secrets found so are the scan's."""
    try:
        text = json.dumps(inner, ensure_ascii=ascii_only, indent=indent, allow_nan=False)
        parsed = orjson.loads(text)
    except (ValueError, orjson.JSONDecodeError):
        return  # not a text the scan parses (a lone surrogate, a huge number)
    assert json_text_secrets(parsed, first_parts=first_parts) == _scanned(text, key)
    text += tail
    masked = masking.mask_long_text(text, key)
    if masked is None:  # a secret-named key: the whole text is the secret
        assert key is not None and is_secret_key(key)
    else:
        assert masked == mask_value(text, key)
