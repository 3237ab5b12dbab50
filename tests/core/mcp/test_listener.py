"""The listener of ``mcp record --url`` (``mcp/_listener.py``, issue 31): a body's piece
that comes while none waits reaches the app as the very ``bytes`` httptools made (uvicorn
copied it twice), and pieces that pile up are joined in order, as uvicorn joins them."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from cassette_tui.core.mcp._listener import http_protocol
from hypothesis import given
from hypothesis import strategies as st


def protocol() -> Any:
    cls = http_protocol()
    assert not isinstance(cls, str), "httptools and uvicorn are in the mcp extra"
    proto = object.__new__(cls)  # only what on_body reads
    proto.parser = SimpleNamespace(should_upgrade=lambda: False)
    proto.flow = SimpleNamespace(pause_reading=lambda: None)
    proto.cycle = SimpleNamespace(
        body=bytearray(), response_complete=False, message_event=asyncio.Event()
    )
    return proto


def test_a_piece_while_none_waits_is_handed_on_as_it_is() -> None:
    proto = protocol()
    piece = b"x" * 300_000
    proto.on_body(piece)
    assert proto.cycle.body is piece
    assert bytes(proto.cycle.body) is piece  # what uvicorn's receive hands the app


@given(st.lists(st.lists(st.binary(min_size=1, max_size=50), min_size=1, max_size=4), max_size=5))
def test_pieces_taken_in_any_grouping_are_the_body_in_order(groups: list[list[bytes]]) -> None:
    proto = protocol()
    got = []
    for group in groups:
        for piece in group:
            proto.on_body(piece)
        got.append(bytes(proto.cycle.body))  # uvicorn's receive: taken, then emptied
        proto.cycle.body = bytearray()
    assert got == [b"".join(group) for group in groups]
