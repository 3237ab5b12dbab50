"""The detail pane's lines of a value are built from the lines shown only
(``tui/text/shown.py``), and are the lines the whole value gives: the whole value masked
(``mask_value``), pretty-printed and cut (``pretty_lines``), as the pane built them before."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from cassette_tui.core.diff.model import Change, DriftItem
from cassette_tui.core.scan import plain_text_secrets, string_secrets
from cassette_tui.core.scan.masking import mask_value
from cassette_tui.tui.text import shown
from cassette_tui.tui.text.detail import Limits, drift_lines
from cassette_tui.tui.text.safe import pretty_lines
from cassette_tui.tui.text.shown import LONG_TEXT, shown_lines
from hypothesis import given, settings
from hypothesis import strategies as st

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"

texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from([GITHUB, f"token {GITHUB} here", "hunter2-pw", '{"password": "x1y2z3w4"}']),
)
keys = st.one_of(st.text(max_size=8), st.sampled_from(["password", "api_key", "_binary", "q"]))
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)


def whole(value: Any, max_lines: int, max_chars: int, reveal: bool) -> tuple[list[str], int]:
    return pretty_lines(
        value if reveal else mask_value(value), max_lines=max_lines, max_chars=max_chars
    )


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 30), st.integers(1, 40), st.booleans())
def test_the_lines_shown_are_those_of_the_whole_value(
    value: Any, max_lines: int, max_chars: int, reveal: bool
) -> None:
    assert shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=reveal) == whole(
        value, max_lines, max_chars, reveal
    )


def test_a_long_list_is_masked_in_the_lines_shown_and_counts_the_rest() -> None:
    value = {"content": [{"type": "text", "text": f"line {i}"} for i in range(40_000)]}
    value["content"][1]["text"] = f"key {GITHUB}"
    lines, cut = shown_lines(value, max_lines=12, max_chars=160, reveal=False)
    assert (lines, cut) == whole(value, 12, 160, False)
    assert GITHUB not in "\n".join(lines) and "ghp_…(40 chars)" in "\n".join(lines)
    assert cut == len(json.dumps(value, indent=2).split("\n")) - 12


def test_a_long_string_is_masked_as_whole_across_the_cut(monkeypatch: Any) -> None:
    """A secret across the cut is masked; the count of characters cut is the masked
    string's."""
    monkeypatch.setattr(shown, "LONG_TEXT", 100)
    text = "x " * 60 + GITHUB + " y" * 5_000
    lines, cut = shown_lines(text, max_lines=12, max_chars=130, reveal=False)
    assert GITHUB[:10] not in lines[0] and "«ghp_" in lines[0]
    masked = mask_value(text)
    assert lines[0].endswith(f'…(+{len(masked) - 130} chars)"') and cut == 0


#: what the scan finds only by the assignment naming it (no token, low entropy)
PLAIN = "hunter2xyz"


@pytest.mark.parametrize("at", [0, 100_000, 10_000_000])
@pytest.mark.parametrize("in_list", [False, True])
def test_a_password_named_far_past_the_part_shown_is_masked_in_it(at: int, in_list: bool) -> None:
    """A long plain text (an MCP answer, a log) whose password is named by an assignment
    far past the part shown (``at`` characters of prose between): its value where it
    shows first, in the first line, is masked, as the whole text masked shows it. The part
    shown alone holds nothing the scan flags."""
    filler = "line: the quick brown fox jumps over the lazy dog\n" * (at // 50)
    text = f"logged in with {PLAIN} today\n" + filler + f"password = '{PLAIN}'\n"
    value: Any = {"content": [{"type": "text", "text": text}]} if in_list else text
    for max_lines, max_chars in ((12, 160), (2_000, 20_000)):
        got = shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=False)
        assert got == whole(value, max_lines, max_chars, False)
        assert PLAIN not in "\n".join(got[0]) and "«hu…(10 chars)»" in "\n".join(got[0])
    revealed = shown_lines(value, max_lines=12, max_chars=160, reveal=True)
    assert PLAIN in "\n".join(revealed[0])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 3_000),
    st.integers(0, 40),
    st.sampled_from([160, 2_000]),
    st.sampled_from([PLAIN, GITHUB, NAMED_LATER := "s3cr3t-Pa55"]),
    st.sampled_from(["password = '{}'", "api_key={}", "Authorization: Bearer {}"]),
    st.booleans(),
)
def test_a_secret_anywhere_in_a_long_plain_text_is_masked_wherever_it_shows(
    filler: int, at: int, max_chars: int, secret: str, naming: str, in_list: bool
) -> None:
    """Any long plain text with a secret named anywhere in it, its value also written
    ``at`` characters before the cut: the lines and the count cut are those of the whole
    value masked."""
    text = "x" * max(0, max_chars - at) + f"{secret} is it\n"
    text += "".join(f"line {i}: the quick brown fox\n" for i in range(filler))
    text += naming.format(secret) + "\n"
    value: Any = [{"text": text}] if in_list else {"text": text}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shown, "LONG_TEXT", 64)
        got = shown_lines(value, max_lines=12, max_chars=max_chars, reveal=False)
    assert got == whole(value, 12, max_chars, False)
    assert NAMED_LATER  # one of the secrets: found only by how it is named


