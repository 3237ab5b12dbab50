"""``pair_masking``: a secret found on one side of a drift is masked on the other wherever
it, or a run of ``PIECE_MIN`` characters of it, shows (session 17: a JSON text's
``api_key`` against the same text cut inside it; a token split by a space)."""

from __future__ import annotations

import json
import string

from cassette_tui.core.scan.masking import mask_found
from cassette_tui.core.scan.pair_masking import PIECE_MIN, mask_pair, mask_pieces, pair_secrets
from hypothesis import given
from hypothesis import strategies as st

TOKEN_CHARS = string.ascii_letters + string.digits + "-_"
secrets = st.text(TOKEN_CHARS, min_size=12, max_size=48)
ghp_tokens = st.text(string.ascii_letters + string.digits, min_size=36, max_size=36).map(
    lambda s: "ghp_" + s
)


def runs_shown(out: str, secret: str) -> list[str]:
    """Every run of ``PIECE_MIN`` characters of ``secret`` that ``out`` shows."""
    return [
        secret[i : i + PIECE_MIN]
        for i in range(len(secret) - PIECE_MIN + 1)
        if secret[i : i + PIECE_MIN] in out
    ]


@given(
    secret=secrets,
    text=st.lists(st.text(max_size=12) | st.tuples(st.integers(0, 48), st.integers(0, 48))),
)
def test_no_run_of_a_secret_is_left_in_any_text(secret: str, text: list) -> None:
    """Any text made of other characters and slices of the secret (its whole, a prefix,
    a suffix, a middle) shows no run of ``PIECE_MIN`` of it once masked."""
    built = "".join(p if isinstance(p, str) else secret[p[0] : p[1]] for p in text)
    assert runs_shown(mask_pieces(built, [secret]), secret) == []


@given(secret=secrets, data=st.data())
def test_a_key_named_value_is_masked_in_the_text_cut_anywhere(
    secret: str, data: st.DataObject
) -> None:
    """A's JSON text finds ``secret`` by its key; B's copy of it is cut anywhere, or has a
    space put in the secret: neither side shows a run of it."""
    a = json.dumps({"note": "hello", "api_key": secret, "tail": "x"})
    assert secret in mask_found(a, "text")[1]
    start = a.index(secret)
    if data.draw(st.booleans(), "split"):
        at = start + data.draw(st.integers(1, len(secret) - 1), "split at")
        b = f"{a[:at]} {a[at:]}"
    else:
        b = a[: data.draw(st.integers(0, len(a)), "cut at")]
    for shown in mask_pair(a, b, "text")[:2]:
        assert runs_shown(shown, secret) == [], (b, shown)


@given(token=ghp_tokens, data=st.data())
def test_a_token_is_masked_in_the_other_side_cut_or_split(token: str, data: st.DataObject) -> None:
    a = f"use token {token} now"
    at = len("use token ") + data.draw(st.integers(1, len(token) - 1), "at")
    b = a[:at] if data.draw(st.booleans(), "cut") else f"{a[:at]} {a[at:]}"
    for shown in (*mask_pair(a, b)[:2], *mask_pair(b, a)[:2]):
        assert runs_shown(shown, token) == [], (b, shown)


def test_nothing_changes_without_a_secret() -> None:
    a, b = {"q": "hello world"}, {"q": "hello there"}
    shown_a, shown_b, carried = mask_pair(a, b, None)
    assert carried == ()
    assert shown_a is a and shown_b is b
    assert mask_pieces("no secret here", []) == "no secret here"


def test_a_run_reads_as_its_mask() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake
    assert (
        mask_pieces(f"x {token[:17]} {token[17:20]}", [token])
        == f"x «ghp_…(17 chars)» {token[17:20]}"
    )
    # JSON-escaped, as a screen prints a string
    odd = 'pa"ss-w0rd-long'
    assert mask_pieces('"pa\\"ss-w0rd"', [odd]) == '"«pa…(11 chars)»"'


def test_only_the_secrets_one_side_misses_are_carried_over() -> None:
    """A secret both sides' scans found is masked on each already: left out."""
    assert pair_secrets(["same-token-1234", "only-a-token-99"], ["same-token-1234"]) == (
        "only-a-token-99",
    )
    assert pair_secrets(["t0ken-in-every-path"], ["t0ken-in-every-path"]) == ()
