"""A long text masked only where it is read (``core/scan/masked_text.py``): its length,
any slice of it, the places of a character in it, the first difference of two and the
masks ``secret_drift`` walks are those of the whole masked text (``str`` of it, which is
``_mask_text``'s replacement of the whole text)."""

from __future__ import annotations

import pytest
from cassette_tui.core.format.textspot import first_difference
from cassette_tui.core.scan import masking, secret_drift
from cassette_tui.core.scan.masked_text import MaskedText, masked_first_difference
from hypothesis import example, given, settings
from hypothesis import strategies as st

SECRETS = ["hunter2xyz", "ab", "x«y", 'q"w', "ghp_" + "Z9" * 18]
#: words of the texts: the secrets, the cuts (``masking._CUTS``), masks written before
#: (and bits of them: a ``«`` or ``»`` alone), a mask's own characters
WORDS = [*SECRETS, "\n", "{", ",", "}", " ", "«ab…(5 chars)»", "«", "»", "…(", "7", " chars)",
         "line 1: the fox", "hunter2", "é", "\\"]  # fmt: skip

#: the secrets and the cuts drawn more often: most texts are then cut in several pieces
texts = st.lists(
    st.sampled_from(WORDS) | st.sampled_from(SECRETS) | st.sampled_from(["\n", " "]),
    min_size=4,
    max_size=60,
).map("".join)
secret_lists = st.lists(st.sampled_from(SECRETS), min_size=1, max_size=3)
pieces = st.sampled_from([1, 4, 16, 65_536])  # the piece length: every text cut, or none


def _masked(text: str, secrets: list[str], piece: int, labelled: bool = False) -> MaskedText:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(masking, "_PIECE", piece)  # a text of two pieces or more: a piece at a time
        return masking._masked_text(text, secrets, labelled)


@settings(max_examples=400, deadline=None)
@given(texts, secret_lists, pieces, st.booleans(), st.data())
@example("a hunter2xyz b", ["hunter2xyz"], 1, False, None)
def test_a_slice_read_alone_is_that_of_the_whole_masked_text(
    text: str, secrets: list[str], piece: int, labelled: bool, data: st.DataObject | None
) -> None:
    masked = _masked(text, secrets, piece, labelled)
    whole = masking._mask_text(text, secrets, labelled)
    assert str(masked) == whole
    assert len(masked) == len(whole)
    if not masked.pieces:
        assert str(masked) is text
    for char in ("«", "»", "…", "z"):
        assert list(masked.positions(char)) == [i for i, c in enumerate(whole) if c == char]
        assert (char in masked) == (char in whole)
    bounds = [(0, len(whole)), (0, 160), (len(whole) - 3, len(whole) + 5), (-7, None)]
    if data is not None:
        at = st.integers(-5, len(whole) + 5)
        bounds.append((data.draw(at), data.draw(at)))
    for start, stop in bounds:
        assert masked[start:stop] == whole[start:stop]
        if start >= 0 and (stop is None or stop >= 0):
            for char in ("«", "»"):
                assert masked.find(char, start, stop) == whole.find(char, start, stop)


@settings(max_examples=400, deadline=None)
@given(texts, texts, st.integers(0, 60), secret_lists, secret_lists, pieces, st.booleans())
def test_the_first_difference_read_alone_is_that_of_the_whole_masked_texts(
    text: str,
    edit: str,
    at: int,
    secrets_a: list[str],
    secrets_b: list[str],
    piece: int,
    plain_b: bool,
) -> None:
    """Two texts, one an edit of the other anywhere (inside a secret too), each masked
    with its own secrets (a secret one side's scan finds and the other's does not), or
    one side a plain string: ``masked_first_difference`` is ``first_difference`` of the
    two masked texts built whole."""
    at = min(at, len(text))
    other = text[:at] + edit + text[at + len(edit) // 2 :]
    a = _masked(text, secrets_a, piece)
    b: str | MaskedText = other if plain_b else _masked(other, secrets_b, piece)
    assert masked_first_difference(a, b) == first_difference(str(a), str(b))
    assert masked_first_difference(b, a) == first_difference(str(b), str(a))
    assert masked_first_difference(a, a) == len(str(a))


@settings(max_examples=400, deadline=None)
@given(texts, secret_lists, pieces, st.integers(0, 80))
@example("«ab…(5 chars)» hunter2xyz «ab…(5 chars)»", ["hunter2xyz"], 1, 16)
@example("«ab…(5hunter2xyz chars)»", ["hunter2xyz"], 1, 3)
def test_the_masks_read_alone_are_those_of_the_whole_masked_text(
    text: str, secrets: list[str], piece: int, raw_at: int
) -> None:
    """The masks ``secret_drift`` counts back to the values' places (recorded masks and
    bits of masks in the text included) are found from the ``«`` and ``»`` of the pieces
    and runs, as ``finditer`` finds them in the whole masked text."""
    masked = _masked(text, secrets, piece)
    whole = str(masked)
    assert list(secret_drift._plain_masks(masked)) == list(secret_drift._plain_masks(whole))
    assert secret_drift._covers(masked, raw_at) == secret_drift._covers(whole, raw_at)


@settings(max_examples=300, deadline=None)
@given(texts, texts, st.integers(0, 60), secret_lists, pieces, st.booleans())
def test_a_text_masked_after_another_finds_what_it_finds_alone(
    text: str, edit: str, at: int, secrets: list[str], piece: int, labelled: bool
) -> None:
    """B masked after A (B an edit of A anywhere: the pieces of A before their first
    difference taken for B's, ``masking._found``) gets the pieces B gets masked alone,
    and A again gets its own."""
    at = min(at, len(text))
    other = text[:at] + edit + text[at + len(edit) // 2 :]
    masking._SEEN.clear()
    alone = _masked(other, secrets, piece, labelled)
    masking._SEEN.clear()
    first = _masked(text, secrets, piece, labelled)
    after = _masked(other, secrets, piece, labelled)
    assert after.pieces == alone.pieces
    assert str(after) == masking._mask_text(other, secrets, labelled)
    assert _masked(text, secrets, piece, labelled).pieces == first.pieces
    masking._SEEN.clear()
