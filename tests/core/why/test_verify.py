"""``core/why/verify.py``: a recording made by the real recorder (``wrap_dispatcher`` in
record mode) against a small world in a file, the world changed, then the calls re-issued
to the live dispatcher (a module written to ``tmp_path`` and imported by
``load_dispatcher``). The dispatcher logs every call it gets, so a test can say which
calls it never saw."""

from __future__ import annotations

import contextlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core import wrap_dispatcher
from cassette_tui.core.format.cassette import load
from cassette_tui.core.format.jobs import run_job
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.why._live import (
    Answer,
    DispatcherSpecError,
    DispatcherTools,
    load_dispatcher,
    read_only_tools,
    recorded_handshake,
)
from cassette_tui.core.why.verify import (
    Status,
    annotation_disagreements,
    classify,
    default_out,
    verify_job,
    write_live,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from support.factory import make_cassette

#: the live tools: a world read from WORLD, every call logged to LOG
TOOLS = """
import json, random
WORLD = {world!r}
LOG = {log!r}

def dispatch(tool, args):
    with open(LOG, "a") as fh:
        fh.write(json.dumps({{"tool": tool, "args": args}}) + "\\n")
    world = json.load(open(WORLD))
    if tool == "price":
        return {{"sku": args["sku"], "price": world["prices"].get(args["sku"]),
                 "request_id": "req_" + "%08x" % random.getrandbits(32)}}
    if tool == "stock":
        return {{"sku": args["sku"], "count": world["stock"]}}
    if tool == "buy":
        world["stock"] -= 1
        json.dump(world, open(WORLD, "w"))
        return {{"ok": True}}
    if tool == "roll":
        return {{"n": random.random()}}
    if tool == "lookup":
        raise KeyError(args["sku"])
    raise ValueError("unknown tool " + tool)

async def adispatch(tool, args):
    return dispatch(tool, args)

NOT_CALLABLE = 3

def broken_import():
    pass
"""

CALLS = [
    ("price", {"sku": "a1"}),
    ("stock", {"sku": "a1"}),
    ("buy", {"sku": "a1"}),
    ("price", {"sku": "b2"}),
    ("lookup", {"sku": "a1"}),
]


def world_module(tmp_path: Path) -> tuple[str, Path, Path]:
    """A dispatcher module in ``tmp_path`` (a unique name: modules stay imported), its
    world file and its log."""
    world, log = tmp_path / "world.json", tmp_path / "calls.log"
    world.write_text(json.dumps({"prices": {"a1": 10, "b2": 20}, "stock": 5}))
    name = f"live_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(TOOLS.format(world=str(world), log=str(log)))
    return name, world, log


def record(tmp_path: Path, name: str) -> Path:
    """The CALLS recorded through the real recorder, the dispatcher live."""
    cassette = tmp_path / "run.jsonl"
    dispatch = load_dispatcher(f"{name}:dispatch", [str(tmp_path)])
    wrapped = wrap_dispatcher(dispatch, mode="record", path=cassette, config=_no_config(tmp_path))
    for tool, args in CALLS:
        with contextlib.suppress(KeyError):  # lookup raises: recorded as an error entry
            wrapped(tool, args)
    wrapped.close()
    return cassette


def _no_config(tmp_path: Path) -> Path:
    config = tmp_path / "cassette.toml"
    config.write_text("")
    return config


def logged(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def verify(cassette: Path, tools: DispatcherTools, **kw: Any) -> Any:
    return run_job(verify_job(load(cassette), tools, **kw))


def test_stale_fresh_and_errors_named_and_writes_never_reissued(tmp_path: Path) -> None:
    name, world, log = world_module(tmp_path)
    cassette = record(tmp_path, name)
    log.unlink()
    # the world moved on: a1's price changed, b2's did not; the stock fell by the purchase
    world.write_text(json.dumps({"prices": {"a1": 12, "b2": 20}, "stock": 4}))
    tools = DispatcherTools(f"{name}:dispatch", load_dispatcher(f"{name}:dispatch"))
    result = verify(cassette, tools, allow=["price", "lookup"], config_allow=["stock"])
    by_seq = {c.seq: c for c in result.entries}
    # price a1: stale at $.price; the request id differs too, but it is volatile metadata
    assert by_seq[1].status is Status.STALE and by_seq[1].paths == ["$.price"]
    assert by_seq[1].safe_by == "--allow"
    # stock: the recording saw 5 before the purchase: the live 4 is stale; allowed by config
    assert by_seq[2].status is Status.STALE and by_seq[2].safe_by == "config"
    assert by_seq[3].status is Status.NOT_REISSUED and "not marked safe" in by_seq[3].why
    assert by_seq[4].status is Status.FRESH and by_seq[4].quiet == "metadata"
    # lookup raised KeyError when recorded and raises it again: the same failure is fresh
    assert by_seq[5].status is Status.FRESH
    assert result.verdict == "stale" and result.exit_status == 1
    assert result.to_json()["stale"] == [
        {"seq": 1, "tool": "price", "paths": ["$.price"]},
        {"seq": 2, "tool": "stock", "paths": ["$.count"]},
    ]
    # the write was never re-issued: the live dispatcher never saw "buy"
    assert [c["tool"] for c in logged(log)] == ["price", "stock", "price", "lookup"]
    assert json.loads(world.read_text())["stock"] == 4


def test_the_live_cassette_is_a_cassette_diff_reads(tmp_path: Path) -> None:
    from cassette_tui.core.diff.result import diff_cassettes

    name, world, _log = world_module(tmp_path)
    cassette = record(tmp_path, name)
    world.write_text(json.dumps({"prices": {"a1": 11, "b2": 20}, "stock": 5}))
    tools = DispatcherTools(f"{name}:dispatch", load_dispatcher(f"{name}:dispatch"))
    result = verify(cassette, tools, allow=["price", "stock", "lookup"])
    out = default_out(str(cassette))
    assert out == tmp_path / "run.live.jsonl"
    write_live(result, out, NormalizationRules(), overwrite=False)
    live = load(out)
    assert [live.entry_view(i).extra["verified_seq"] for i in range(len(live))] == [1, 2, 4, 5]
    assert live.entry_view(3).error is not None  # the KeyError, recorded as the recorder does
    diff = diff_cassettes(load(cassette), live, align="key")
    kinds = [f.kind for f in diff.findings]
    assert "stale_response" in kinds
    with pytest.raises(FileExistsError, match="exists"):
        write_live(result, out, NormalizationRules(), overwrite=False)


def test_a_tool_that_fails_live_is_an_error_not_stale(tmp_path: Path) -> None:
    name, _world, _log = world_module(tmp_path)
    cassette = record(tmp_path, name)

    def slow(tool: str, args: Any) -> Any:
        raise TimeoutError("slow")

    tools = DispatcherTools("x:y", slow)
    result = verify(cassette, tools, allow=["price"])
    first = result.entries[0]
    assert first.status is Status.ERROR
    assert first.live_error == "TimeoutError: slow"
    assert result.verdict == "live_error" and result.exit_status == 1


def test_repeat_tells_a_nondeterministic_tool_from_a_stale_one(tmp_path: Path) -> None:
    name, _world, log = world_module(tmp_path)
    cassette = tmp_path / "roll.jsonl"
    dispatch = load_dispatcher(f"{name}:adispatch", [str(tmp_path)])  # a coroutine function
    wrapped = wrap_dispatcher(dispatch, mode="record", path=cassette, config=_no_config(tmp_path))
    import asyncio

    asyncio.run(wrapped("roll", {}))
    wrapped.close()
    tools = DispatcherTools(f"{name}:adispatch", dispatch)
    result = verify(cassette, tools, allow=["roll"], repeat=3)
    (roll,) = result.entries
    assert roll.status is Status.NONDETERMINISTIC and roll.distinct == 3
    assert "rolls the dice" in roll.why and roll.paths == ["$.n"]
    assert result.verdict == "nondeterministic"
    assert len([c for c in logged(log) if c["tool"] == "roll"]) == 1 + 3


def test_nothing_safe_is_an_error_never_all_fresh(tmp_path: Path) -> None:
    name, _world, log = world_module(tmp_path)
    cassette = record(tmp_path, name)
    log.unlink()
    tools = DispatcherTools(f"{name}:dispatch", load_dispatcher(f"{name}:dispatch"))
    result = verify(cassette, tools)
    assert result.verdict == "nothing_safe" and result.exit_status == 2
    assert {c.status for c in result.entries} == {Status.NOT_REISSUED}
    assert not log.exists()


def test_args_holding_a_redacted_value_are_not_reissued(tmp_path: Path) -> None:
    from support.factory import entry, write_cassette

    cassette = write_cassette(
        tmp_path / "r.jsonl",
        entry(1, "price", {"sku": "a1", "token": "<redacted:github_token:0123abcd>"}),
    )
    seen: list[str] = []
    tools = DispatcherTools("x:y", lambda tool, args: seen.append(tool))
    result = verify(cassette, tools, allow=["price"])
    assert result.entries[0].status is Status.NOT_REISSUED and "redacted" in result.entries[0].why
    assert seen == []


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nocolon", "expected MODULE:FUNCTION"),
        ("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'"),
        ("{name}:missing", "has no attribute 'missing'"),
        ("{name}:NOT_CALLABLE", "is a int, not callable"),
    ],
)
def test_a_bad_dispatcher_spec_is_named(tmp_path: Path, spec: str, words: str) -> None:
    name, _world, _log = world_module(tmp_path)
    spec = spec.format(name=name)
    with pytest.raises(DispatcherSpecError) as caught:
        load_dispatcher(spec, [str(tmp_path)])
    assert words in str(caught.value) and repr(spec) in str(caught.value)