def test_a_binary_envelope_cut_short_is_still_not_scanned() -> None:
    envelope = {"data": GITHUB, "other": 1, "_binary": True}
    value = {"a": list(range(5)), "blob": envelope}
    assert shown_lines(value, max_lines=9, max_chars=80, reveal=False) == whole(value, 9, 80, False)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 12), st.integers(1, 60), st.booleans(), st.booleans())
def test_a_json_text_is_masked_in_the_part_shown_as_whole(
    inner: Any, max_lines: int, max_chars: int, reveal: bool, pretty: bool
) -> None:
    """An MCP answer whose text is JSON (any text past the window counts as long here):
    the lines, and the count of characters cut, are those of the whole value masked."""
    if not isinstance(inner, dict | list):
        inner = [inner]
    try:
        text = json.dumps(inner, ensure_ascii=False, indent=2 if pretty else None, allow_nan=False)
    except ValueError:
        return
    value = {"content": [{"type": "text", "text": text}]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shown, "LONG_TEXT", 0)
        got = shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=reveal)
    assert got == whole(value, max_lines, max_chars, reveal)


#: what the scan finds only by its key, not by itself (no token, no entropy)
NAMED = "hunter2-rocks-42"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 3_000),
    st.integers(0, 60),
    st.sampled_from([160, 2_000, 20_000]),
    st.sampled_from([NAMED, GITHUB]),
    st.booleans(),
)
def test_a_secret_anywhere_in_a_long_json_text_is_masked_wherever_it_shows(
    filler: int, at: int, max_chars: int, secret: str, pretty: bool
) -> None:
    """The case that a scan of the part shown only got wrong (tried in 28f883b, bounded
    by lines in its place): a password's value is masked where its key is, far past the
    part shown, and so everywhere its text occurs, in the part shown too, where nothing
    else would flag it. The same text also starts ``at`` characters before the cut, so
    that the cut falls inside it."""
    inner: list[Any] = [{"note": "x" * max(0, max_chars - at) + f"{secret} is it"}]
    inner += [{"n": i, "text": f"line {i}: the quick brown fox"} for i in range(filler)]
    inner.append({"password": secret})
    text = json.dumps(inner, indent=2 if pretty else None)
    value = {"content": [{"type": "text", "text": text}], "isError": False}
    got = shown_lines(value, max_lines=12, max_chars=max_chars, reveal=False)
    assert got == whole(value, 12, max_chars, False)
    assert secret not in "\n".join(got[0])
    assert shown_lines(value, max_lines=12, max_chars=max_chars, reveal=True) == whole(
        value, 12, max_chars, True
    )


