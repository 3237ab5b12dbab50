"""Typed values through a cassette (issue 24): the built-in codec gives back the type the
live tool returned (pydantic models, dataclasses, datetime/date/time, Decimal, UUID,
bytes, sets, tuples); the file holds plain, readable JSON with the types beside it; a
user adds a type; a class that cannot be imported is a warning and the JSON."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import uuid
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from cassette_tui.core import Replayer, digest, load, wrap_dispatcher
from cassette_tui.core.format.jsontext import parse_json
from cassette_tui.core.format.jsonvalue import decode_nonfinite, dumps_strict
from cassette_tui.core.replay.codec import BUILTIN_CODEC, CodecWarning, TypeCodec
from cassette_tui.core.replay.recorder import NotSerializable
from hypothesis import given, settings
from hypothesis import strategies as st
from support.run import run_module_agent

pydantic = pytest.importorskip("pydantic", reason="the codec's pydantic tests need pydantic")


@dataclasses.dataclass(frozen=True)
class Booking:
    ref: str
    starts: dt.datetime
    price: Decimal
    seats: tuple[int, ...] = ()
    flags: frozenset[str] = frozenset()
    note: str = dataclasses.field(default="", init=False)


class Point(NamedTuple):
    x: int
    y: int


class Order(pydantic.BaseModel):
    id: int
    placed: dt.datetime
    total: Decimal
    lines: list[Booking] = []


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``{1} == frozenset({1})``, and
    ``1 == True``, are not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (set, frozenset)):
        return a == b and all(any(same(x, y) for y in b) for x in a)
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, pydantic.BaseModel):
        return same(dict(a), dict(b))
    return bool(a == b)


def through_a_line(value: Any) -> Any:
    """``value`` encoded, written as a cassette writes JSON, read back and decoded."""
    data, types = BUILTIN_CODEC.encode(value)
    text = dumps_strict({"response": data, "response_types": types})
    back = decode_nonfinite(parse_json(text))
    return BUILTIN_CODEC.decode(back["response"], back["response_types"])


# -- the round trip, for any mix of the built-in types --------------------------------------
hashable = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.dates()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.binary(max_size=6)
    | st.uuids(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.datetimes(timezones=st.none() | st.just(dt.UTC))
    | st.dates()
    | st.times()
    | st.decimals(allow_nan=False)
    | st.binary(max_size=8)
    | st.uuids()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.sets(hashable, max_size=3)
        | st.frozensets(hashable, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.builds(Point, st.integers(), st.integers())
        | st.builds(
            Booking,
            st.text(max_size=4),
            st.datetimes(),
            st.decimals(allow_nan=False, allow_infinity=False),
            st.lists(st.integers(), max_size=3).map(tuple),
            st.frozensets(st.text(max_size=3), max_size=3),
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_every_built_in_type_comes_back_as_itself(value: Any) -> None:
    assert same(through_a_line(value), value)


@settings(max_examples=100, deadline=None)
@given(st.sets(hashable, max_size=5))
def test_a_set_is_written_in_one_order_whatever_its_iteration_order(value: set) -> None:
    reversed_order = set(reversed(list(value)))
    assert BUILTIN_CODEC.encode(value) == BUILTIN_CODEC.encode(reversed_order)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
    st.decimals(allow_nan=False, allow_infinity=False),
)
def test_a_pydantic_model_comes_back_as_its_class(
    n: int, when: dt.datetime, total: Decimal
) -> None:
    order = Order(id=n, placed=when, total=total, lines=[Booking("b", when, total)])
    back = through_a_line(order)
    assert type(back) is Order and back == order
    assert type(back.lines[0]) is Booking


def test_a_set_of_strings_is_the_same_line_under_any_hash_seed() -> None:
    code = (
        "import json; from cassette_tui.core.replay.codec import BUILTIN_CODEC as C; "
        "print(json.dumps(C.encode({'tags': {'refund', 'late', 'vip', 'eu', 'x1'}})))"
    )
    lines = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert lines == {'[{"tags": ["eu", "late", "refund", "vip", "x1"]}, {"$.tags": "set"}]\n'}


def test_plain_json_has_no_types() -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": {}}}
    assert BUILTIN_CODEC.encode(value) == (value, None)
    assert BUILTIN_CODEC.decode(value, None) == value


def test_the_json_is_readable_and_the_types_sit_beside_it() -> None:
    booking = Booking(
        "R-1", dt.datetime(2026, 5, 1, 9, 30, tzinfo=dt.UTC), Decimal("19.90"), (4, 5)
    )
    data, types = BUILTIN_CODEC.encode({"booking": booking, "raw": b"\x00\xff"})
    assert data == {
        "booking": {
            "ref": "R-1",
            "starts": "2026-05-01T09:30:00+00:00",
            "price": "19.90",
            "seats": [4, 5],
            "flags": [],
            "note": "",
        },
        "raw": {"_binary": True, "encoding": "base64", "data": "AP8="},
    }
    assert types == {
        "$.booking.starts": "datetime",
        "$.booking.price": "decimal",
        "$.booking.seats": "tuple",
        "$.booking.flags": "frozenset",
        "$.booking": f"dataclass:{__name__}:Booking",
        "$.raw": "bytes",
    }


# -- through the wrapper: record, then replay ---------------------------------------------
def test_a_recorded_typed_response_replays_as_its_type(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    when = dt.datetime(2026, 5, 1, 9, 30, tzinfo=dt.UTC)
    order = Order(id=7, placed=when, total=Decimal("19.90"))
    live_answer = {"order": order, "seen": {"b", "a"}, "at": Point(1, 2)}

    def live(tool: str, args: Any) -> Any:
        assert args == {"since": when}  # the live tool gets the args as the agent gave them
        return live_answer

    recording = wrap_dispatcher(live, mode="record", path=path, codec=BUILTIN_CODEC)
    assert recording("orders", {"since": when}) is live_answer
    recording.close()
    (rec,) = load(path)
    # the args digest is the one of the args' JSON form
    assert rec.args == {"since": "2026-05-01T09:30:00+00:00"}
    assert rec.args_digest == digest(rec.args)
    assert rec.response["seen"] == ["a", "b"]
    assert rec.extra["response_types"]["$.order"] == f"pydantic:{__name__}:Order"

    replaying = wrap_dispatcher(live, mode="replay", path=path, codec=BUILTIN_CODEC)
    back = replaying("orders", {"since": when})
    assert same(back, live_answer)
    # without the codec, replay hands back the recorded JSON
    plain = wrap_dispatcher(live, mode="replay", path=path)("orders", {"since": when.isoformat()})
    assert plain["order"] == {
        "id": 7,
        "placed": "2026-05-01T09:30:00Z",
        "total": "19.90",
        "lines": [],
    }


def test_without_a_codec_a_typed_value_is_still_refused_and_the_message_says_how(
    tmp_path: Path,
) -> None:
    recording = wrap_dispatcher(lambda t, a: (1, 2), mode="record", path=tmp_path / "r.jsonl")
    with pytest.raises(NotSerializable, match="codec=BUILTIN_CODEC"):
        recording("t", {})
    recording.close()


def test_a_value_the_codec_does_not_know_is_refused_naming_its_path(tmp_path: Path) -> None:
    class Opaque:
        pass

    recording = wrap_dispatcher(
        lambda t, a: {"ok": [Opaque()]},
        mode="record",
        path=tmp_path / "r.jsonl",
        codec=BUILTIN_CODEC,
    )
    with pytest.raises(NotSerializable) as info:
        recording("t", {})
    assert info.value.path == "$.ok[0]"
    recording.close()


# -- a user's own type, and types that cannot come back ---------------------------------------
class Money:
    def __init__(self, cents: int, currency: str) -> None:
        self.cents, self.currency = cents, currency

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and (self.cents, self.currency) == (
            other.cents,
            other.currency,
        )

    __hash__ = None  # type: ignore[assignment]


def test_a_user_type_is_added_with_with_type(tmp_path: Path) -> None:
    codec = BUILTIN_CODEC.with_type(
        Money,
        "money",
        lambda m: {"cents": m.cents, "currency": m.currency},
        lambda d: Money(d["cents"], d["currency"]),
    )
    path = tmp_path / "rec.jsonl"
    recording = wrap_dispatcher(
        lambda t, a: {"price": Money(1990, "EUR"), "when": dt.date(2026, 5, 1)},
        mode="record",
        path=path,
        codec=codec,
    )
    recording("quote", {})
    recording.close()
    (rec,) = load(path)
    assert rec.response == {"price": {"cents": 1990, "currency": "EUR"}, "when": "2026-05-01"}
    assert rec.extra["response_types"] == {"$.price": "money", "$.when": "date"}
    back = Replayer(load(path), codec=codec)("quote", {})
    assert back == {"price": Money(1990, "EUR"), "when": dt.date(2026, 5, 1)}
    with pytest.raises(ValueError, match="built-in tag"):
        TypeCodec().with_type(Money, "datetime", str, str)
    with pytest.raises(ValueError, match="used already"):
        codec.with_type(Money, "money", str, str)


@pytest.mark.parametrize(
    ("types", "why"),
    [
        ({"$": "dataclass:no_such_module_zz:Thing"}, "No module named 'no_such_module_zz'"),
        ({"$": f"dataclass:{__name__}:Missing"}, "has no attribute 'Missing'"),
        ({"$": "money"}, "unknown type tag"),
        ({"$.nowhere": "date"}, "no such path"),
        ({"$": "datetime"}, "TypeError"),
    ],
)
def test_a_type_that_cannot_come_back_warns_and_gives_the_json(
    types: dict[str, str], why: str
) -> None:
    data = {"ref": "R-1"}
    with pytest.warns(CodecWarning, match=why):
        assert BUILTIN_CODEC.decode(data, types) == {"ref": "R-1"}


def test_a_codec_replay_of_an_old_cassette_gives_its_json(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"seq": 1, "tool": "t", "args": {}, "response": [1]}) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Replayer(load(path), codec=BUILTIN_CODEC)("t", {}) == [1]


def test_uuid_and_time_keep_their_values() -> None:
    value = {"id": uuid.UUID(int=7), "at": dt.time(23, 59, 58, 999)}
    assert same(through_a_line(value), value)


SCRIPT = textwrap.dedent(
    """
    import dataclasses, datetime as dt, sys
    from cassette_tui.core import wrap_dispatcher
    from cassette_tui.core.replay.codec import BUILTIN_CODEC


    @dataclasses.dataclass
    class Slot:
        starts: dt.datetime
        free: bool


    if __name__ == "__main__":
        tool = wrap_dispatcher(
            lambda t, a: [Slot(dt.datetime(2026, 5, 1, 9, 30), True)],
            mode="record",
            path=sys.argv[1],
            codec=BUILTIN_CODEC,
        )
        print(tool("slots", {"day": "2026-05-01"}))
    """
)


def test_a_dataclass_of_a_script_comes_back_where_the_script_is_imported(tmp_path: Path) -> None:
    script = tmp_path / "slot_agent.py"
    script.write_text(SCRIPT, encoding="utf-8")
    cassette = tmp_path / "rec.jsonl"
    done = subprocess.run(
        [sys.executable, str(script), str(cassette)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (rec,) = load(cassette)
    assert rec.extra["response_types"]["$[0]"] == "dataclass:__main__:Slot:slot_agent.py"
    # not imported here: a warning and the JSON
    with pytest.warns(CodecWarning, match="'slot_agent.py' has no 'Slot'"):
        assert Replayer(load(cassette), codec=BUILTIN_CODEC)("slots", {"day": "2026-05-01"}) == [
            {"starts": dt.datetime(2026, 5, 1, 9, 30), "free": True}
        ]
    spec = importlib.util.spec_from_file_location("tests_slot_agent", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tests_slot_agent"] = module
    try:
        spec.loader.exec_module(module)
        (slot,) = Replayer(load(cassette), codec=BUILTIN_CODEC)("slots", {"day": "2026-05-01"})
    finally:
        del sys.modules["tests_slot_agent"]
    assert type(slot) is module.Slot
    assert slot == module.Slot(dt.datetime(2026, 5, 1, 9, 30), True)


M_AGENT = textwrap.dedent(
    """
    import dataclasses, sys
    from cassette_tui.core import wrap_dispatcher
    from cassette_tui.core.replay.codec import BUILTIN_CODEC

    print("top level", __name__, file=sys.stderr)


    @dataclasses.dataclass
    class Order:
        id: int


    answer = wrap_dispatcher(lambda tool, args: Order(7), codec=BUILTIN_CODEC)("t", {})
    print(type(answer).__name__, answer.id)
    """
)


def test_a_dataclass_of_an_agent_run_with_dash_m_is_found_without_running_it_again(
    tmp_path: Path,
) -> None:
    # recorded as `dataclass:m_shop:Order` (python -m m_shop): replay imported m_shop, which
    # ran the whole agent a second time inside the first run's call
    (tmp_path / "m_shop.py").write_text(M_AGENT, encoding="utf-8")
    cassette = tmp_path / "rec.jsonl"

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        return run_module_agent(tmp_path, "m_shop", mode, cassette)

    assert run("record").stdout == "Order 7\n"
    assert "m_shop:Order" in cassette.read_text(encoding="utf-8")
    replayed = run("replay")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == "Order 7\n"
    assert replayed.stderr.count("top level") == 1
