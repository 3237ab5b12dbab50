"""The stdio reader's lines (``_stdio.iter_lines``, issue 31: reads into one reused buffer,
a big line handed on as that buffer, a long line in pieces): whatever the line sizes and
however the writer splits its writes, the lines are the bytes' lines, and the bytes passed
on as they come (the pieces, then each line's end) are the bytes written, in order.
Through a real pipe, widened as the proxy widens its own."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from cassette_tui.core.mcp._stdio import (
    BUFFER_SIZE,
    GIVE_FROM,
    LineEnd,
    Piece,
    iter_lines,
    read_lines,
    widen_pipe,
)
from hypothesis import given, settings
from hypothesis import strategies as st

#: line lengths around every size where the reader changes what it does
SIZES = st.sampled_from(
    [0, 1, 70, GIVE_FROM - 1, GIVE_FROM, GIVE_FROM + 1, BUFFER_SIZE - 1, BUFFER_SIZE + 3]
) | st.integers(min_value=0, max_value=3 * BUFFER_SIZE)
PIECES_FROM = st.sampled_from([None, 1 << 20, 4 << 20])


def spares(kind: str) -> Callable[[], bytearray | None] | None:
    """A ``spare`` for ``iter_lines``: none, or buffers full of other bytes (what is in
    them must not matter), given every time or every other time."""
    if kind == "none":
        return None
    asked = [0]

    def spare() -> bytearray | None:
        asked[0] += 1
        if kind == "sometimes" and asked[0] % 2:
            return None
        return bytearray(b"\n#" * (BUFFER_SIZE // 2))

    return spare


def through_pipe(
    data: bytes, writes: list[int], pieces_from: int | None, spare: str = "none"
) -> tuple[list, bytes]:
    """``(lines, bytes passed on)`` as a proxy's thread sees them: ``data`` written in
    ``writes``-sized parts (then the rest) into a pipe read by ``iter_lines`` (``spare``:
    the buffers it takes after handing its own on, ``spares``)."""
    r, w = os.pipe()
    widen_pipe(w)

    def write() -> None:
        view, pos = memoryview(data), 0
        for size in [*writes, len(data)]:
            while size and pos < len(data):
                done = os.write(w, view[pos : pos + size])
                pos, size = pos + done, size - done
        os.close(w)

    writer = threading.Thread(target=write)
    writer.start()
    lines: list[bytes] = []
    passed = bytearray()
    try:
        for item in iter_lines(r, pieces_from, spares(spare)):
            if isinstance(item, list):
                lines += [bytes(line) for line in item]
                passed += b"".join(item)
            elif isinstance(item, Piece):  # valid until the next item: used at once
                passed += item.data
            else:
                assert isinstance(item, LineEnd)
                passed += item.data
                lines.append(bytes(item.whole))
    finally:
        writer.join()
        os.close(r)
    return lines, bytes(passed)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(SIZES, max_size=5),
    tail=st.sampled_from([0, 5, GIVE_FROM + 7]),
    writes=st.lists(st.sampled_from([1, 100, 1 << 16, 1 << 20, 3 << 20]), max_size=4),
    pieces_from=PIECES_FROM,
    spare=st.sampled_from(["none", "always", "sometimes"]),
)
def test_the_lines_are_the_bytes_lines_however_they_were_written(
    sizes: list[int], tail: int, writes: list[int], pieces_from: int | None, spare: str
) -> None:
    data = b"".join(bytes([97 + i % 26]) * n + b"\n" for i, n in enumerate(sizes)) + b"z" * tail
    lines, passed = through_pipe(data, writes, pieces_from, spare)
    assert lines == data.splitlines(keepends=True)
    assert passed == data


def test_read_lines_hands_the_loop_bytes_that_the_next_read_cannot_change() -> None:
    """``read_lines`` (the stand-in server's and the HTTP side's reader) keeps its contract:
    bytes lines, pieces copied, whatever the buffer handed on."""
    import asyncio

    big = b"x" * (GIVE_FROM + 10) + b"\n"  # handed on as the buffer, when read alone
    long = b"y" * (3 << 20) + b"\n"

    async def main() -> list:
        r, w = os.pipe()
        widen_pipe(w)
        out: asyncio.Queue = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=read_lines, args=(r, loop, out, 1 << 20), daemon=True).start()

        def write() -> None:
            for data in (big, long, b"small\n"):
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view) :]
            os.close(w)

        threading.Thread(target=write).start()
        items = []
        while (item := await out.get()) is not None:
            items.append(item)
        os.close(r)
        return items

    items = asyncio.run(main())
    assert all(isinstance(i, bytes) for i in items if not isinstance(i, (Piece, LineEnd)))
    pieces = b"".join(bytes(i.data) for i in items if isinstance(i, (Piece, LineEnd)))
    whole = [i for i in items if isinstance(i, bytes)]
    assert whole[0] == big and whole[-1] == b"small\n"
    assert pieces == long
