"""The app never shows a secret whole: secret findings in the single-file view (summary and
row marks), masked values in the detail pane of one cassette and of a pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.scan.masking import hash8
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pair import PairScreen
from cassette_tui.tui.screens.single import SingleScreen
from support.pilot import press, screen_text, settle, sync

TOKEN = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
SIZE = (80, 24)


def cassette_file(tmp_path: Path, name: str, token: str) -> Path:
    rows = [
        {
            "seq": 1,
            "tool": "call_api",
            "args": {"headers": {"Authorization": f"Bearer {token}"}},
            "response": {"user": "demo", "access_token": token},
        },
        {"seq": 2, "tool": "search_docs", "args": {"q": "x"}, "response": {"hits": 1}},
    ]
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def detail_text(app: CassetteApp) -> str:
    return app.screen.query_one("#detail").body_text()  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def no_project_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@sync
async def test_single_view_marks_secret_findings_and_masks_values(tmp_path: Path) -> None:
    app = CassetteApp(open_cassette(cassette_file(tmp_path, "c.jsonl", TOKEN)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SingleScreen)
        kinds = [f.kind for f in app.screen.findings or []]
        assert kinds.count("secret") == 2
        assert set(app.screen.by_seq) == {1}  # the entry holding them carries the mark
        text = detail_text(app)
        assert "secret" in text and "ghp_…(40 chars)" in text
        assert TOKEN not in text and TOKEN[4:12] not in text
        await press(pilot, "enter")  # the step full-screen too
        shown = screen_text(app)
        assert "Authorization" in shown and TOKEN[4:12] not in shown


@sync
async def test_pair_detail_and_drift_mask_values(tmp_path: Path) -> None:
    other = TOKEN[:-4] + "WXYZ"
    a = open_cassette(cassette_file(tmp_path, "a.jsonl", TOKEN))
    b = open_cassette(cassette_file(tmp_path, "b.jsonl", other))
    app = CassetteApp(a, b)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        text = detail_text(app)
        assert "drift" in text and "ghp_…(40 chars)" in text
        for secret in (TOKEN, other):
            assert secret[4:12] not in text
        # two tokens of one shape masked alike read apart on the drift line by their
        # hashes (main: ``"«ghp_…(40 chars)»" -> "«ghp_…(40 chars)»"``)
        unfolded = app.screen.query_one("#detail").body_text(100_000)  # type: ignore[attr-defined]
        drift = next(line for line in unfolded.splitlines() if "$.access_token" in line)
        assert f"hash {hash8(TOKEN)}" in drift and f"hash {hash8(other)}" in drift, drift
        for secret in (TOKEN, other):
            assert secret[4:12] not in unfolded and secret[-8:] not in unfolded


@sync
async def test_v_reveals_a_masked_secret_and_masks_it_again(tmp_path: Path) -> None:
    app = CassetteApp(open_cassette(cassette_file(tmp_path, "c.jsonl", TOKEN)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert TOKEN not in detail_text(app)
        await press(pilot, "v")
        assert TOKEN in detail_text(app)  # shown whole on request
        await press(pilot, "enter")  # the full-screen step follows the choice
        assert TOKEN[4:20] in screen_text(app)
        await press(pilot, "v")
        assert TOKEN[4:12] not in screen_text(app)
        await press(pilot, "q")
        assert isinstance(app.screen, SingleScreen)
        assert TOKEN not in detail_text(app) and "ghp_…(40 chars)" in detail_text(app)


PASSWORD = "hunter2-db-Pa55word"  # a password under a secret-named key


def listed_file(tmp_path: Path, name: str, token: str) -> Path:
    """Secrets the step list shows first: in the args' first values."""
    rows = [
        {"seq": 1, "tool": "db", "args": {"password": PASSWORD, "q": "x"}, "response": {}},
        {"seq": 2, "tool": "gh", "args": {"token": token}, "response": {"ok": 1}},
        {
            "seq": 3,
            "tool": "api",
            "args": {"headers": {"Authorization": f"Bearer {token}"}},
            "response": {"ok": 1},
        },
    ]
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("size", [(80, 24), (200, 40)])
@sync
async def test_the_step_list_masks_secrets_at_any_width(tmp_path: Path, size: tuple) -> None:
    """Issue 26: the single view at 80x24 showed a password and a ghp_ token whole."""
    app = CassetteApp(open_cassette(listed_file(tmp_path, "c.jsonl", TOKEN)))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        shown = screen_text(app)
        assert "db" in shown and "gh" in shown
        for secret in (PASSWORD, TOKEN):
            assert secret not in shown and secret[4:12] not in shown
        assert "ghp_…(40 chars)" in shown