def test_a_long_json_answer_shows_its_start_masked() -> None:
    inner = [{"n": i, "text": f"line {i}"} for i in range(40_000)]
    inner[2]["api_key"] = "sk-live-aBcDeFgHiJkLmNoPqRsT"
    value = {"content": [{"type": "text", "text": json.dumps(inner)}]}
    lines, cut = shown_lines(value, max_lines=12, max_chars=160, reveal=False)
    assert (lines, cut) == whole(value, 12, 160, False)
    assert "aBcDeFgHiJkLmNoPqRsT" not in "\n".join(lines)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 3_999),
    st.integers(0, 3_999),
    st.sampled_from([NAMED, GITHUB]),
    st.sampled_from([Limits(), Limits.expanded()]),
)
def test_the_drift_of_two_long_json_texts_is_that_of_the_texts_masked_whole(
    named_at: int, shown_at: int, secret: str, limits: Limits
) -> None:
    """Two JSON texts past the drift's scan window (2 x 64 KB) that differ at their end:
    the spot around the difference is masked as the whole texts are, a secret found by its
    key anywhere in them included (the window alone scanned them as text: ``NAMED`` far
    before it was shown whole)."""
    inner: list[Any] = [{"n": i, "text": f"line {i}: the quick brown fox"} for i in range(4_000)]
    inner[named_at]["password"] = secret
    inner[shown_at]["note"] = f"says {secret}"
    inner[-1]["text"] = f"the end: {secret}"
    a = json.dumps(inner)
    inner[-1]["text"] += " (changed)"
    b = json.dumps(inner)
    assert len(a) > LONG_TEXT
    item = DriftItem("$.content[0].text", a, b, Change.VALUE_CHANGED)
    whole_item = replace(item, a=mask_value(a, "text"), b=mask_value(b, "text"))
    got = drift_lines([item], limits, {}).plain
    assert got == drift_lines([whole_item], replace(limits, reveal_secrets=True), {}).plain
    assert secret not in got and "…(" in got


def scanned_whole(value: Any, max_lines: int, max_chars: int, reveal: bool) -> list[str]:
    """``whole``'s lines with every string scanned whole (``scan_string``), the prefilter
    and the pieces of ``plain_text_secrets`` left out: the reference itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(string_secrets, "PROVE_FREE_MIN", 10**12)
        return whole(value, max_lines, max_chars, reveal)


#: a plain (not JSON) text's parts: found by the keyword plugin (``password = '...'``)
#: far from where the same text shows, by a URL, a bearer word, a key name in text
PLAIN_PARTS = [
    "the quick brown fox jumps over the lazy dog",
    "hunter2xyz",
    "password = 'hunter2xyz'",
    GITHUB,
    "https://user:pw1234xyz@host.example.com/path",
    "https://user@example.com/docs/7",
    "Bearer abcdefgh12345678",
    "api_key=zz9yy8xx7ww6",
    "line 12: ok",
    "\n",
    "\n\n",
    " " * 40,
]
plain_texts = st.lists(st.sampled_from(PLAIN_PARTS), min_size=1, max_size=200).map(" ".join)
long_values = st.recursive(
    st.one_of(plain_texts, texts, st.integers()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(long_values, st.integers(1, 30), st.integers(1, 200), st.booleans())
def test_long_plain_strings_anywhere_are_masked_as_the_whole_scan_masks_them(
    value: Any, max_lines: int, max_chars: int, reveal: bool
) -> None:
    """Values holding long plain strings (every string counts as long, is asked of the
    prefilter and cut in pieces of 600 characters): the lines are those of the whole value
    masked by the scan of every string whole, a secret found far from where its text shows
    included (``hunter2xyz``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shown, "LONG_TEXT", 0)
        mp.setattr(string_secrets, "PROVE_FREE_MIN", 0)
        mp.setattr(plain_text_secrets, "PIECE", 600)
        mp.setattr(plain_text_secrets, "_PIECE_MIN", 401)
        shown._TEXTS.clear()
        got = shown_lines(value, max_lines=max_lines, max_chars=max_chars, reveal=reveal)
    assert got == scanned_whole(value, max_lines, max_chars, reveal)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 5_998),  # the last line is the end
    st.sampled_from(["plain", "json against text"]),
    st.sampled_from([Limits(), Limits.expanded()]),
)
def test_the_drift_of_a_json_text_against_a_text_is_that_of_the_texts_masked_whole(
    password_at: int, kinds: str, limits: Limits
) -> None:
    """Two long texts that differ at their end, two plain ones or a JSON text against the
    same text cut so that it is no longer JSON (scanned as text): the spot around the
    difference is masked as the whole texts are, so ``hunter2xyz`` shows masked at the
    spot while ``password = 'hunter2xyz'`` is far before it (main scanned 64 KB either
    side of the difference as text)."""
    lines = [f"line {i}: the quick brown fox" for i in range(6_000)]
    lines[password_at] += " password = 'hunter2xyz'"
    lines[-1] = "the end: hunter2xyz"
    if kinds == "plain":
        a = "\n".join(lines)
        b = a + " (changed)"
    else:
        a = json.dumps([{"text": line} for line in lines])
        b = a[:-3] + " (changed)"  # no longer JSON: scanned as text
    assert max(len(a), len(b)) > 2 * 64 * 1024
    item = DriftItem("$.content[0].text", a, b, Change.VALUE_CHANGED)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(string_secrets, "PROVE_FREE_MIN", 10**12)
        whole_item = replace(item, a=mask_value(a, "text"), b=mask_value(b, "text"))
    got = drift_lines([item], limits, {}).plain
    assert got == drift_lines([whole_item], replace(limits, reveal_secrets=True), {}).plain
    assert "hunter2xyz" not in got and "«hu…(10 chars)»" in got


