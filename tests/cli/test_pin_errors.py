"""Where a fixture cannot be written, ``pin`` and the app say it in the same plain words,
naming the path and what to do: never a Python exception name, and a symlink is a symlink
wherever it points (it is never written through)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.loop.pin import PinError, fixture_name, plan_pin
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.cli import cli
from cassette_tui.tui.screens.pin import PinScreen
from click.testing import CliRunner
from support.paths import SAMPLES
from support.pilot import press, screen_text, settle, sync

FAIL = SAMPLES / "fail.jsonl"
#: seq 2 of the demo: search_docs, whose fixture name is fixed by its args digest
TARGET = "search_docs-0bde2b47072f677b.jsonl"


def _setup(kind: str, root: Path) -> tuple[str, str]:
    """Make ``root/fixtures`` unusable in one way; return what the message must name and
    the words it must hold."""
    fixtures = root / "fixtures"
    if kind == "folder_is_a_file":
        fixtures.write_text("not a folder\n")
        return "fixtures: is a file, not a folder", "move or rename it"
    fixtures.mkdir()
    link = fixtures / TARGET
    if kind == "symlink_outside":
        (root / "outside.jsonl").write_text("")
        link.symlink_to(root / "outside.jsonl")
    elif kind == "symlink_dangling_outside":
        link.symlink_to(root.parent / "nowhere.jsonl")
    else:  # symlink_inside
        (fixtures / "other.jsonl").write_text("")
        link.symlink_to("other.jsonl")
    return f"fixtures/{TARGET}: is a symlink, not a regular file", "remove it"


KINDS = ["folder_is_a_file", "symlink_outside", "symlink_dangling_outside", "symlink_inside"]


def _plain(message: str) -> None:
    for python in ("Error:", "Errno", "would leave", "Traceback"):
        assert python not in message, message


@pytest.mark.parametrize("kind", KINDS)
def test_pin_says_what_is_wrong_with_the_path_in_plain_words(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    where, todo = _setup(kind, tmp_path)
    for force in ([], ["--force"]):
        result = CliRunner().invoke(cli, ["pin", str(FAIL), "--seq", "2", *force])
        assert result.exit_code == 2, result.output
        assert f"cassette-tui pin: {where}" in result.output and todo in result.output
        _plain(result.output)
    assert (
        not (tmp_path / "outside.jsonl").exists() or (tmp_path / "outside.jsonl").read_text() == ""
    )


@pytest.mark.parametrize("kind", KINDS)
def test_plan_pin_refuses_before_the_preview(kind: str, tmp_path: Path) -> None:
    where, _ = _setup(kind, tmp_path)
    with pytest.raises(PinError) as info:
        plan_pin(open_cassette(FAIL), 2, tmp_path / "fixtures")
    assert str(info.value).startswith(f"{tmp_path}/{where}")


@pytest.mark.parametrize("kind", ["folder_is_a_file", "symlink_outside"])
@sync
async def test_the_app_says_the_same_words_as_pin(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    where, todo = _setup(kind, tmp_path)
    app = CassetteApp(open_cassette(FAIL), open_cassette(SAMPLES / "fix.jsonl"))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        # the rows of the demo: first divergence at A seq 2 (the 429 retried)
        await press(pilot, "p")
        toasts = "\n".join(str(note.message) for note in app._notifications)
        assert not isinstance(app.screen, PinScreen)
        assert f"cannot pin: {where}" in toasts and todo in toasts, toasts
        _plain(toasts)
    assert fixture_name("search_docs", "sha256:0bde2b47072f677b") == TARGET


@sync
async def test_a_write_that_fails_after_the_preview_says_it_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = CassetteApp(open_cassette(FAIL), open_cassette(SAMPLES / "fix.jsonl"))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        assert isinstance(app.screen, PinScreen)
        (tmp_path / "fixtures").write_text("appeared meanwhile\n")
        await press(pilot, "enter")
        text = " ".join(screen_text(app).split())
        assert isinstance(app.screen, PinScreen)
        assert "not written: fixtures: is a file, not a folder" in text, text
        _plain(text)
