"""Big bodies' buffers lent again through ``mcp record --url`` (``http._Spares``, issue 31:
a fresh 50 MB buffer costs 12,800 page faults): a body gathered on a buffer gone by is
the pieces joined, however they split and whatever the buffer held before, and a buffer
that anything still holds (the line of a call in flight, a view of it) is never lent."""

from __future__ import annotations

from cassette_tui.core.mcp.http import _Gathered, _Spares
from hypothesis import given
from hypothesis import strategies as st

bodies = st.lists(st.lists(st.binary(max_size=300), max_size=8), min_size=1, max_size=5)


def gather(gathered: _Gathered, parts: list[bytes]) -> bytearray:
    for part in parts:
        gathered.add(part)
    return gathered.whole()


@given(bodies)
def test_each_body_gathered_on_a_lent_buffer_is_its_pieces_joined(seq: list[list[bytes]]) -> None:
    spares = _Spares()
    for parts in seq:
        whole = gather(spares.gathered(), parts)
        assert whole == b"".join(parts)
        del whole  # let go: its buffer may be lent to the next body


@given(bodies)
def test_a_held_body_is_never_written_over(seq: list[list[bytes]]) -> None:
    spares = _Spares(keep=2)
    held: list[tuple[bytearray | memoryview, bytes]] = []
    for n, parts in enumerate(seq):
        whole = gather(spares.gathered(), parts)
        # kept as the line itself, or only through a view of it
        held.append((whole if n % 2 else memoryview(whole), b"".join(parts)))
        del whole
    for line, body in held:
        assert bytes(line) == body


def test_a_buffer_nothing_holds_is_lent_again_and_one_held_is_not() -> None:
    spares = _Spares(keep=2)
    first = gather(spares.gathered(), [b"x" * 1000])
    buffer_id = id(first)
    del first
    again = spares.gathered()
    assert again.buffer is not None and id(again.buffer) == buffer_id
    held = gather(again, [b"y" * 10])
    assert held == b"y" * 10
    other = spares.gathered()  # the first is held: a new buffer
    assert other.buffer is not held


def test_a_buffer_past_most_is_not_kept() -> None:
    spares = _Spares(keep=2, most=100)
    big = gather(spares.gathered(), [b"z" * 101])
    del big
    assert spares.gathered().buffer == b""
    assert len(spares._kept) == 1


def test_a_body_starts_empty_on_a_lent_buffer() -> None:
    spares = _Spares()
    done = gather(spares.gathered(), [b"abc" * 100])
    del done
    gathered = spares.gathered()
    assert gathered.size == 0
    assert gathered.whole() == b""