def test_a_module_that_raises_when_imported_is_named(tmp_path: Path) -> None:
    name = f"boom_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('no config')\n")
    with pytest.raises(DispatcherSpecError, match="raised RuntimeError: no config"):
        load_dispatcher(f"{name}:f", [str(tmp_path)])


def test_read_only_comes_from_the_annotation_alone() -> None:
    tools = [
        {"name": "get", "annotations": {"readOnlyHint": True}},
        {"name": "put", "annotations": {"readOnlyHint": False, "idempotentHint": True}},
        {"name": "bare"},
    ]
    assert read_only_tools(tools) == {"get": True, "put": False, "bare": False}
    recorded = {"get": False, "put": False}
    assert annotation_disagreements(recorded, read_only_tools(tools), ["get", "put", "x"]) == [
        {"tool": "get", "recorded": False, "live": True}
    ]
    assert annotation_disagreements(None, read_only_tools(tools), ["get"]) == []


def test_the_recorded_handshake_is_spoken_again() -> None:
    from cassette_tui.core.mcp._facts import Exchange, ServerFacts

    new = ServerFacts(
        exchanges=[Exchange("server/discover", {}, {"supportedVersions": ["2026-07-28"]})]
    )
    old = ServerFacts(exchanges=[Exchange("initialize", {"protocolVersion": "2025-03-26"}, {})])
    assert recorded_handshake(new) == ("server/discover", "2026-07-28")
    assert recorded_handshake(old) == ("initialize", "2025-03-26")
    assert recorded_handshake(None) == ("initialize", None)


