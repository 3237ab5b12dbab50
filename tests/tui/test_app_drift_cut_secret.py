"""A drift whose sides' secret scans disagree (session 17): a JSON text whose ``api_key``
only A's scan finds (B's copy is cut, no JSON), and a ``ghp_`` token broken by a space on
B only. On main B's side of the drift line and of the table showed the secret raw; now
no run of 8 characters of it shows in the pane or the step screen, cut or expanded, and
``v`` still reveals it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.tui.app import CassetteApp
from cassette_tui.tui.screens.pair import PairScreen
from support.cut_secrets import GHP, KEY, leaked, split_token, write_pair
from support.factory import entry, write_cassette
from support.pilot import every_detail_view, screen_text, settle, sync


@pytest.fixture(autouse=True)
def no_project_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(("case", "secret"), [("json", KEY), ("split", GHP)])
@sync
async def test_a_secret_one_side_finds_is_masked_on_both(
    tmp_path: Path, case: str, secret: str
) -> None:
    a, b = write_pair(tmp_path, case)
    seen: list[str] = []

    def no_run(pane: object, hint: str) -> None:
        unfolded = pane.body_text(100_000)  # type: ignore[attr-defined]
        assert "drift (1 path" in unfolded  # short texts: no hint to cut or expand
        assert "«" in next(line for line in unfolded.splitlines() if "$.text" in line)
        shown = unfolded + pane.body_text()  # type: ignore[attr-defined]  # as drawn, folded
        assert leaked(shown, secret) is None, (leaked(shown, secret), unfolded)
        seen.append(hint)

    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await every_detail_view(app, pilot, no_run, secret)
    assert len(seen) == 4  # pane cut and expanded, step screen expanded and cut


@pytest.mark.parametrize("size", [(80, 24), (200, 40)])
@sync
async def test_the_pair_step_list_masks_a_token_split_on_one_side(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The step list shows each side's args: B's token split by a space, no token to B's
    scan, was shown there (the row's B half) on main."""
    a_text, b_text = split_token()
    a = write_cassette(tmp_path / "a.jsonl", entry(1, "gh", {"q": a_text}, response={"ok": 1}))
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "gh", {"q": b_text}, response={"ok": 1}))
    app = CassetteApp(open_cassette(a), open_cassette(b), theme="ansi-dark")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PairScreen)
        shown = screen_text(app)
        assert "gh" in shown and "«" in shown
        assert leaked(shown, GHP) is None, (leaked(shown, GHP), shown)
