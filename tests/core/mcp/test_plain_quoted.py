"""A long string's bytes checked for ``_spans._PLAIN`` (printable ASCII, no quote, no
backslash) by ``find`` and jiter's string reader (``_quoted_plain``, issue 31 session 17)
give what ``translate`` gave (the reference below, main's ``_plain``), for any bytes and
any range, in ``bytes`` and in a ``bytearray`` (a lent body's buffer: no view of it is
left behind, so it can still grow)."""

from __future__ import annotations

from cassette_tui.core.mcp._spans import _PLAIN, _QUOTED_FROM, _plain, _quoted_plain
from hypothesis import event, given, settings
from hypothesis import strategies as st


def reference(data: bytes | bytearray, first: int, last: int) -> bool:
    """Main's ``_plain``: the range's bytes that are not plain, by ``translate``."""
    return not bytes(data[first:last]).translate(None, _PLAIN)


#: bytes a JSON string reader treats apart (controls, DEL, quote, backslash, the escapes'
#: letters, non-ASCII) among plain ones
ODD = [*range(0x20), 0x7F, 0x22, 0x5C, 0x75, 0x6E, 0x80, 0xC3, 0xA9, 0xFF]


@st.composite
def pieces(draw: st.DrawFn) -> tuple[bytes, int, int]:
    size = draw(st.integers(0, 3 * _QUOTED_FROM))
    data = bytearray(b"plain text, 0123 {}[]:/-_~ " * (size // 28 + 1))[:size]
    for _ in range(draw(st.integers(0, 3))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.sampled_from(ODD))
    first = draw(st.integers(0, len(data)))
    last = draw(st.integers(first, len(data)))
    return bytes(data), first, last


@settings(max_examples=600, deadline=None)
@given(pieces())
def test_the_check_gives_what_translate_gave(piece: tuple[bytes, int, int]) -> None:
    data, first, last = piece
    expected = reference(data, first, last)
    event(f"plain: {expected}, long: {last - first >= _QUOTED_FROM}")
    assert _plain(data, first, last) == expected
    held = bytearray(data)
    assert _plain(held, first, last) == expected
    held.extend(b"more")  # no view left behind: the buffer can still grow
    if data.isascii():
        assert _quoted_plain(data, first, last) == expected


@given(st.sampled_from(ODD), st.integers(0, _QUOTED_FROM))
def test_one_odd_byte_in_a_long_ascii_range_is_found(odd: int, at: int) -> None:
    data = bytearray(b"x" * (_QUOTED_FROM + 1))
    data[at] = odd
    assert _plain(bytes(data), 0, len(data)) == reference(data, 0, len(data))
    assert _plain(bytes(data), at + 1, len(data)) is True
