"""Cassettes that a core test and a cli or tui test of the same behaviour both read:
float noise beside real changes, a retry storm of 429s, two runs that call another tool at
one step, and a pair whose differences an ``ignore_response`` rule sets aside."""

from __future__ import annotations

from pathlib import Path

from support.factory import entry, make_cassette, write_cassette

# the same sum in another order: 0.1 + 0.2 + 0.3 vs 0.3 + 0.2 + 0.1 (one float64 ulp apart)
SUM_A, SUM_B = (0.1 + 0.2) + 0.3, (0.3 + 0.2) + 0.1
# 0.1 rounded once through float32 and printed as float64 (float32's half-ulp, relative)
F32 = 0.10000000149011612
HEX = "0123456789abcdef"


def noise_and_real_pair(tmp_path: Path) -> tuple[Path, Path]:
    """embed answered with float noise only (rows 1 and 3), search with a real change (row
    2), embed with a real change too (row 4)."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "embed", {"t": 1}, response={"v": [SUM_A, 0.5], "score": 0.1}),
        entry(2, "search", {"q": 1}, response={"top": "a"}),
        entry(3, "embed", {"t": 2}, response={"v": [0.25, SUM_A]}),
        entry(4, "embed", {"t": 3}, response={"v": [0.5]}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "embed", {"t": 1}, response={"v": [SUM_B, 0.5], "score": F32}),
        entry(2, "search", {"q": 1}, response={"top": "b"}),
        entry(3, "embed", {"t": 2}, response={"v": [0.25, SUM_B]}),
        entry(4, "embed", {"t": 3}, response={"v": [0.75]}),
    )
    return a, b


def rate_limited(request_id: str, when: str) -> dict:
    return {
        "response": {
            "status": 429,
            "headers": {"x-request-id": [request_id], "date": [when]},
            "body": {"error": {"message": "Rate limit reached", "request_id": request_id}},
        }
    }


def storm_file(tmp_path: Path) -> Path:
    return write_cassette(
        tmp_path / "storm.jsonl",
        *[
            entry(i, "http", {"method": "POST", "uri": "https://api.test/v1/chat"},
                  **rate_limited(f"req_{i}{HEX[i]}{HEX[i]}0f3a9c", f"2026-12-01T04:5{i}:00Z"))
            for i in range(1, 4)
        ],
        entry(4, "http", {"method": "POST", "uri": "https://api.test/v1/chat"},
              response={"status": 200, "body": {"answer": 42}}),
    )  # fmt: skip


def other_call_pair():
    a = make_cassette(
        [
            ("get_user", {"id": "u1"}, {"name": "Ann"}),
            ("search_direct", {"origin": "ATL", "dest": "ORD"}, [{"flight": "HAT227"}]),
            ("book", {"flight": "HAT227"}, {"ok": True}),
        ]
    )
    b = make_cassette(
        [
            ("get_user", {"id": "u1"}, {"name": "Ann"}),
            ("search_onestop", {"origin": "ATL", "dest": "PHL", "max": 2}, [[{"f": "HAT110"}]]),
            ("book", {"flight": "HAT110"}, {"ok": True}),
        ]
    )
    return a, b


IGNORE_RESPONSE_CONFIG = """\
[normalize]
ignore_response = ["$.took_ms", "search:$.meta.trace", "**.cache_hit"]
"""


def ignore_response_pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Row 1: only took_ms and a nested cache_hit differ; row 2: only search's
    meta.trace; row 3: the answer itself."""
    a = write_cassette(
        tmp_path / "a.jsonl",
        entry(1, "get", {"id": 1}, response={"v": 1, "took_ms": 12, "x": {"cache_hit": True}}),
        entry(2, "search", {"q": "a"}, response={"hits": ["d1"], "meta": {"trace": "t-1"}}),
        entry(3, "get", {"id": 2}, response={"v": 2, "took_ms": 9}),
    )
    b = write_cassette(
        tmp_path / "b.jsonl",
        entry(1, "get", {"id": 1}, response={"v": 1, "took_ms": 30, "x": {"cache_hit": False}}),
        entry(2, "search", {"q": "a"}, response={"hits": ["d1"], "meta": {"trace": "t-2"}}),
        entry(3, "get", {"id": 2}, response={"v": 3, "took_ms": 9}),
    )
    config = tmp_path / "cassette.toml"
    config.write_text(IGNORE_RESPONSE_CONFIG)
    return a, b, config
