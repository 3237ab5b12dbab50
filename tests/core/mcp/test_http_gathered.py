"""A big HTTP body gathered as it passes through ``mcp record --url`` (``http._Gathered``,
issue 31) is the pieces joined, in one buffer (no join at the end), however they split."""

from __future__ import annotations

from cassette_tui.core.mcp.http import _blank, _Gathered, _without_newline
from hypothesis import given
from hypothesis import strategies as st


@given(parts=st.lists(st.binary(max_size=300), max_size=8))
def test_the_gathered_body_is_the_pieces_joined(parts: list[bytes]) -> None:
    body = b"".join(parts)
    gathered = _Gathered()
    for part in parts:
        gathered.add(part)
    whole = gathered.whole()
    assert whole == body
    assert whole is gathered.buffer  # no copy made at the end
    assert _blank(whole) is (body.strip() == b"")
    assert _without_newline(whole) == body.rstrip(b"\n")