@pytest.mark.parametrize("size", [(80, 24), (200, 40)])
@sync
async def test_the_pair_step_list_masks_secrets(tmp_path: Path, size: tuple) -> None:
    other = TOKEN[:-4] + "WXYZ"
    a = open_cassette(listed_file(tmp_path, "a.jsonl", TOKEN))
    b = open_cassette(listed_file(tmp_path, "b.jsonl", other))
    app = CassetteApp(a, b)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        shown = screen_text(app)
        for secret in (PASSWORD, TOKEN, other):
            assert secret[4:12] not in shown


@pytest.mark.parametrize("size", [(80, 24), (200, 40)])
@sync
async def test_a_token_used_as_a_tool_name_or_an_args_key_is_masked(
    tmp_path: Path, size: tuple
) -> None:
    """A token as the tool's name, or as an args key, is masked in the step list and the
    detail pane like a value (never a prefix of it either, however the column is cut)."""
    rows = [
        {"seq": 1, "tool": TOKEN, "args": {"q": "x"}, "response": {"ok": 1}},
        {"seq": 2, "tool": "lookup", "args": {TOKEN: "v"}, "response": {"ok": 1}},
    ]
    path = tmp_path / "names.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    app = CassetteApp(open_cassette(path))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key in ("down", "up"):
            shown = screen_text(app) + detail_text(app)
            assert TOKEN[4:12] not in shown and "lookup" in shown
            await press(pilot, key)
        assert "«ghp_" in screen_text(app)


@sync
async def test_v_reveals_the_step_list_too(tmp_path: Path) -> None:
    app = CassetteApp(open_cassette(listed_file(tmp_path, "c.jsonl", TOKEN)))
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        assert PASSWORD not in screen_text(app)
        await press(pilot, "v")
        assert PASSWORD in screen_text(app)
        await press(pilot, "v")
        assert PASSWORD not in screen_text(app)


OPENAI = "sk-proj-" + "Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nMq6wEr0tYu"  # fake
BEARER = "tok9" + "f8e7d6c5b4a39281706f5e4d3c2b1a0ZyXw"  # fake


def planted_file(tmp_path: Path, name: str, token: str) -> Path:
    """The leak check's four kinds, in args and responses, over several steps."""
    args = {
        "openai_key": OPENAI,
        "github": {"token": token},
        "headers": {"Authorization": f"Bearer {BEARER}"},
        "db": {"password": PASSWORD},
    }
    rows = [
        {"seq": 1, "tool": "crm", "args": args, "response": {"echo": args}},
        {"seq": 2, "tool": "gh", "args": {"token": token}, "response": {"t": token}},
        {"seq": 3, "tool": "db", "args": {"password": PASSWORD}, "response": {}},
    ]
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    return [s[:4] for s in secrets if s in text or s[4:14] in text]


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
@sync
async def test_leak_check_of_the_main_screens(tmp_path: Path, size: tuple) -> None:
    """Issue 26's leak check, the app's part: every frame of the single view, the pair
    view and the step screen (each step) holds none of the planted secrets."""
    other = TOKEN[:-4] + "WXYZ"
    secrets = (OPENAI, BEARER, PASSWORD, TOKEN, other)
    frames: list[str] = []
    app = CassetteApp(open_cassette(planted_file(tmp_path, "a.jsonl", TOKEN)))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for _ in range(3):
            frames.append(screen_text(app))
            await press(pilot, "enter")
            frames.append(screen_text(app))
            await press(pilot, "q")
            await press(pilot, "down")
    a = open_cassette(planted_file(tmp_path, "a.jsonl", TOKEN))
    b = open_cassette(planted_file(tmp_path, "b.jsonl", other))
    app = CassetteApp(a, b)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        for _ in range(3):
            frames.append(screen_text(app))
            await press(pilot, "enter")
            frames.append(screen_text(app))
            await press(pilot, "q")
            await press(pilot, "down")
    assert len(frames) == 12
    for frame in frames:
        assert not _leaks(frame, secrets), frame


@sync
async def test_the_miss_screen_masks_recorded_and_live_args(tmp_path: Path) -> None:
    """A replay report's miss on an unredacted cassette (or a report written before misses
    were masked): the miss screen shows neither side's secret whole."""
    from cassette_tui.tui.screens.replay import MissScreen

    cassette = open_cassette(listed_file(tmp_path, "c.jsonl", TOKEN))
    other = TOKEN[:-4] + "WXYZ"
    miss = {
        "tool": "gh",
        "digest": "sha256:0bde2b47072f677b",
        "args": {"token": other},
        "nearest": [{"seq": 2, "args_digest": "sha256:1454eb44939cd6b8", "differences": [
            {"path": "$.token", "recorded": TOKEN, "live": other, "absent": None,
             "kind": "other"}]}],
    }  # fmt: skip
    app = CassetteApp(cassette)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.push_screen(MissScreen(miss, cassette))
        await settle(pilot)
        body = app.screen.detail.body_text()  # type: ignore[attr-defined]
        assert "recorded seq 2" in body and "ghp_…(40 chars)" in body
        for secret in (TOKEN, other):
            assert secret[4:14] not in body and secret[4:14] not in screen_text(app)
