"""Where a re-recording goes: a fresh name beside the old cassette, never an existing file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from cassette_tui.core.loop.rerecord import rerecord_path

WHEN = datetime(2026, 12, 1, 2, 48, 0, tzinfo=UTC)


def test_beside_the_old_one_with_the_utc_time(tmp_path: Path) -> None:
    old = tmp_path / "runs" / "fail.jsonl"
    assert rerecord_path(old, WHEN) == tmp_path / "runs" / "fail.rerecord-20261201T024800Z.jsonl"
    local = WHEN.astimezone(timezone(timedelta(hours=-5)))  # the name is in UTC whatever the zone
    assert rerecord_path(old, local).name == "fail.rerecord-20261201T024800Z.jsonl"


def test_a_taken_name_gets_a_number(tmp_path: Path) -> None:
    old = tmp_path / "fail.jsonl"
    first = rerecord_path(old, WHEN)
    first.write_text("kept\n")
    second = rerecord_path(old, WHEN)
    assert second.name == "fail.rerecord-20261201T024800Z-2.jsonl"
    second.symlink_to(tmp_path / "nowhere")  # a dangling link is taken too
    assert rerecord_path(old, WHEN).name == "fail.rerecord-20261201T024800Z-3.jsonl"
    assert first.read_text() == "kept\n"


def test_a_re_recording_re_recorded_keeps_the_first_stem(tmp_path: Path) -> None:
    old = tmp_path / "fail.rerecord-20261130T210000Z-2.jsonl"
    assert rerecord_path(old, WHEN).name == "fail.rerecord-20261201T024800Z.jsonl"
    assert rerecord_path(tmp_path / "results.json", WHEN).name == (
        "results.rerecord-20261201T024800Z.jsonl"
    )


def test_without_a_file_it_goes_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert rerecord_path(None, WHEN) == tmp_path / "rerecord-20261201T024800Z.jsonl"
