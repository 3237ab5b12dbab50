"""A replayed exception reads as the live one did (issue 24): ``str()``, ``repr()``,
``.args`` and its JSON attributes equal the recorded exception's; an exception group
replays as a group; a class recorded from ``python agent.py`` is found again under
another module name; old cassettes (type and message only) replay without a prefix."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import pickle
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cassette_tui.core import Recorder, Replayer, ToolError, load
from cassette_tui.core.format.errors import ToolErrorClassWarning
from support.factory import entry, write_cassette
from support.run import run_module_agent


class RefundDenied(Exception):
    """A framework-style tool error: a message that names its class, and a status."""

    def __init__(self, message: str, status: int, *, order: str) -> None:
        super().__init__(message)
        self.status = status
        self.order = order
        self.raw = object()  # not JSON: left out of the record, never a failure


class CardDeclined(Exception):
    """A payment SDK's error: its own ``type`` and ``message`` attributes (the names
    ``ToolError`` uses) win, as the agent reads them."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Request failed: {message}")
        self.type = "card_error"
        self.message = message
        self.code = "card_declined"


class Coded(Exception):
    """An exception with its own ``repr`` and two args."""

    def __repr__(self) -> str:
        return f"<Coded {self.args[0]}>"


def _live_then_replayed(
    tmp_path: Path, raise_it: Callable[[], None]
) -> tuple[BaseException, BaseException]:
    """The exception ``raise_it`` raises live while recorded, and the one replay raises."""
    path = tmp_path / "run.jsonl"

    def live(tool: str, args: dict) -> None:
        raise_it()

    with Recorder(path) as rec, pytest.raises(BaseException) as first:
        rec.wrap(live)("tool", {"q": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every class here is rebuilt: no warning
        with pytest.raises(BaseException) as again:
            Replayer(load(path))("tool", {"q": 1})
    return first.value, again.value


def _raise(exc: BaseException) -> Callable[[], None]:
    def go() -> None:
        raise exc

    return go


@pytest.mark.parametrize(
    "exc",
    [
        KeyError("user_id"),
        FileNotFoundError(2, "No such file or directory", "notes/a.md"),
        PermissionError(13, "Permission denied"),
        TimeoutError("read timed out"),
        ValueError("a", 2, [3]),
        ValueError(),
        RefundDenied("RefundDenied: amount over the 30-day limit", 403, order="A-17"),
        Coded("E42", "quota"),
        CardDeclined("Your card was declined."),
        json.JSONDecodeError("Expecting value", '{"a": }', 6),
        AttributeError("no attribute 'x'", name="x", obj=None),
    ],
    ids=lambda e: f"{type(e).__name__}{len(e.args)}",
)
def test_str_repr_args_and_attributes_equal_the_recorded_ones(
    tmp_path: Path, exc: BaseException
) -> None:
    live, replayed = _live_then_replayed(tmp_path, _raise(exc))
    assert live is exc
    assert isinstance(replayed, type(exc)) and isinstance(replayed, ToolError)
    assert str(replayed) == str(exc)  # no "Type: " prefix
    assert repr(replayed) == repr(exc)
    assert replayed.args == exc.args
    names = ("errno", "strerror", "filename", "status", "order", "name", "pos", "type", "code")
    for name in (*names, "message"):
        if hasattr(exc, name) and getattr(exc, name) is not None:
            assert getattr(replayed, name) == getattr(exc, name), name
    # a pickled copy (a multiprocessing worker) reads the same
    copied = pickle.loads(pickle.dumps(replayed))
    assert (type(copied), str(copied), repr(copied), copied.args) == (
        type(replayed),
        str(replayed),
        repr(replayed),
        replayed.args,
    )


def test_the_error_object_records_args_attrs_and_repr_only_when_they_say_more(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    raised = [
        TimeoutError("slow"),
        KeyError("user_id"),
        FileNotFoundError(2, "No such file or directory", "a.md"),
        RefundDenied("denied", 403, order="A-17"),
        Coded("E42"),
    ]

    def live(tool: str, args: dict) -> None:
        raise raised[args["i"]]

    with Recorder(path) as rec:
        for i in range(len(raised)):
            with pytest.raises(Exception):  # noqa: B017
                rec.wrap(live)("t", {"i": i})
    errors = [e.error for e in load(path)]
    assert errors[0] == {"type": "TimeoutError", "message": "slow"}  # as before
    assert errors[1] == {"type": "KeyError", "message": "'user_id'", "args": ["user_id"]}
    assert errors[2] == {
        "type": "FileNotFoundError",
        "message": "[Errno 2] No such file or directory: 'a.md'",
        "args": [2, "No such file or directory"],
        "attrs": {"errno": 2, "strerror": "No such file or directory", "filename": "a.md"},
    }
    assert errors[3] == {
        "type": "RefundDenied",
        "message": "denied",
        "module": __name__,
        "attrs": {"status": 403, "order": "A-17"},  # `raw` is not JSON: left out
    }
    assert errors[4]["repr"] == "<Coded E42>"


def test_args_that_are_not_json_fall_back_to_the_message(tmp_path: Path) -> None:
    exc = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    _, replayed = _live_then_replayed(tmp_path, _raise(exc))
    assert isinstance(replayed, UnicodeDecodeError)
    assert (str(replayed), repr(replayed)) == (str(exc), repr(exc))
    assert replayed.args == (str(exc),)  # the bytes arg is not JSON: not recorded
    assert (replayed.encoding, replayed.start, replayed.end, replayed.reason) == (
        "utf-8",
        0,
        1,
        "invalid start byte",
    )


def test_a_key_error_reads_as_the_key(tmp_path: Path) -> None:
    """The LangChain / Agents SDK path: ``str(exc)`` goes to the model."""

    def lookup() -> None:
        user: dict[str, str] = {}
        user["user_id"]  # noqa: B018 - the KeyError itself

    live, replayed = _live_then_replayed(tmp_path, lookup)
    assert str(replayed) == str(live) == "'user_id'"
    assert replayed.args == ("user_id",)
    assert f"Tool failed: {replayed}" == "Tool failed: 'user_id'"


def test_old_cassettes_replay_their_message_without_a_prefix(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl",
        entry(1, "t", {}, error={"type": "TimeoutError", "message": "http_get timed out"}),
    )
    with pytest.raises(TimeoutError) as info:
        Replayer(load(path))("t", {})
    assert str(info.value) == "http_get timed out"
    assert info.value.args == ("http_get timed out",)
    assert repr(info.value) == "TimeoutError('http_get timed out')"
    assert info.value.type == "TimeoutError" and info.value.message == "http_get timed out"


def test_bad_extra_fields_of_an_error_object_are_ignored(tmp_path: Path) -> None:
    error = {"type": "ValueError", "message": "m", "args": "not a list", "attrs": [1]}
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "t", {}, error=error))
    with pytest.raises(ValueError) as info:
        Replayer(load(path))("t", {})
    assert (str(info.value), info.value.args) == ("m", ("m",))


# -- exception groups -------------------------------------------------------------------------
async def _fan_out() -> None:
    """A tool that fans out with ``asyncio.TaskGroup``; two of its parts fail."""

    async def part(n: int) -> None:
        if n == 1:
            raise FileNotFoundError(2, "No such file or directory", f"part-{n}.txt")
        if n == 2:
            raise KeyError(f"k{n}")

    async with asyncio.TaskGroup() as group:
        for n in range(3):
            group.create_task(part(n))


def test_an_exception_group_from_a_task_group_replays_as_a_group(tmp_path: Path) -> None:
    live, replayed = _live_then_replayed(tmp_path, lambda: asyncio.run(_fan_out()))
    assert isinstance(live, ExceptionGroup)
    assert isinstance(replayed, ExceptionGroup) and isinstance(replayed, ToolError)
    assert (str(replayed), repr(replayed)) == (str(live), repr(live))
    assert replayed.message == live.message == "unhandled errors in a TaskGroup"
    pairs = list(zip(live.exceptions, replayed.exceptions, strict=True))
    for a, b in pairs:
        assert isinstance(b, type(a)) and isinstance(b, ToolError)
        assert (str(b), repr(b), b.args) == (str(a), repr(a), a.args)
    assert replayed.exceptions[0].filename == "part-1.txt"  # type: ignore[attr-defined]
    # except* splits the replayed group as it did the live one
    caught: list[BaseException] = []
    try:
        raise replayed
    except* KeyError as keys:
        caught.extend(keys.exceptions)
    except* OSError as files:
        caught.extend(files.exceptions)
    assert sorted(map(str, caught)) == sorted(map(str, live.exceptions))


# -- a class recorded from ``python agent.py`` ----------------------------------------------
SCRIPT = textwrap.dedent(
    """
    import sys
    from cassette_tui.core import Recorder


    class RefundDenied(Exception):
        def __init__(self, message, status):
            super().__init__(message)
            self.status = status


    def refund(tool, args):
        raise RefundDenied("RefundDenied: over the limit", 403)


    if __name__ == "__main__":
        with Recorder(sys.argv[1]) as rec:
            try:
                rec.wrap(refund)("refund", {"order": "A-17"})
            except RefundDenied as exc:
                print("live:", exc)
    """
)


@pytest.fixture
def script_module(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """``refund_agent.py`` recorded by ``python refund_agent.py``; the module name it gets
    when a test imports it is dropped afterwards."""
    script = tmp_path / "refund_agent.py"
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
    assert done.stdout == "live: RefundDenied: over the limit\n"
    yield script, cassette
    sys.modules.pop("tests_refund_agent", None)


def test_a_main_class_is_rebuilt_from_the_script_imported_under_another_name(
    script_module: tuple[Path, Path],
) -> None:
    script, cassette = script_module
    error = load(cassette)[0].error
    assert error is not None
    assert (error["module"], error["script"]) == ("__main__", "refund_agent.py")
    # pytest (or a test) imports the script as a module of another name
    spec = importlib.util.spec_from_file_location("tests_refund_agent", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tests_refund_agent"] = module
    spec.loader.exec_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(module.RefundDenied) as info:
            Replayer(load(cassette))("refund", {"order": "A-17"})
    assert str(info.value) == "RefundDenied: over the limit"
    assert info.value.status == 403


def test_a_main_class_with_no_module_of_it_loaded_warns_and_raises_a_tool_error(
    script_module: tuple[Path, Path],
) -> None:
    _, cassette = script_module
    with (
        pytest.warns(ToolErrorClassWarning, match="'__main__.RefundDenied' cannot be rebuilt"),
        pytest.raises(ToolError) as info,
    ):
        Replayer(load(cassette))("refund", {"order": "A-17"})
    assert type(info.value) is ToolError
    assert str(info.value) == "RefundDenied: over the limit"  # the recorded text, as it was
    assert info.value.status == 403  # type: ignore[attr-defined]


# -- a class recorded from ``python -m agent`` ------------------------------------------------
MODULE_AGENT = textwrap.dedent(
    """
    import sys
    from cassette_tui.core import ToolError, wrap_dispatcher

    print("top level", __name__, file=sys.stderr)


    class Boom(Exception):
        pass


    def live(tool, args):
        raise Boom("no")


    try:
        wrap_dispatcher(live)("t", {"x": 1})
    except Boom as exc:
        print("caught", type(exc).__name__, isinstance(exc, ToolError))
    """
)


def test_a_class_of_an_agent_run_with_dash_m_replays_without_running_it_again(
    tmp_path: Path,
) -> None:
    # the recorded module is `m_agent` (python -m m_agent): replay imported m_agent, which ran
    # the agent's top level a second time, inside the first run's call, and hung on a lock
    (tmp_path / "m_agent.py").write_text(MODULE_AGENT, encoding="utf-8")
    cassette = tmp_path / "rec.jsonl"

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        return run_module_agent(tmp_path, "m_agent", mode, cassette)

    recorded = run("record")
    assert recorded.stdout == "caught Boom False\n", recorded.stderr
    assert load(cassette)[0].error["module"] == "m_agent"  # type: ignore[index]
    replayed = run("replay")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == "caught Boom True\n"  # the agent's own class, a ToolError too
    assert replayed.stderr.count("top level") == 1
