"""The loop commands' options (``--jobs``, ``--timeout``, ``--isolation``, ``--runs-dir``,
``--config``) reach the job as one ``LoopOptions``, built by one decorator
(``tui/commands/_loop.py``'s ``loop_options``)."""

from __future__ import annotations

from pathlib import Path

import click
from cassette_tui.core.loop.options import DEFAULT_TIMEOUT, LoopOptions
from cassette_tui.tui.commands._loop import loop_options
from click.testing import CliRunner


def _command(**kw: bool) -> tuple[click.Command, list[LoopOptions]]:
    seen: list[LoopOptions] = []

    @click.command()
    @click.argument("name")
    @loop_options(**kw)
    @click.option("--json", "as_json", is_flag=True)
    def command(name: str, options: LoopOptions, as_json: bool) -> None:
        seen.append(options)

    return command, seen


def test_every_option_lands_in_one_frozen_loop_options(tmp_path: Path) -> None:
    command, seen = _command(jobs=True)
    args = ["a.jsonl", "-j", "3", "--timeout", "5", "--isolation", "guard",
            "--runs-dir", str(tmp_path / "runs"), "--config", "c.toml", "--json"]  # fmt: skip
    done = CliRunner().invoke(command, args)
    assert done.exit_code == 0, done.output
    runs_dir = str(tmp_path / "runs")
    expected = LoopOptions(
        timeout=5.0, isolation="guard", runs_dir=runs_dir, jobs=3, config="c.toml"
    )
    assert seen == [expected]


def test_defaults_and_a_recording_takes_neither_isolation_nor_runs_dir() -> None:
    command, seen = _command(replay=False)
    assert CliRunner().invoke(command, ["a.jsonl"]).exit_code == 0
    assert seen == [LoopOptions()] and seen[0].timeout == DEFAULT_TIMEOUT
    names = [p.name for p in command.params]
    assert names == ["name", "timeout", "config", "as_json"]
    assert CliRunner().invoke(command, ["a.jsonl", "--isolation", "guard"]).exit_code == 2
