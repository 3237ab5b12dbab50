"""Two drifts whose sides' secret scans disagree (session 17): a JSON text against the
same text cut inside its ``api_key`` value (only A's text parses, so only A's scan finds
the key-named value), and a ``ghp_`` token against the same token split by a space (no
token on B). ``leaked`` names a run of a secret an output shows."""

from __future__ import annotations

import json
from pathlib import Path

from .factory import entry, write_cassette

#: a value found only by its key, ``api_key`` (fake)
KEY = "Zq7Vx2Lm9Rt4Wb8Nc3Kd6Hs1Jf5Gp0Ay"
#: a GitHub token (fake)
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SECRETS = (KEY, GHP)
#: the shortest run of a secret an output may not show (``pair_masking.PIECE_MIN``)
RUN = 8


def json_text() -> tuple[str, str]:
    """A's JSON text holding ``KEY`` under ``api_key``, and B's: the same cut 20
    characters into the key."""
    doc = {"model": "m", "config": {"api_key": KEY, "region": "eu-west-1"}, "n": [1, 2]}
    text = json.dumps(doc)
    return text, text[: text.index(KEY) + 20]


def split_token() -> tuple[str, str]:
    """A's text holding ``GHP``, and B's: the token broken by a space after 17 characters."""
    return f"use token {GHP} now", f"use token {GHP[:17]} {GHP[17:]} now"


def write_pair(folder: Path, case: str) -> tuple[Path, Path]:
    """Cassettes A and B of ``case`` (``"json"`` or ``"split"``): step 1 the same, step 2
    answered by the two texts as the response's ``text``."""
    a_text, b_text = json_text() if case == "json" else split_token()
    same = entry(1, "list_tools", {}, response={"ok": True})
    a, b = (
        write_cassette(
            folder / f"{case}-{side}.jsonl", same, entry(2, "fetch", {"q": 1}, response={"text": t})
        )
        for side, t in (("a", a_text), ("b", b_text))
    )
    return a, b


def leaked(out: str, secret: str, run: int = RUN) -> str | None:
    """The first run of ``run`` characters of ``secret`` that ``out`` shows, else ``None``."""
    return next(
        (secret[i : i + run] for i in range(len(secret) - run + 1) if secret[i : i + run] in out),
        None,
    )