# -- classification under the rules ---------------------------------------------------------
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


def _reordered(value: Any) -> Any:
    """``value`` with every object's keys in reverse order (the same JSON)."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@settings(max_examples=150, deadline=None)
@given(recorded=st.dictionaries(st.text(max_size=5), JSON, max_size=5), live=JSON)
def test_classification_is_invariant_to_key_order(recorded: dict[str, Any], live: Any) -> None:
    cassette = make_cassette([("t", {"q": 1}, recorded)])
    entry = cassette.entry_view(0)
    plain = classify(entry, [Answer(response=live)], cassette)
    shuffled = classify(entry, [Answer(response=_reordered(live))], cassette)
    assert (plain.status, plain.paths, plain.quiet) == (
        shuffled.status,
        shuffled.paths,
        shuffled.quiet,
    )
    # the recorded answer itself, its keys in any order, is always fresh
    same = classify(entry, [Answer(response=_reordered(recorded))], cassette)
    assert same.status is Status.FRESH and same.paths == []


@settings(max_examples=100, deadline=None)
@given(answer=st.dictionaries(st.text(max_size=4), JSON, max_size=4), n=st.integers(2, 4))
def test_repeats_that_agree_are_never_nondeterministic(answer: dict[str, Any], n: int) -> None:
    cassette = make_cassette([("t", {}, answer)])
    # the same answer n times, its keys in another order each other time
    agreeing = [Answer(response=_reordered(answer) if i % 2 else answer) for i in range(n)]
    checked = classify(cassette.entry_view(0), agreeing, cassette)
    assert checked.status is Status.FRESH and checked.distinct == 1


def test_two_answers_that_differ_in_data_are_nondeterministic() -> None:
    cassette = make_cassette([("t", {}, {"n": 1})])
    answers = [Answer(response={"n": 1}), Answer(response={"n": 2}), Answer(response={"n": 1})]
    checked = classify(cassette.entry_view(0), answers, cassette)
    assert checked.status is Status.NONDETERMINISTIC and checked.distinct == 2
    assert checked.paths == ["$.n"]
