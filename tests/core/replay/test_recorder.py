"""Recording (core/replay/recorder.py): one flushed line per call, errors recorded and
re-raised; args that JSON would change are refused at their path before the live call."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from cassette_tui.core import Recorder, Replayer, ToolError, load
from cassette_tui.core.format.digest import digest
from cassette_tui.core.replay.recorder import NotSerializable
from support.odd_values import Colour, Name, Size


def live(tool: str, args: dict) -> dict:
    if args.get("fail"):
        raise TimeoutError(f"{tool} timed out")
    return {"tool": tool, "echo": args}


def test_records_calls_and_errors_then_replays_them(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Recorder(path) as rec:
        dispatch = rec.wrap(live)
        assert dispatch("search_docs", {"q": "retry"}) == {
            "tool": "search_docs",
            "echo": {"q": "retry"},
        }
        with pytest.raises(TimeoutError, match="timed out"):
            dispatch("http_get", {"fail": True})
    cassette = load(path)
    assert [e.seq for e in cassette] == [1, 2]
    assert cassette[0].args_digest == digest({"q": "retry"})
    assert cassette[1].error == {"type": "TimeoutError", "message": "http_get timed out"}
    for entry in cassette:
        assert entry.extra["recorded_at"].endswith("Z")
        assert isinstance(entry.extra["duration_ms"], float)
    replay = Replayer(cassette)
    assert replay("search_docs", {"q": "retry"})["echo"] == {"q": "retry"}
    with pytest.raises(ToolError, match="^http_get timed out$"):
        replay("http_get", {"fail": True})


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 200, "results": [{"title": "b", "id": 2}, {"title": "a", "id": 1}]},
        {"zeta": 1, "alpha": {"y": [], "x": None}, "Émile": "ü"},
    ],
)
def test_replay_hands_back_the_json_text_the_tool_returned(tmp_path: Path, answer: dict) -> None:
    """Key order is the tool's: ``json.dumps`` or ``str()`` of a replayed answer is the
    live one's, so a framework sends the model the same prompt (the digest alone sorts)."""
    path = tmp_path / "run.jsonl"
    with Recorder(path) as rec:
        live_answer = rec.wrap(lambda tool, args: answer)("search", {"q": "x", "a": 1})
    replayed = Replayer(load(path))("search", {"a": 1, "q": "x"})
    assert json.dumps(replayed) == json.dumps(live_answer) == json.dumps(answer)
    assert str(replayed) == str(answer)
    line = path.read_text(encoding="utf-8")
    assert line.startswith('{"seq":1,"tool":"search","args":{"q":"x","a":1},"args_digest":')
    assert json.dumps(answer, ensure_ascii=False, separators=(",", ":")) in line