@settings(max_examples=500, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.floats()
        | st.text()
        | st.sampled_from(["\ud800", "x" * 5000, "é\udfff"]),
        lambda inner: (
            st.lists(inner, max_size=6)
            | st.dictionaries(st.text(max_size=3) | st.just("\udc80"), inner, max_size=6)
        ),
        max_leaves=40,
    )
)
def test_the_lines_counted_by_a_walk_are_orjson_s(value: Any) -> None:
    """``_line_count`` walks a value of few nodes: the count orjson's print gives, and
    ``None`` where orjson refuses the value."""
    import orjson

    try:
        expected: int | None = orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
    except (orjson.JSONEncodeError, TypeError):
        expected = None
    assert shown._line_count(value) == expected
    walked = shown._walked_lines(value)
    assert walked is None or walked == expected


def test_deep_values_are_left_to_orjson() -> None:
    deep: Any = []
    for _ in range(300):
        deep = [deep]
    assert shown._walked_lines(deep) is None
    assert shown._line_count(deep) is None


def test_a_large_value_is_printed_once_to_count_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pane, the step screen and ``e`` show the same entry's value: orjson prints a
    value too large to walk once for the count of its lines, not at each view (9 ms for
    a 2.4 MB list of objects, 0.1 s at 24 MB); an equal value that is another object is
    counted on its own, and the lines are those of the whole value each time."""
    import orjson

    printed: list[Any] = []

    def dumps(value: Any, *args: Any, **kwargs: Any) -> bytes:
        printed.append(value)
        return orjson.dumps(value, *args, **kwargs)

    fake = type("orjson", (), {"dumps": staticmethod(dumps), "OPT_INDENT_2": orjson.OPT_INDENT_2,
                               "JSONEncodeError": orjson.JSONEncodeError})  # fmt: skip
    monkeypatch.setattr(shown, "orjson", fake)
    shown._COUNTS.clear()
    value = {"content": [{"type": "text", "text": f"line {i}"} for i in range(3_000)]}
    for lines, chars in ((12, 160), (2_000, 20_000), (12, 160)):
        assert shown_lines(value, max_lines=lines, max_chars=chars, reveal=False) == whole(
            value, lines, chars, False
        )
    assert [id(v) for v in printed] == [id(value)]
    equal = json.loads(json.dumps(value))
    equal["content"].append("one more")
    assert shown_lines(equal, max_lines=12, max_chars=160, reveal=False) == whole(
        equal, 12, 160, False
    )
    assert [id(v) for v in printed] == [id(value), id(equal)]


def test_the_part_shown_free_of_secrets_is_not_scanned_a_string_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``e`` on a list answer shows 2,000 of its strings: the part shown is proved free by
    one pass of the prefilter (``masking.mask_part``), its strings not scanned one by one
    (3 ms a side), and the lines are those of the whole value masked."""
    from cassette_tui.core.scan import masking

    value = {"content": [f"line {i}: the quick brown fox jumps" for i in range(5_000)]}
    expected = whole(value, 2_000, 20_000, False)

    def scanned(*args: object) -> None:
        raise AssertionError("scanned a string at a time")

    monkeypatch.setattr(masking, "string_leaf_secrets", scanned)
    assert shown_lines(value, max_lines=2_000, max_chars=20_000, reveal=False) == expected


