"""A drift whose first difference lies inside a secret (``secret_drift``): both sides read
apart by their secrets' hashes, at the values' own position, never showing a secret's
characters; a drift outside every secret is left to the plain masked view."""

from __future__ import annotations

from cassette_tui.core.format.textspot import first_difference, spot
from cassette_tui.core.scan.masking import hash8, mask_value
from cassette_tui.core.scan.secret_drift import secret_apart
from hypothesis import example, given, settings
from hypothesis import strategies as st

GHP_A = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
GHP_B = GHP_A[:-1] + "X"  # fake: the same shape, one character apart
BEFORE = "The deploy finished and the token for the mirror is now set to "
AFTER = " and it expires in 30 days; rotate it before then please."


def _apart(a: str, b: str, key: str | None = "text"):  # type: ignore[no-untyped-def]
    return secret_apart(a, b, mask_value(a, key), mask_value(b, key), key)


def test_two_tokens_of_one_shape_read_apart_by_their_hashes() -> None:
    a, b = BEFORE + GHP_A + AFTER, BEFORE + GHP_B + AFTER
    # what main showed: the masked sides are one text, no difference to see
    assert mask_value(a, "text") == mask_value(b, "text")
    apart = _apart(a, b)
    assert apart is not None
    assert apart.position == first_difference(a, b) + 1 == len(BEFORE) + 40
    where = apart.spot(40)
    assert where.position == apart.position
    assert f"«ghp_…(40 chars), hash {hash8(GHP_A)}»" in where.a
    assert f"«ghp_…(40 chars), hash {hash8(GHP_B)}»" in where.b
    for shown in (apart.a, apart.b, where.a, where.b):
        assert GHP_A[4:] not in shown and GHP_B[4:] not in shown and "A1b2" not in shown


def test_a_secret_under_a_secret_key_and_a_whole_token() -> None:
    apart = _apart("hunter2-db-Pa55word", "hunter3-db-Pa55word", "password")
    assert apart is not None and apart.position == 7
    assert apart.a == f"«hunt…(19 chars), hash {hash8('hunter2-db-Pa55word')}»"
    assert "hunter" not in apart.b and apart.a != apart.b
    whole = _apart(GHP_A, GHP_B, "token")
    assert whole is not None and whole.position == 40


def test_a_difference_outside_every_secret_is_left_to_the_masked_view() -> None:
    a = BEFORE + GHP_A + AFTER
    assert _apart(a, a + "!") is None  # after the token
    assert _apart("x" + a, "y" + a) is None  # before it
    assert _apart(a, a) is None
    # no secret: guillemets of the text are no mask, nothing scanned again
    text = "il a dit « bonjour » puis « au revoir » et il est parti sans un mot de plus"
    assert _apart(text, text.replace("bonjour", "bonsoir")) is None


def test_a_token_on_one_side_only() -> None:
    """B's token cut by a space is no token: the values part inside A's token."""
    a = BEFORE + GHP_A + AFTER
    b = BEFORE + GHP_A[:20] + " " + GHP_A[20:] + AFTER
    apart = _apart(a, b)
    assert apart is not None and apart.position == len(BEFORE) + 21
    assert f"hash {hash8(GHP_A)}" in apart.spot(40).a


def test_masks_that_part_before_the_values_do_are_no_secret_drift() -> None:
    """A JSON text against the same text cut (no longer JSON): the scan finds the value of
    ``client_token`` in A (by its key) and not in B, so the masked forms part at A's mask
    while the values part at their end: not a difference inside a secret."""
    a = '{"client_token": "zq", "n": 1}'
    b = '{"client_token": "zq", "n": 2'
    assert "«" in mask_value(a, "text") and "«" not in mask_value(b, "text")
    assert _apart(a, b) is None


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="abc de,.\n", max_size=60),
    st.text(alphabet="abc de,.\n", max_size=60),
    st.integers(4, 39),
    st.sampled_from("ABCXYZ0189"),
)
@example(before="", after="", at=39, char="X")
def test_a_token_changed_at_any_character_reads_apart(
    before: str, after: str, at: int, char: str
) -> None:
    """A token changed at any character after its prefix, in any text around it: the
    position is the values' first difference, the two labelled sides differ around it
    and hold no run of either token's characters past the shown prefix."""
    changed = GHP_A[:at] + char + GHP_A[at + 1 :]
    if changed == GHP_A:
        return
    a, b = before + " " + GHP_A + " " + after, before + " " + changed + " " + after
    apart = _apart(a, b)
    assert apart is not None
    assert apart.position == first_difference(a, b) + 1
    where = apart.spot(12)
    assert where.a != where.b
    for shown in (apart.a, apart.b, where.a, where.b):
        for secret in (GHP_A, changed):
            assert secret[4:10] not in shown and secret[-6:] not in shown
    # the plain masked view cannot tell them apart
    plain = spot(mask_value(a, "text"), mask_value(b, "text"), 12)
    assert plain.a == plain.b
