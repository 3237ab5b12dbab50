"""Replay gives back exactly what was recorded (issue 10, first part): exception classes,
JSON round-trip changes, args checked before the live call, fresh values, a failed write
stops the recording, the report is never lost, special files are never replaced."""

from __future__ import annotations

import errno
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from cassette_tui.core import (
    CassetteMiss,
    Recorder,
    Replayer,
    ToolError,
    load,
    save,
    wrap_dispatcher,
)
from cassette_tui.core.format.atomic import NotReplaceable, write_atomic
from cassette_tui.core.format.errors import ToolErrorClassWarning
from cassette_tui.core.replay.recorder import NotSerializable, RecordingStopped
from cassette_tui.core.replay.report import ReplayReport, journal_events, journal_path
from cassette_tui.core.replay.report_sink import ReportPathError
from support.factory import entry, make_cassette, write_cassette
from support.odd_values import Colour, Name, Size


class QuotaExceeded(Exception):
    """A non-builtin tool exception, importable as tests.core...; see the subprocess test."""


# -- exception classes survive ------------------------------------------------------------
@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError("no such file: a.md"),
        KeyError("k"),
        TimeoutError("slow"),
        PermissionError("denied"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"),
        json.JSONDecodeError("Expecting value", "x", 0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_recorded_exception_is_raised_again_as_its_class(tmp_path: Path, exc: Exception) -> None:
    path = tmp_path / "run.jsonl"

    def live(tool: str, args: dict) -> None:
        raise exc

    with Recorder(path) as rec, pytest.raises(type(exc)):
        rec.wrap(live)("read", {"p": 1})
    replay = Replayer(load(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a rebuilt class warns about nothing
        with pytest.raises(type(exc)) as info:
            replay("read", {"p": 1})
    assert isinstance(info.value, ToolError)
    assert info.value.type == type(exc).__qualname__
    assert info.value.seq == 1
    # the class survives pickling (a multiprocessing worker sends it back)
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, type(exc)) and isinstance(again, ToolError)


def test_builtin_error_is_stored_without_module_and_others_with_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"

    def live(tool: str, args: dict) -> None:
        raise (QuotaExceeded("quota") if tool == "q" else FileNotFoundError("gone"))

    with Recorder(path) as rec:
        for tool in ("f", "q"):
            with pytest.raises(Exception):  # noqa: B017
                rec.wrap(live)(tool, {})
    a, b = load(path)
    assert a.error == {"type": "FileNotFoundError", "message": "gone"}
    assert b.error == {"type": "QuotaExceeded", "message": "quota", "module": __name__}
    with pytest.raises(QuotaExceeded) as info:
        Replayer(load(path))("q", {})
    # str() is the live exception's, with no "Type: " prefix (issue 24)
    assert isinstance(info.value, ToolError) and str(info.value) == "quota"


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (
            {"type": "RateLimited", "message": "m", "module": "no_such_module_zz"},
            "no_such_module_zz.RateLimited",
        ),
        ({"type": "Missing", "message": "m", "module": "json"}, "json.Missing"),
        ({"type": "dumps", "message": "m", "module": "json"}, "json.dumps"),
        ({"type": "HTTPError", "message": "m"}, "HTTPError"),
    ],
)
def test_a_class_that_cannot_be_rebuilt_warns_naming_it(
    tmp_path: Path, error: dict, named: str
) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "t", {}, error=error))
    with (
        pytest.warns(ToolErrorClassWarning, match=f"'{named}' cannot be rebuilt"),
        pytest.raises(ToolError) as info,
    ):
        Replayer(load(path))("t", {})
    assert type(info.value) is ToolError


