"""The secrets of a long string found with the prefilter first (``string_secrets``) are
those the scan alone finds (``scan_string``), for any text under any key; ``mask_value``
of a string, which uses it, is the string masked by the scan's secrets."""

from __future__ import annotations

from typing import Any

import pytest
from cassette_tui.core.scan import string_secrets as module
from cassette_tui.core.scan._secret_detectors import scan_string
from cassette_tui.core.scan.masking import _mask_text, mask_long_text, mask_value
from cassette_tui.core.scan.string_secrets import string_secrets
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.scan.test_secret_prefilter import GITHUB, texts

NAMED = "hunter2xyz"
FILLERS = [
    "line {i}: the quick brown fox jumps over the lazy dog, ok\n",
    "https://example.com/path/{i}?q=abc{i}&page={i} ",
    "{i} ",
]
KEYS = [None, "text", "request_id", "content", "password", "note"]


def _long(filler: str, count: int, pieces: list[str], at: list[int]) -> str:
    lines = [filler.format(i=i) for i in range(count)]
    for piece, where in zip(pieces, at, strict=False):
        lines.insert(where % (len(lines) + 1), piece)
    return "".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    filler=st.sampled_from(FILLERS),
    count=st.integers(0, 900),
    pieces=st.lists(texts, max_size=4),
    at=st.lists(st.integers(0, 10_000), max_size=4),
    key=st.sampled_from(KEYS),
    prove_from=st.sampled_from([0, 1, module.PROVE_FREE_MIN]),
)
@example(  # a password named far past the start, its value near the start
    filler=FILLERS[0],
    count=400,
    pieces=[f"{NAMED} was used\n", f"password = '{NAMED}'\n"],
    at=[1, 390],
    key="text",
    prove_from=0,
)
def test_the_secrets_are_the_scans(
    filler: str,
    count: int,
    pieces: list[str],
    at: list[int],
    key: str | None,
    prove_from: int,
) -> None:
    text = _long(filler, count, pieces, at)
    expected = [(s, d) for s, d, _ in scan_string(text, key)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "PROVE_FREE_MIN", prove_from)
        assert string_secrets(text, key) == expected


def test_a_name_far_from_its_value_is_found_in_a_long_text() -> None:
    text = _long(FILLERS[0], 4_000, [f"{NAMED} was used\n", f"password = '{NAMED}'\n"], [1, 3_990])
    assert len(text) > 200_000 and text.index(NAMED) < 200
    assert NAMED in {s for s, _ in string_secrets(text, "text")}
    masked = mask_value(text, "text")
    assert NAMED not in masked and masked == _mask_text(text, [NAMED])
    assert mask_long_text(text, "text") == masked


def test_a_long_free_text_is_itself() -> None:
    text = _long(FILLERS[1], 60_000, [], [])
    assert len(text) > 3_000_000
    assert string_secrets(text, "text") == []
    assert mask_value(text, "text") is text and mask_long_text(text, None) is text


def test_a_text_that_is_not_json_writable_is_scanned() -> None:
    text = "x" * 20_000 + "\ud800" + f" token {GITHUB}"
    assert {s for s, _ in string_secrets(text, None)} == {GITHUB}


@pytest.mark.parametrize("key", ["password", "api_key"])
def test_a_secret_key_leaves_the_text_to_mask_value(key: str) -> None:
    text = "y" * 30_000
    assert mask_long_text(text, key) is None
    shown: Any = mask_value(text, key)
    assert text not in shown


def _prefilter_free_by_the_line(text: str, key: str | None) -> bool:
    """``prefilter_free`` as it was: the JSON line written, its escapes read back."""
    import orjson
    from cassette_tui.core.scan._secret_prefilter import lines_secret_free

    try:
        doc = orjson.dumps([text] if key is None else {key: text})
    except (orjson.JSONEncodeError, TypeError):
        return False
    return lines_secret_free([doc])[0]


JSON_PIECES = ['{"n": 1, "text": "', '"}', ", ", "[", "]", '"', "'", "`", "{", "}", ":", "\\", "\n"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(texts | st.sampled_from(JSON_PIECES), max_size=12),
    key=st.sampled_from([*KEYS, 'a"b', "x\\y", "tab\there", "é", "\x00"]),
)
@example(parts=['[{"api_key": "', "sk-proj-aB3_dE-9aB3_dE-9aB3_dE-9", '"}]'], key="text")
@example(parts=['[{"n": 1, "text": "', "line 1: ok", '"}]'], key="text")
def test_the_prefilter_s_proof_of_a_text_is_the_line_s(parts: list[str], key: str | None) -> None:
    """``prefilter_free`` (the rebuilt line made from the text's bytes when it holds no
    backslash and no NUL) answers as the JSON line of the text written and read back; a
    text it calls free holds no secret for the scan, read as JSON or as text."""
    text = "".join(parts)
    free = module.prefilter_free(text, key)
    assert free == _prefilter_free_by_the_line(text, key)
    if free:
        assert scan_string(text, key) == []


@settings(max_examples=250, deadline=None)
@given(st.lists(texts | st.sampled_from(JSON_PIECES + [" ", "\t", "\x0b", "1"]), max_size=10))
def test_a_text_that_is_no_json_container_does_not_parse_as_one(parts: list[str]) -> None:
    """``json_container`` is ``False`` only for a text the scan does not parse as a JSON
    object or list (it does not parse, or parses as something else)."""
    import orjson

    text = "".join(parts)
    if not module.json_container(text):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return
        assert not isinstance(value, dict | list) or text.lstrip()[:1] not in "{["