def test_each_line_is_on_disk_before_the_next_call(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rec = Recorder(path)
    seen = []

    def peek(tool: str, args: dict) -> int:
        seen.append(len(path.read_text(encoding="utf-8").splitlines()))
        return 0

    dispatch = rec.wrap(peek)
    for i in range(3):
        dispatch("t", {"i": i})
    assert seen == [0, 1, 2]
    rec.close()


def test_never_overwrites_an_existing_cassette(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"seq":1,"tool":"t","args":{},"response":1}\n', encoding="utf-8")
    with pytest.raises(FileExistsError, match="overwrite"):
        Recorder(path)
    assert len(load(path)) == 1


def test_overwrite_keeps_the_old_cassette_until_close(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"seq":1,"tool":"old","args":{},"response":1}\n', encoding="utf-8")
    rec = Recorder(path, overwrite=True)
    rec.wrap(live)("new", {"a": 1})
    assert load(path)[0].tool == "old"
    rec.close()
    assert [e.tool for e in load(path)] == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


def test_non_serializable_response_names_the_tool(tmp_path: Path) -> None:
    with (
        Recorder(tmp_path / "run.jsonl") as rec,
        pytest.raises(NotSerializable, match="'read_file'.*not JSON-serializable"),
    ):
        rec.wrap(lambda tool, args: b"\x00bytes")("read_file", {"path": "x"})
    # nothing was recorded: the empty file the recorder created is gone (a retry can run)
    assert not (tmp_path / "run.jsonl").exists()


def test_args_mutated_by_the_dispatcher_are_recorded_as_passed(tmp_path: Path) -> None:
    def mutating(tool: str, args: dict) -> str:
        args["added"] = True
        return "ok"

    with Recorder(tmp_path / "run.jsonl") as rec:
        rec.wrap(mutating)("t", {"q": 1})
    assert load(tmp_path / "run.jsonl")[0].args == {"q": 1}


def test_async_dispatcher(tmp_path: Path) -> None:
    async def alive(tool: str, args: dict) -> dict:
        await asyncio.sleep(0)
        if args.get("fail"):
            raise ValueError("bad")
        return {"ok": tool}

    async def run(dispatch) -> None:
        assert await dispatch("a", {}) == {"ok": "a"}
        with pytest.raises(ValueError, match="bad"):
            await dispatch("b", {"fail": 1})
        await asyncio.gather(*(dispatch("c", {"i": i}) for i in range(10)))

    with Recorder(tmp_path / "run.jsonl") as rec:
        dispatch = rec.wrap(alive)
        assert asyncio.iscoroutinefunction(dispatch)
        asyncio.run(run(dispatch))
    cassette = load(tmp_path / "run.jsonl")
    assert [e.seq for e in cassette] == list(range(1, 13))
    assert cassette[1].error == {"type": "ValueError", "message": "bad"}


def test_threads_get_unique_ordered_seqs(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    barrier = threading.Barrier(8)

    def slowish(tool: str, args: dict) -> dict:
        return {"n": args["n"]}

    with Recorder(path) as rec:
        dispatch = rec.wrap(slowish)

        def worker(k: int) -> None:
            barrier.wait()
            for i in range(50):
                dispatch("t", {"n": k * 100 + i})

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    cassette = load(path)
    assert [e.seq for e in cassette] == list(range(1, 401))
    assert sorted(e.args["n"] for e in cassette) == sorted(
        k * 100 + i for k in range(8) for i in range(50)
    )
    assert all(e.response == {"n": e.args["n"]} for e in cassette)


def test_a_crash_mid_run_loses_at_most_the_call_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    agent = textwrap.dedent(
        f"""
        import os
        from cassette_tui.core import Recorder
        rec = Recorder({str(path)!r})
        def live(tool, args):
            if args["i"] == 3:
                os._exit(9)  # hard crash inside the 4th call: no cleanup, no atexit
            return {{"i": args["i"]}}
        d = rec.wrap(live)
        for i in range(10):
            d("step", {{"i": i}})
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", agent], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 9, proc.stderr
    cassette = load(path)
    assert [e.response for e in cassette] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert all(line.endswith("}") for line in path.read_text(encoding="utf-8").splitlines())
    json.loads(path.read_text(encoding="utf-8").splitlines()[-1])


# -- args JSON would change: blamed on the args, at the first changed path -------------------
@pytest.mark.parametrize(
    ("args", "path", "what"),
    [
        ({1: "a", "b": 2}, "$[1]", 'int key 1 becomes the string "1"'),  # mixed key types
        ({"k": {2: 1}}, "$.k[2]", 'int key 2 becomes the string "2"'),
        ({"a": {"b": [1, ("x",)]}}, "$.a.b[1]", "tuple becomes a list"),
        ({"n": Name("x")}, "$.n", "str subclass"),
        ({"s": Size.S}, "$.s", "int subclass"),
        ({"c": [Colour.RED]}, "$.c[0]", "is not JSON data"),
        ({"when": {1, 2}}, "$.when", "is not JSON data"),
    ],
    ids=["mixed-keys", "int-key", "tuple", "str-subclass", "int-enum", "enum", "set"],
)
def test_args_that_json_changes_are_blamed_at_their_path_before_the_live_call(
    tmp_path: Path, args: dict, path: str, what: str
) -> None:
    ran: list[str] = []
    out = tmp_path / "run.jsonl"
    with Recorder(out) as rec:
        with pytest.raises(NotSerializable) as info:
            rec.wrap(lambda t, a: ran.append(t))("search", args)
        rec.wrap(lambda t, a: {"ok": 1})("search", {"q": 1})  # the recorder goes on
    err = info.value
    assert (err.part, err.path) == ("args", path)  # the args, not the response
    text = str(err)
    assert "the args" in text and f"at {path}" in text and what in text
    assert "the call was not run" in text
    assert ran == []  # the live tool never ran
    assert [(e.seq, e.args) for e in load(out)] == [(1, {"q": 1})]
