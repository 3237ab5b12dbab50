"""``plan_pin``/``write_pin``: the preview the app shows is byte for byte what is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.pin import PinError, plan_pin, write_pin


def test_the_plan_is_what_gets_written(samples: Path, tmp_path: Path) -> None:
    cassette = open_cassette(samples / "fail.jsonl")
    seq = cassette.seqs[-1]
    plan = plan_pin(cassette, seq, tmp_path / "fixtures", source="fail.jsonl", reason="flaky")
    assert not plan.exists and not plan.target.exists()
    path = write_pin(plan)
    assert path == plan.target and plan.exists
    assert path.read_text(encoding="utf-8") == plan.text()
    fixture = open_cassette(path)
    assert len(fixture) == 1
    assert fixture[0].extra["pinned"]["source"] == "fail.jsonl"
    assert fixture[0].extra["pinned"]["reason"] == "flaky"
    with pytest.raises(FileExistsError):
        write_pin(plan)
    assert write_pin(plan, force=True) == path


def test_an_unknown_seq_names_the_range(samples: Path, tmp_path: Path) -> None:
    cassette = open_cassette(samples / "fail.jsonl")
    with pytest.raises(LookupError, match=r"no entry with seq 999 \(seqs 1\.\."):
        plan_pin(cassette, 999, tmp_path)


def test_a_runs_last_entry_pins_its_call_and_words_but_not_the_runs_outcome(
    tmp_path: Path,
) -> None:
    """The run's outcome rides on its last entry; a fixture of that call is not the run, so
    opened alone it must not show the run's reward or step limit. The words stay."""
    source = tmp_path / "run.jsonl"
    source.write_text(
        '{"seq": 1, "tool": "search", "args": {"q": "x"}, "response": [1],'
        ' "context": {"assistant": "let me search"},'
        ' "run_outcome": {"reward": 0, "limit_reached": true}}\n',
        encoding="utf-8",
    )
    plan = plan_pin(open_cassette(source), 1, tmp_path / "fixtures")
    entry = open_cassette(write_pin(plan))[0]
    assert "run_outcome" not in entry.extra
    assert entry.extra["context"] == {"assistant": "let me search"}
    assert entry.response == [1]


@pytest.mark.parametrize("force", [False, True])
def test_what_appears_between_the_plan_and_the_write_is_never_written_through(
    samples: Path, tmp_path: Path, force: bool
) -> None:
    """The path is checked by the write itself, right before it: a symlink made after the
    preview (the plan) is refused with the plan's words, with or without force, and what
    it points to is untouched; a folder that became a file is named as such."""
    cassette = open_cassette(samples / "fail.jsonl")
    folder = tmp_path / "fixtures"
    plan = plan_pin(cassette, cassette.seqs[-1], folder)
    folder.mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_text("keep\n", encoding="utf-8")
    plan.target.symlink_to(outside)
    with pytest.raises(PinError, match="is a symlink, not a regular file; refusing"):
        write_pin(plan, force=force)
    assert outside.read_text(encoding="utf-8") == "keep\n" and plan.target.is_symlink()
    plan.target.unlink()
    folder.rmdir()
    folder.write_text("", encoding="utf-8")
    with pytest.raises(PinError, match="is a file, not a folder"):
        write_pin(plan, force=force)
