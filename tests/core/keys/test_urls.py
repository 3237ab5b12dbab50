"""URL spellings (core/keys/urls.py): two spellings of one URL are one call under the
``url`` preset, and a miss between spellings is named as such."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core import CassetteMiss, NormalizationRules, Replayer, diff_cassettes, load
from cassette_tui.core.keys.urls import canonical_url, is_url_spelling
from cassette_tui.core.keys.volatile import difference_kind
from support.factory import entry, write_cassette


# -- URLs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://x.test/s?b=2&a=1", "https://x.test/s?a=1&b=2", True),
        ("https://x.test/s?q=a+b", "https://x.test/s?q=a%20b", True),
        ("https://x.test/a%2fb", "https://x.test/a%2Fb", True),
        ("https://X.TEST:443/", "https://x.test/", True),
        ("http://x.test:80/%7Eu", "http://x.test/~u", True),
        ("https://x.test/a%2Fb", "https://x.test/a/b", False),
        ("https://x.test/s?q=1", "https://x.test/s?q=2", False),
        ("https://x.test:8443/", "https://x.test/", False),
    ],
)
def test_url_spellings(a: str, b: str, same: bool) -> None:
    assert (canonical_url(a) == canonical_url(b)) is same
    assert is_url_spelling(a, b) is same
    assert (difference_kind(a, b) == "url spelling") is same


def test_url_miss_is_named_and_the_url_preset_turns_it_into_a_hit(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl", entry(1, "http_get", {"url": "https://API.test:443/s?q=a+b&l=en"})
    )
    live = {"url": "https://api.test/s?l=en&q=a%20b"}
    with pytest.raises(CassetteMiss, match=r"\[url spelling\]"):
        Replayer(load(path))("http_get", live)
    rules = NormalizationRules.from_presets(["url"])
    assert Replayer(load(path, rules=rules))("http_get", live) == {"hits": 1}
    other = write_cassette(tmp_path / "o.jsonl", entry(1, "http_get", live))
    result = diff_cassettes(load(path), load(other))
    (miss,) = [f for f in result.findings if f.kind == "args_miss"]
    assert miss.evidence["presets"] == ["url"]
    assert "spellings of one URL" in miss.message