def test_the_drift_of_two_long_texts_is_compared_once_over_the_views(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pane, the step screen and ``e`` show the drift of the same two texts, masked
    once (``masked_long_text``): their first difference is found once (two masked 24 MB
    texts, not ASCII, took 13 ms at each view; now read from the texts and their masked
    pieces, ``masked_first_difference``), and each view shows what a fresh one
    shows, cut and expanded."""
    from cassette_tui.core.scan import masked_text
    from cassette_tui.tui.text import detail

    lines = [f"line {i}: the quick brown fox" for i in range(3_000)]
    lines[0] = f"token {GITHUB} at 09:00"
    a = "\n".join(lines)
    b = a + " (changed)"
    item = DriftItem("$.content[0].text", a, b, Change.VALUE_CHANGED)
    fresh: dict[bool, str] = {}
    for limits in (Limits(), Limits.expanded()):
        shown._TEXTS.clear()
        detail._DIFFERS.clear()
        fresh[limits.is_expanded] = drift_lines([item], limits, {}).plain
    assert GITHUB not in fresh[False] + fresh[True]
    compared: list[tuple[object, object]] = []

    def first_difference(
        x: masked_text.MaskedText, y: masked_text.MaskedText, same: int | None = None
    ) -> int:
        compared.append((x, y))
        return masked_text.masked_first_difference(x, y, same)

    monkeypatch.setattr(detail, "masked_first_difference", first_difference)
    detail._DIFFERS.clear()
    for limits in (Limits(), Limits(), Limits.expanded(), Limits.expanded()):
        assert drift_lines([item], limits, {}).plain == fresh[limits.is_expanded]
    assert len(compared) == 1


def _forbid_whole(mp: pytest.MonkeyPatch) -> None:
    """Raise where a long text would be masked whole: ``masking._mask_long_text`` (the
    way main masked the pane's and the drift's long texts), a ``MaskedText`` built."""
    import importlib.util

    from cassette_tui.core.scan import masking

    def built(*args: object, **kwargs: object) -> str:
        raise AssertionError("the whole masked text was built")

    mp.setattr(masking, "_mask_long_text", built)
    if importlib.util.find_spec("cassette_tui.core.scan.masked_text"):  # not on main
        from cassette_tui.core.scan import masked_text

        mp.setattr(masked_text.MaskedText, "__str__", built)


@pytest.mark.parametrize(
    "at",
    [0, 150, 152, 155, 159, 160, 161, 19_995, 20_000, -1, -12],
    ids=lambda at: f"at{at}",
)
def test_a_first_view_masks_only_what_it_shows(at: int) -> None:
    """The pane's lines (cut and expanded) and the drift of a long text with a password
    named near its end, its value also at ``at`` (across the 160 and 20,000 characters
    shown, at the start, at the end: ``-1`` ends the text with it, ``-12`` sets it just
    before where B differs) are those of the whole text masked, with no whole masked
    text built (main built each side, 69 MB at 24 MB, for 160 characters shown), and the
    password never shows."""
    from cassette_tui.tui.text import detail

    lines = [f"line {i}: the quick brown fox jumps over" for i in range(6_000)]
    lines[-40] = "config: password = 'hunter2xyz'"
    text = "\n".join(lines)
    cut = len(text) + at + 1 if at < 0 else at
    a = text[:cut] + "hunter2xyz" + text[cut:]
    if at == -1:
        a = text + " hunter2xyz"
    b = a + " (changed)" if at != -12 else a[:-1] + "X" + "(changed)"
    value = {"content": [{"type": "text", "text": a}], "isError": False}
    item = DriftItem("$.content[0].text", a, b, Change.VALUE_CHANGED)
    expected = {}
    for limits in (Limits(), Limits.expanded()):
        whole_item = replace(item, a=mask_value(a, "text"), b=mask_value(b, "text"))
        reveal = replace(limits, reveal_secrets=True)
        expected[limits] = (
            whole(value, limits.lines, limits.chars, False),
            drift_lines([whole_item], reveal, {}).plain,
        )
    with pytest.MonkeyPatch.context() as mp:
        _forbid_whole(mp)
        for limits in (Limits(), Limits.expanded()):
            shown._TEXTS.clear()
            detail._DIFFERS.clear()
            detail._APART.clear()
            got = (
                shown_lines(value, max_lines=limits.lines, max_chars=limits.chars, reveal=False),
                drift_lines([item], limits, {}).plain,
            )
            assert got == expected[limits]
            shown_text = repr(got)  # the mask shows "hu" at most, perhaps cut at its start
            assert "unter" not in shown_text and "2xyz" not in shown_text
        assert "«hu…(10 chars)»" in shown_text or at not in (0, -1, -12)
