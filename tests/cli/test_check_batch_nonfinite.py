"""``check`` on what the format forbids but the load reads (docs/format.md): a ``batch``
that cannot be the integer seq of its batch's first call (``bad_batch``), a bare ``NaN``/``Infinity``
(``non_finite``; read as the float, so a finding, not an error). Both in text and
``--json``, exit status 1; the format's own forms give no finding."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cassette_tui.core import load
from cassette_tui.core.format.cassette import Cassette
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.scan.lint import lint
from support.paths import SCRIPT

BAD_BATCHES = ["x", 1.5, None, -1, True, 99]


def _line(seq: int, **fields: object) -> str:
    record: dict[str, object] = {"seq": seq, "tool": "t", "args": {"n": seq}, "response": 1}
    record.update(fields)
    return json.dumps(record)  # writes NaN/Infinity bare, as Python's json does


def _cassette(tmp_path: Path) -> Path:
    lines = [_line(1), _line(2, batch=1)]  # a valid batch: no finding
    lines += [_line(3 + k, batch=bad) for k, bad in enumerate(BAD_BATCHES)]
    nan, inf = float("nan"), float("inf")
    lines.append(_line(9, response={"loss": nan, "r": [inf, -inf]}))  # line 9
    lines.append(_line(10, args={"x": -inf}))  # line 10
    # the format's own form and the words in strings: no finding
    lines.append(_line(11, response={"m": {"$numberDouble": "NaN"}, "s": "NaN, Infinity"}))
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=120, check=False,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_check_json_reports_bad_batches_and_bare_non_finite_numbers(tmp_path: Path) -> None:
    done = _run("check", "--json", _cassette(tmp_path))
    assert done.returncode == 1, done.stderr
    found = [(f["kind"], f["seq"], f["path"]) for f in json.loads(done.stdout)["findings"]]
    assert found == [
        *(("bad_batch", seq, "$.batch") for seq in range(3, 9)),
        ("non_finite", 9, "$.response.loss"),
        ("non_finite", 10, "$.args.x"),
    ]
    messages = {f["seq"]: f["message"] for f in json.loads(done.stdout)["findings"]}
    assert "line 3" in messages[3] and 'string "x"' in messages[3]
    assert "number 1.5" in messages[4] and "null" in messages[5] and "boolean" in messages[7]
    assert "99 is after the entry's own seq 8" in messages[8]
    assert "line 9" in messages[9] and "2 more" in messages[9] and "$numberDouble" in messages[9]
    assert "-Infinity" in messages[10]


def test_check_text_names_kind_seq_and_field(tmp_path: Path) -> None:
    done = _run("check", _cassette(tmp_path))
    assert done.returncode == 1, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("  ") and
            not line.startswith("    ")]  # fmt: skip
    assert [row[:4] for row in rows] == [
        *(["bad_batch", "seq", str(seq), "$.batch"] for seq in range(3, 9)),
        ["non_finite", "seq", "9", "$.response.loss"],
        ["non_finite", "seq", "10", "$.args.x"],
    ]


def test_a_clean_cassette_with_batches_and_encoded_nan_passes(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(
        _line(1) + "\n" + _line(2, batch=1, response={"v": {"$numberDouble": "Infinity"}}) + "\n",
        encoding="utf-8",
    )
    done = _run("check", path)
    assert done.returncode == 0, done.stdout
    assert not lint(load(path))


def test_in_memory_lint_reports_a_bad_batch() -> None:
    entries = [
        Entry(seq=1, tool="t", args={}, response=float("nan")),
        Entry(seq=2, tool="t", args={"n": 2}, response=1, extra={"batch": 7}),
    ]
    found = lint(Cassette.from_entries(entries))
    assert [(f.kind, f.seq) for f in found] == [("bad_batch", 2)]  # no text: no non_finite


def test_a_batch_naming_a_reserved_seq_no_entry_has_is_the_formats(tmp_path: Path) -> None:
    """A model turn of three calls whose first never reached the recorder (its arguments
    not JSON: ``NotSerializable``): the other two name the turn's first seq, reserved and
    unused. The recorder's own cassette passes its own ``check`` (it did not: ``bad_batch``,
    "no entry has seq 1"), and the two calls stay one batch for the diff."""
    import pytest
    from cassette_tui.core.replay.recorder import NotSerializable, Recorder
    from cassette_tui.core.replay.turn import CALL_SLOT, CallSlot

    path = tmp_path / "turn.jsonl"
    recorder = Recorder(path)
    for index, args in enumerate([{"x": {1, 2}}, {"n": 1}, {"n": 2}]):
        token = CALL_SLOT.set(CallSlot("turn", index, 3))
        try:
            if index == 0:
                with pytest.raises(NotSerializable):
                    recorder.call(lambda tool, a: {"ok": tool}, "t", args)
            else:
                recorder.call(lambda tool, a: {"ok": tool}, "t", args)
        finally:
            CALL_SLOT.reset(token)
    recorder.close()
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(e["seq"], e["batch"]) for e in entries] == [(2, 1), (3, 1)]
    done = _run("check", path)
    assert done.returncode == 0, done.stdout
    assert not lint(load(path))
