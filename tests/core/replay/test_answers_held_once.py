"""The replayer's start keeps each plain answer's parsed value when the answers are small in
all (``format._answers.HELD_ANSWER_BYTES``), for the first serve of its entry: the decode
moves from the call to the start, as the article's load parses every answer once. An
object is handed out at most once, never shared: the first serve drops it, any later
serve of the entry (a repeat, ``repeat="last"``, another process after a fork) decodes
afresh from the bytes (bugcase 23: an agent that edits an answer changes no other call's).
What a call gets is what it got before: the bytes' decode, the entry parse's value where
orjson refuses them. Above the cap nothing is kept and every call decodes, as before."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from cassette_tui.core import CassetteFormatError, Replayer, load
from cassette_tui.core.format import _answers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ANSWER = {"items": [{"sku": "PEN", "qty": 2}], "next": None}


def _write(path: Path, rows: list[tuple[dict[str, Any], str]]) -> None:
    """One line per ``(args, response as JSON text)``, compact as the recorder writes."""
    with path.open("w", encoding="utf-8") as fh:
        for seq, (args, body) in enumerate(rows, 1):
            args_text = json.dumps(args, separators=(",", ":"))
            fh.write(f'{{"seq":{seq},"tool":"t","args":{args_text},"response":{body}}}\n')


def _cassette(path: Path) -> Path:
    """Key ``{"q": 1}`` recorded twice (the same answer), ``{"q": 2}`` once."""
    body = json.dumps(ANSWER)
    _write(path, [({"q": 1}, body), ({"q": 1}, body), ({"q": 2}, body)])
    return path


def _held(replay: Replayer) -> list[Any] | None:
    assert replay._answers is not None
    return replay._answers._held


def test_an_answer_object_is_handed_out_once(tmp_path: Path) -> None:
    """Every serve of an entry after its first gets a pristine object of its own, though
    the agent changed each object it got; no object is handed out twice."""
    replay = Replayer(load(_cassette(tmp_path / "c.jsonl")), repeat="last")
    assert _held(replay) is not None  # small: the start kept the answers
    got = []
    for args in ({"q": 1}, {"q": 1}, {"q": 1}, {"q": 1}, {"q": 2}, {"q": 2}):
        value = replay("t", args)
        assert value == ANSWER  # pristine, though every earlier one was changed
        value["items"][0]["qty"] = 99
        value["edited"] = True
        got.append(value)
    assert len({id(v) for v in got}) == len(got)  # all alive: no object handed out twice
    assert _held(replay) == [_answers._GONE] * 3  # each dropped at its first serve


def test_the_held_answers_are_freed_as_they_are_served(tmp_path: Path) -> None:
    """The start's objects are handed out, not copied: the first serve returns the very
    object the start kept, and the replayer holds no reference to it afterwards."""
    replay = Replayer(load(_cassette(tmp_path / "c.jsonl")))
    held = _held(replay)
    assert held is not None
    kept = held[2]
    assert replay("t", {"q": 2}) is kept
    assert all(value is not kept for value in held)


_FORKED = """
import os, sys
from cassette_tui.core import CassetteFormatError, Replayer, load
want = {want!r}
replay = Replayer(load({path!r}), repeat="last")

def edit_and_check(who):
    for _ in range(3):
        value = replay("t", {{"q": 2}})
        assert value == want, (who, value)
        value["items"].append(who)

def child(who):
    pid = os.fork()
    if pid == 0:
        try:
            edit_and_check(who)
        except BaseException as exc:
            print(who, repr(exc), flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, who

child("child before any serve")  # inherits the object its parent had not served yet
edit_and_check("parent")  # its own copy, handed out once in this process
child("child after the parent's serves")  # inherits no object: decodes afresh
print("ok")
"""


def test_a_forked_child_and_its_parent_each_hand_out_an_answer_once(tmp_path: Path) -> None:
    """A child forked before the parent served an entry inherits the parent's kept
    object (its own copy: memory is not shared) and hands it out once; one forked after
    inherits none. In each process, each serve after the first is pristine."""
    path = _cassette(tmp_path / "c.jsonl")
    code = _FORKED.format(want=ANSWER, path=str(path))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok"


def _old_path(monkeypatch: pytest.MonkeyPatch, path: Path, **kw: Any) -> Replayer:
    """A replayer over ``path`` that keeps no answer: every call decodes (before)."""
    with monkeypatch.context() as patch:
        patch.setattr(_answers, "HELD_ANSWER_BYTES", 0)
        replay = Replayer(load(path), **kw)
    assert _held(replay) is None
    return replay


# JSON values as a response can hold: integers past 64 bits and non-ASCII, escaped or
# lone-surrogate text included (those the start leaves to the entry parse at the call)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_values = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


def _json(value: Any, ascii_only: bool) -> str:
    """``value``'s JSON text, non-ASCII written as it is unless ``ascii_only`` (a lone
    surrogate is always escaped: a file holds UTF-8)."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(_values, min_size=1, max_size=6), ascii_only=st.booleans())
def test_each_answer_is_the_decode_of_its_bytes(values: list[Any], ascii_only: bool) -> None:
    """A call's answer, kept at the start or not, is the bytes' decode (orjson, as the
    calls decoded them before), or the entry parse's value where orjson refuses the bytes:
    the same values and the same types (``repr``: ``1``, ``1.0`` and ``True`` differ) as
    the old path that keeps nothing, at the first serve and at a later one."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        path = Path(tmp) / "c.jsonl"
        bodies = [_json(v, ascii_only) for v in values]
        _write(path, [({"q": i}, body) for i, body in enumerate(bodies)])
        replay = Replayer(load(path), repeat="last")
        answers = replay._answers
        assert answers is not None
        before = _old_path(mp, path, repeat="last")
        for i, body in enumerate(bodies):
            expected = load(path).owned_entry(i).response
            for _ in range(2):  # the kept object, then a decode
                got = replay("t", {"q": i})
                old = before("t", {"q": i})
                assert repr(got) == repr(old) == repr(expected)
                if answers.offsets[i] >= 0:  # plain: served from its bytes before
                    assert repr(got) == repr(orjson.loads(body.encode()))


def test_above_the_cap_no_answer_is_kept_and_each_call_decodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain answers past ``HELD_ANSWER_BYTES`` in all: the start keeps none (those it
    kept on the way are dropped), and a call reads its bytes as before, so bytes written
    over since the start are refused at the call, not served from the start's parse."""
    path = _cassette(tmp_path / "c.jsonl")
    one = len(json.dumps(ANSWER))
    monkeypatch.setattr(_answers, "HELD_ANSWER_BYTES", 2 * one)  # two of the three answers
    replay = Replayer(load(path))
    assert _held(replay) is None
    monkeypatch.setattr(_answers, "HELD_ANSWER_BYTES", 3 * one)  # all three: kept
    assert _held(Replayer(load(path))) is not None
    text = path.read_bytes()
    at = text.rindex(json.dumps(ANSWER).encode())
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(b"[" + b" " * (one - 1))  # the same length: the offsets still fall on lines
    assert replay("t", {"q": 1}) == ANSWER
    with pytest.raises(CassetteFormatError, match="changed on disk"):
        replay("t", {"q": 2})
