"""Nearest recorded calls for a miss (core/keys/nearest.py)."""

from __future__ import annotations

from cassette_tui.core import Cassette, Entry, NormalizationRules
from cassette_tui.core.keys.nearest import MISSING, child_path, leaf_differences, nearest


def make(*calls: tuple[str, object]) -> Cassette:
    return Cassette.from_entries(
        Entry(i, tool, args, response=i) for i, (tool, args) in enumerate(calls, 1)
    )


def test_paths_match_the_drift_path_style() -> None:
    assert child_path("$", "hits") == "$.hits"
    assert child_path("$.hits", 0) == "$.hits[0]"
    assert child_path("$", "x-y") == '$["x-y"]'


def test_leaf_differences_with_kinds() -> None:
    recorded = {"q": "retry", "top_k": 5, "opts": {"since": "2024-05-15", "tags": ["a"]}}
    live = {"q": "retry", "top_k": 5.0, "opts": {"since": "2024-05-16", "tags": ["a", "b"]}}
    got = [(d.path, d.recorded, d.live, d.kind) for d in leaf_differences(recorded, live)]
    assert got == [
        ("$.opts.since", "2024-05-15", "2024-05-16", "timestamp"),
        ("$.opts.tags[1]", MISSING, "b", "missing"),
        ("$.top_k", 5, 5.0, "number type"),
    ]


def test_nearest_ranks_by_differing_paths_and_skips_other_tools() -> None:
    c = make(
        ("search", {"q": "a", "k": 1, "lang": "en"}),
        ("search", {"q": "b", "k": 1, "lang": "en"}),
        ("read", {"q": "x", "k": 1, "lang": "en"}),
        ("search", {"q": "x", "k": 1, "lang": "pt"}),
        ("search", {"q": "x", "k": 1, "lang": "pt"}),  # same key again: listed once
    )
    cands = nearest(c, "search", {"q": "x", "k": 1, "lang": "en"}, limit=5)
    assert [(cand.seq, len(cand.differences)) for cand in cands] == [(1, 1), (2, 1), (4, 1)]
    assert cands[0].to_dict()["differences"] == [
        {"path": "$.q", "recorded": "a", "live": "x", "absent": None, "kind": "other"}
    ]
    assert nearest(c, "http_get", {}) == []


def test_nearest_compares_normalized_args() -> None:
    c = make(("t", {"id": "6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b4c11", "q": 1}))
    live = {"id": "b2e94f10-77c3-4a8e-8d2b-5c6a1f0e9d32", "q": 2}
    (strict,) = nearest(c, "t", live)
    assert [d.kind for d in strict.differences] == ["uuid", "other"]
    (loose,) = nearest(c, "t", live, rules=NormalizationRules.from_presets(["uuid"]))
    assert [d.path for d in loose.differences] == ["$.q"]


def test_a_miss_on_a_redacted_cassette_blames_only_what_differs_once_redacted() -> None:
    """The live token matches the recorded placeholder once redacted: only the path that
    really differs is blamed, and the live value shown is the redacted one (issue 26)."""
    from cassette_tui.core.scan.redact import Redactor, placeholder

    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    other = "ghp_zZcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    redactor = Redactor()
    c = make(("call_api", {"auth": f"Bearer {placeholder(token)}", "page": 1}))
    live = {"auth": f"Bearer {token}", "page": 2}
    raw_only = nearest(c, "call_api", live)[0]
    assert {d.path for d in raw_only.differences} == {"$.auth", "$.page"}  # the old blame
    (cand,) = nearest(c, "call_api", live, redactor=redactor)
    assert [(d.path, d.recorded, d.live) for d in cand.differences] == [("$.page", 1, 2)]

    # another token than the recorded one is still blamed, shown as its placeholder
    (cand,) = nearest(c, "call_api", {"auth": f"Bearer {other}", "page": 1}, redactor=redactor)
    assert [(d.path, d.live) for d in cand.differences] == [
        ("$.auth", f"Bearer {placeholder(other)}")
    ]

    # a raw cassette: the live secret equal to the recorded one is no difference either
    raw = make(("call_api", {"auth": f"Bearer {token}", "page": 1}))
    (cand,) = nearest(raw, "call_api", live, redactor=redactor)
    assert [d.path for d in cand.differences] == ["$.page"]

    # a tool named with a secret is found under its redacted name
    named = make((redactor.redact_tool(f"call_{token}"), {"page": 1}))
    assert token not in named.tool(0)
    (cand,) = nearest(named, f"call_{token}", {"page": 1}, redactor=redactor)
    assert cand.differences == ()


def test_a_miss_compares_a_bounded_number_of_recordings(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each miss used to compare its args with every recording of the tool: a minimise
    candidate of a 10k-entry cassette (thousands of misses) took minutes per replay. The
    scan stops at ``NEAREST_SCAN`` distinct recordings, so a run's misses cost linear time."""
    import cassette_tui.core.keys.nearest as module

    compared = 0
    real = module.leaf_differences

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal compared
        compared += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "leaf_differences", counting)
    cassette = make(*[("check", {"step": i}) for i in range(module.NEAREST_SCAN * 3)])
    found = nearest(cassette, "check", {"step": 1})
    assert found[0].seq == 2  # the exact-but-one recording is still the nearest
    assert compared <= 2 * module.NEAREST_SCAN  # args of one key: 2 calls per recording
