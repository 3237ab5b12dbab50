"""A big HTTP body gathered as it passes through ``mcp record --url`` (``http._Gathered``,
issue 31) is the body whatever its announced size: exact (one buffer, no join), shorter
(a cut body), longer (a decoded gzip answer) or too big to be taken at its word."""

from __future__ import annotations

import pytest
from cassette_tui.core.mcp.http import _blank, _Gathered, _without_newline
from hypothesis import given
from hypothesis import strategies as st


@given(
    parts=st.lists(st.binary(max_size=300), max_size=8),
    offset=st.integers(min_value=-50, max_value=50),
    huge=st.booleans(),
)
def test_the_gathered_body_is_the_pieces_joined(
    parts: list[bytes], offset: int, huge: bool
) -> None:
    body = b"".join(parts)
    announced = max(len(body) + offset, 0)
    with pytest.MonkeyPatch.context() as patch:
        if huge:
            patch.setattr(_Gathered, "MOST", announced - 1)
        gathered = _Gathered(announced)
        for part in parts:
            gathered.add(part)
    whole = gathered.whole()
    assert whole == body
    if announced == len(body) and not huge:
        assert whole is gathered.buffer  # no copy when it came as announced
    assert _blank(whole) is (body.strip() == b"")
    assert _without_newline(whole) == body.rstrip(b"\n")
