"""The drift line of the app's pane and step screen (``text.detail.drift_lines``), cut and
expanded, of a secret one side's scan finds and the other's does not (session 17): A's
JSON text finds ``api_key``'s value, B is the same text cut anywhere or with a space put
in the value. On main B's side showed up to the whole of it; now no run of
``PIECE_MIN`` (8) characters of it."""

from __future__ import annotations

import json
import string

from cassette_tui.core.diff.model import Change, DriftItem
from cassette_tui.tui.text.detail import Limits, drift_lines
from hypothesis import assume, given
from hypothesis import strategies as st

PIECE_MIN = 8
secrets = st.text(string.ascii_letters + string.digits + "-_", min_size=12, max_size=48)
#: the line's own words around the values: a secret holding 8 characters of them (found
#: by hypothesis: ``0000response``) would be "shown" by the line's part name
CHROME = "response $.text  at character (inside a secret): -> (changed)"


@given(secret=secrets, data=st.data())
def test_a_secret_one_side_finds_shows_no_run_on_the_other(
    secret: str, data: st.DataObject
) -> None:
    runs = [secret[i : i + PIECE_MIN] for i in range(len(secret) - PIECE_MIN + 1)]
    assume(not any(r in CHROME for r in runs))
    a = json.dumps({"note": "hello", "api_key": secret, "tail": "x"})
    start = a.index(secret)
    if data.draw(st.booleans(), "split"):
        at = start + data.draw(st.integers(1, len(secret) - 1), "split at")
        b = f"{a[:at]} {a[at:]}"
    else:
        b = a[: data.draw(st.integers(start, len(a) - 1), "cut at")]
    for items in ([DriftItem("$.text", a, b, Change.VALUE_CHANGED)],
                  [DriftItem("$.text", b, a, Change.VALUE_CHANGED)]):  # fmt: skip
        for limits in (Limits(), Limits.expanded()):
            shown = drift_lines(items, limits, {}).plain
            assert not [r for r in runs if r in shown], (b, shown)