def test_case_21_agent_falls_back_on_replay_like_it_did_live(real: Path, tmp_path: Path) -> None:
    """bugcases/21: the agent's ``except FileNotFoundError`` catches the replayed error, so
    replay output and exit status equal the recording's."""
    agent = real / "bugcases" / "21_exception_class_lost" / "agent.py"
    cassette = tmp_path / "rec.jsonl"

    def run(mode: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CASSETTE_MODE": mode, "CASSETTE_PATH": str(cassette)}
        return subprocess.run(
            [sys.executable, str(agent)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    recorded = run("record")
    assert recorded.returncode == 0, recorded.stderr
    assert "falling back to README.md" in recorded.stdout
    replayed = run("replay")
    assert (replayed.returncode, replayed.stdout) == (recorded.returncode, recorded.stdout)
    # and the handed recording replays the same way
    cassette.unlink()
    cassette.write_bytes((agent.parent / "recorded.jsonl").read_bytes())
    assert run("replay").stdout == recorded.stdout


# -- values JSON would change are refused at record time ----------------------------------
@pytest.mark.parametrize(
    ("response", "path", "what"),
    [
        ({12: ["A"]}, "$[12]", 'int key 12 becomes the string "12"'),
        ({"rows": [("A", False)]}, "$.rows[0]", "tuple becomes a list"),
        ({"size": Size.S}, "$.size", "int subclass"),
        ({"name": Name("x")}, "$.name", "str subclass"),
        ({"c": [1, {"d": Colour.RED}]}, "$.c[1].d", "is not JSON data"),
        ({"ok": {True: 1}}, "$.ok.True", 'bool key True becomes the string "true"'),
    ],
)
def test_response_that_json_changes_is_refused_naming_the_path(
    tmp_path: Path, response: object, path: str, what: str
) -> None:
    with Recorder(tmp_path / "run.jsonl") as rec, pytest.raises(NotSerializable) as info:
        rec.wrap(lambda t, a: response)("t", {"q": 1})
    assert info.value.part == "response" and info.value.path == path
    assert path in str(info.value) and what in str(info.value)


def test_case_22_recording_refuses_int_keys_and_tuples(real: Path, tmp_path: Path) -> None:
    agent = real / "bugcases" / "22_json_roundtrip_types" / "agent.py"
    env = {**os.environ, "CASSETTE_MODE": "record", "CASSETTE_PATH": str(tmp_path / "c.jsonl")}
    done = subprocess.run(
        [sys.executable, str(agent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "NotSerializable" in done.stderr
    assert "at $[12]" in done.stderr and 'int key 12 becomes the string "12"' in done.stderr
    assert "row 12 first free seat" not in done.stdout  # no silent recording


# -- args and tool name are checked before the live call ----------------------------------
@pytest.mark.parametrize(
    ("tool", "args", "blame"),
    [
        ("t", {1: "a", "b": 2}, "int key 1"),
        ("t", {"when": {1, 2}}, "not JSON-serializable"),
        ("t", {"t": ("a", "b")}, "tuple becomes a list"),
        ("", {"q": 1}, "tool name ''"),
        (None, {"q": 1}, "tool name None"),
        (3, {"q": 1}, "tool name 3"),
    ],
)
def test_bad_args_or_tool_name_raise_before_the_live_call(
    tmp_path: Path, tool: object, args: object, blame: str
) -> None:
    ran = []
    path = tmp_path / "run.jsonl"
    with Recorder(path) as rec:
        with pytest.raises(NotSerializable, match="not run") as info:
            rec.wrap(lambda t, a: ran.append(t))(tool, args)  # type: ignore[arg-type]
        assert blame in str(info.value)
        assert info.value.part in ("args", "tool")
        rec.wrap(lambda t, a: {"ok": 1})("good", {"q": 1})  # the recorder goes on
    assert ran == []
    assert [e.tool for e in load(path)] == ["good"]


def test_args_that_cannot_be_digested_raise_before_the_live_call(tmp_path: Path) -> None:
    ran = []
    circular: dict = {"q": 1}
    circular["self"] = circular
    with (
        Recorder(tmp_path / "run.jsonl") as rec,
        pytest.raises(NotSerializable, match="args cannot be digested.*not run"),
    ):
        rec.wrap(lambda t, a: ran.append(1))("t", circular)
    assert ran == []


# -- no shared objects ---------------------------------------------------------------------
def test_replayed_values_are_fresh_through_every_door(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "c.jsonl", entry(1, "get", {"u": 1}, response={"items": [{"sku": "PEN"}]})
    )
    cassette = load(path)
    replay = Replayer(cassette, repeat="last")
    first = replay("get", {"u": 1})
    first["items"].append("ink")
    second = replay("get", {"u": 1})  # past the recording: repeat last
    assert second == {"items": [{"sku": "PEN"}]}
    assert second is not first
    second["items"].clear()
    view = cassette[0]
    view.response["items"].append("x")
    view.args["u"] = 2
    assert cassette[0].response == {"items": [{"sku": "PEN"}]}
    assert cassette[0].args == {"u": 1}
    assert [e.response for e in cassette] == [{"items": [{"sku": "PEN"}]}]
    assert replay("get", {"u": 1}) == {"items": [{"sku": "PEN"}]}
    memory = make_cassette([("get", {"u": 1}, {"items": []})])
    memory[0].response["items"].append(1)
    assert Replayer(memory)("get", {"u": 1}) == {"items": []}


def test_case_23_agent_edits_do_not_reach_the_cassette(real: Path) -> None:
    folder = real / "bugcases" / "23_shared_replayed_response"
    done = subprocess.run(
        [sys.executable, str(folder / "agent.py"), str(folder / "recorded.jsonl")],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    recorded = "{'items': [{'sku': 'PEN', 'qty': 1}]}"
    assert f"2nd replay of get_cart: {recorded}" in done.stdout
    assert f"cassette entry seq 1 now holds: {recorded}" in done.stdout


# -- a failed write stops the recording ------------------------------------------------------
class _FlakyDisk:
    """A file object whose writes fail (ENOSPC) while ``full`` is set."""

    def __init__(self, fh: object) -> None:
        self._fh = fh
        self.full = False

    def write(self, data: bytes) -> int:
        if self.full:
            self._fh.write(data[: len(data) // 2])  # a partial line, like a real full disk
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._fh.write(data)

    def __getattr__(self, name: str) -> object:
        return getattr(self._fh, name)


def test_a_failed_write_stops_the_recording_before_any_later_live_call(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rec = Recorder(path)
    disk = _FlakyDisk(rec._fh)
    rec._fh = disk  # type: ignore[assignment]
    ran: list[int] = []

    def live(tool: str, args: dict) -> dict:
        ran.append(args["i"])
        return {"i": args["i"]}

    dispatch = rec.wrap(live)
    dispatch("t", {"i": 1})
    disk.full = True
    with pytest.raises(OSError, match="No space"):
        dispatch("t", {"i": 2})
    disk.full = False  # the disk frees up: the recording still refuses
    with pytest.raises(RecordingStopped, match="recording stopped at seq 2") as info:
        dispatch("t", {"i": 3})
    assert ran == [1, 2]  # call 3 never ran live
    assert isinstance(info.value.cause, OSError)
    rec.close()
    assert [(e.seq, e.args) for e in load(path)] == [(1, {"i": 1})]  # no partial line


def test_an_unstorable_response_stops_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    ran = []

    def live(tool: str, args: dict) -> object:
        ran.append(tool)
        return {1: 2} if tool == "bad" else {"ok": True}

    with Recorder(path) as rec:
        dispatch = rec.wrap(live)
        dispatch("a", {})
        with pytest.raises(NotSerializable):
            dispatch("bad", {})
        with pytest.raises(RecordingStopped):
            dispatch("c", {})
    assert ran == ["a", "bad"]
    assert [(e.seq, e.tool) for e in load(path)] == [(1, "a")]


# -- the replay report is never lost ---------------------------------------------------------
REPORT_AGENT = textwrap.dedent(
    """
    import os, sys, time
    from cassette_tui.core import wrap_dispatcher

    first = wrap_dispatcher(lambda t, a: None, mode="replay", path=sys.argv[1])
    second = wrap_dispatcher(lambda t, a: None, mode="replay", path=sys.argv[2])
    first("search_docs", {"q": "x"})
    second("read_file", {"path": "a"})
    try:
        second("read_file", {"path": "never recorded"})
    except Exception:
        pass
    how = sys.argv[3]
    if how == "os_exit":
        os._exit(3)  # no exit hook: every call is in the journal already, as served
    if how == "sigterm":
        print("ready", flush=True)
        time.sleep(60)
    """
)


@pytest.mark.parametrize("how", ["exit", "os_exit", "sigterm"])
def test_one_report_per_process_even_when_killed(tmp_path: Path, how: str) -> None:
    a = write_cassette(tmp_path / "a.jsonl", entry(1, "search_docs", {"q": "x"}))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "read_file", {"path": "a"}))
    agent = tmp_path / "agent.py"
    agent.write_text(REPORT_AGENT, encoding="utf-8")
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()  # a report's folder is never created (test_report_folder.py)
    env = {**os.environ, "CASSETTE_REPORT": str(report)}
    proc = subprocess.Popen(
        [sys.executable, str(agent), str(a), str(b), how],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if how == "sigterm":
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    if how == "sigterm":
        assert proc.returncode == -signal.SIGTERM  # the default action still happens
    doc = json.loads(report.read_text(encoding="utf-8"))
    first, second = doc["wrappers"]
    assert first["cassette"] == str(a) and second["cassette"] == str(b)
    run = ReplayReport.read_run(report)  # the file, or the journal where it holds more
    assert [c.outcome for c in run.calls or ()] == ["hit", "hit", "miss"]
    assert [m.args for m in run.misses] == [{"path": "never recorded"}]
    if how == "os_exit":  # the file as written at creation; the journal has the calls
        assert first["calls"] == second["calls"] == []
        return
    assert [c["outcome"] for c in first["calls"]] == ["hit"]
    assert [c["outcome"] for c in second["calls"]] == ["hit", "miss"]
    assert [m["args"] for m in doc["misses"]] == [{"path": "never recorded"}]
    assert doc["misses"][0]["cassette"] == str(b)
    ends = [e for e in _journal(report) if "end" in e]  # the summaries, at the end
    assert [e["end"]["calls"] for e in ends] == [1, 2]


def _journal(report: Path) -> list[dict]:
    """The journal's lines as the reader takes them (zero bytes of unfilled regions
    skipped, in served order)."""
    return [dict(event) for event in journal_events(journal_path(report))]


def test_report_is_appended_as_the_run_goes(tmp_path: Path) -> None:
    """Each call is one line appended to the journal as it is served (the report file is
    written at creation and at the end, never rewritten per call: a long run's cost would
    grow with its length); the run's report is read from them at any moment."""
    path = write_cassette(tmp_path / "c.jsonl", entry(1, "t", {"i": 1}), entry(2, "t", {"i": 2}))
    report = tmp_path / "r.json"
    dispatch = wrap_dispatcher(lambda t, a: None, mode="replay", path=path, report=report)
    assert json.loads(report.read_text())["calls"] == []  # written at creation
    written = report.read_bytes()
    dispatch("t", {"i": 1})
    assert [c.seq for c in ReplayReport.read_run(report).calls or ()] == [1]
    dispatch("t", {"i": 2})
    assert [c.seq for c in ReplayReport.read_run(report).calls or ()] == [1, 2]
    assert report.read_bytes() == written  # appended to the journal, not rewritten
    header, *calls = _journal(report)
    assert header["header"]["seqs"] == [1, 2]
    assert [(c["call"]["n"], c["call"]["seq"], c["recorded"]) for c in calls] == [
        (1, 1, 1),
        (2, 2, 1),
    ]


def test_the_report_as_written_is_the_typed_report_and_the_journal_agrees(
    tmp_path: Path,
) -> None:
    """What the file gets (``Replayer.report``, built from the call log without a
    ``CallRecord`` a call) is ``replay_report().to_json()``; the run read back from the
    journal alone (the agent killed before exit) has the same calls, misses and counts;
    the journal's last line sums the replay up."""
    path = write_cassette(
        tmp_path / "c.jsonl", entry(1, "t", {"i": 1}), entry(2, "t", {"i": 1}), entry(3, "u", {})
    )
    report = tmp_path / "r.json"
    dispatch = wrap_dispatcher(lambda t, a: None, mode="replay", path=path, report=report)
    dispatch("t", {"i": 1})
    with pytest.raises(CassetteMiss):
        dispatch("t", {"i": "never"})
    dispatch("t", {"i": 1})
    replayer = dispatch.engine
    assert replayer.report() == replayer.replay_report().to_json()
    typed = replayer.replay_report()
    from_journal = ReplayReport.read_run(report)  # the file still holds no call
    assert from_journal.calls == typed.calls and from_journal.misses == typed.misses
    assert (from_journal.used, from_journal.unused_seqs) == (typed.used, typed.unused_seqs)
    assert from_journal.repeats == typed.repeats
    from cassette_tui.core.replay.report_sink import end_all

    end_all()  # as at exit: the summary line, then the file
    assert _journal(report)[-1]["end"] == {"calls": 3, "used": 2, "unused_seqs": [3]}
    assert ReplayReport.read(report) == typed


@pytest.mark.parametrize("where", ["dir", "file_as_parent", "fifo"])
def test_unwritable_report_path_is_an_error_when_the_wrapper_is_created(
    tmp_path: Path, where: str
) -> None:
    path = write_cassette(tmp_path / "c.jsonl", entry(1))
    if where == "dir":
        report = tmp_path / "a_dir"
        report.mkdir()
    elif where == "file_as_parent":
        (tmp_path / "plain").write_text("x")
        report = tmp_path / "plain" / "r.json"
    else:
        report = tmp_path / "fifo"
        os.mkfifo(report)
    with pytest.raises(ReportPathError, match=str(report)):
        wrap_dispatcher(lambda t, a: None, mode="replay", path=path, report=report)
    assert not os.path.lexists(f"{report}.journal")  # a refused path leaves no journal


# -- special files are never replaced ---------------------------------------------------------
def _special(tmp_path: Path, kind: str) -> Path:
    target = tmp_path / "target.jsonl"
    if kind == "symlink":
        real = write_cassette(tmp_path / "real.jsonl", entry(1))
        target.symlink_to(real)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target = Path("/dev/null")
    return target


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_overwrite_refuses_special_files(tmp_path: Path, kind: str) -> None:
    target = _special(tmp_path, kind)
    before = os.lstat(target)
    with pytest.raises(NotReplaceable, match="not a regular file"):
        write_atomic(target, [b"x"], overwrite=True)
    with pytest.raises(NotReplaceable):
        save(make_cassette([("t", {}, {})]), target, overwrite=True)
    with pytest.raises(NotReplaceable):
        Recorder(target, overwrite=True)
    after = os.lstat(target)
    assert (before.st_mode, before.st_ino) == (after.st_mode, after.st_ino)
    if kind == "symlink":
        assert load(tmp_path / "real.jsonl")[0].seq == 1


# -- duplicate keys in a line --------------------------------------------------------------------
def test_a_second_tool_after_the_response_is_a_format_error_not_a_wrong_replay(
    tmp_path: Path,
) -> None:
    """The index and the parsed entry must never disagree: a line holding ``tool`` twice
    is refused naming the file, the line and the field, so replay cannot serve it."""
    from cassette_tui.core import CassetteFormatError

    path = tmp_path / "dup.jsonl"
    path.write_text(
        json.dumps(entry(1, "search", {"q": "a"})) + "\n"
        + '{"seq": 2, "tool": "search", "args": {"q": "b"}, "response": {"hits": 2}, '
        '"tool": "delete_all"}\n',
        encoding="utf-8",
    )  # fmt: skip
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    err = info.value
    assert (err.path, err.line) == (str(path), 2)
    assert "duplicate key 'tool'" in str(err)
    kept = load(path, lenient=True)
    assert [e.tool for e in kept] == ["search"]
    with pytest.raises(CassetteMiss):
        Replayer(kept)("search", {"q": "b"})
