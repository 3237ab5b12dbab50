"""``cassette-tui group`` against issue 28's wording, run as the installed script: a
multi-run file (also as the path spec ``FILE#task=6``), a folder, a gate's runs folder,
``--json``; and the app's entry points, ``group SOURCES --app`` and ``cassette-tui
FOLDER``, which read and group the runs before they need a terminal (without one: exit 2
and where to look instead). Real tau-bench tests skip where ``../shared/real`` is absent."""

from __future__ import annotations

import json
from pathlib import Path

from support.grouped_runs import write_runs_folder
from support.run import cli


def test_group_app_needs_a_terminal_and_says_what_prints_the_tree(tmp_path: Path) -> None:
    folder = write_runs_folder(tmp_path / "runs")
    done = cli("group", str(folder), "--app")
    assert done.returncode == 2
    assert "the app needs a terminal" in done.stderr
    assert "cassette-tui group SOURCES --tree" in done.stderr


def test_a_folder_alone_opens_the_tree_not_an_error_about_a_directory(tmp_path: Path) -> None:
    folder = write_runs_folder(tmp_path / "runs")
    done = cli(str(folder))
    assert done.returncode == 2
    assert "cassette-tui group SOURCES --tree" in done.stderr
    assert "directory" not in done.stderr


def test_bad_input_is_said_before_the_terminal_is_asked_for(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args, said in (
        (("group", str(empty), "--app"), "cassette-tui group: "),
        ((str(empty),), "cassette-tui: "),  # the app's words: no `group` was typed
    ):
        done = cli(*args)
        assert done.returncode == 2
        assert done.stderr.startswith(f"{said}{empty}: no run to group"), done.stderr
        assert "terminal" not in done.stderr
    done = cli("group", str(empty), "--app", "--json")
    assert done.returncode == 2 and "--app opens the tree in the app" in done.stderr


def test_task_applies_to_every_source(tmp_path: Path) -> None:
    folder = write_runs_folder(tmp_path / "runs")
    done = cli("group", str(folder), "--task", "1")
    assert done.returncode == 2 and "no run to group for task 1" in done.stderr


def test_a_path_spec_picks_a_task_or_a_run(real: Path) -> None:
    source = str(real / "tau-bench" / "gpt-4o-airline.json")
    by_spec = cli("group", f"{source}#task=6")
    by_option = cli("group", source, "--task", "6")
    assert by_spec.returncode == 0, by_spec.stderr
    assert by_spec.stdout == by_option.stdout
    assert "2 of 3 failures take branch A (search_onestop_flight)" in by_spec.stdout
    one = cli("group", f"{source}#task=6,trial=2", "--json")
    doc = json.loads(one.stdout)
    assert [t["task"] for t in doc["tasks"]] == ["6"]
    assert [r["name"] for r in doc["tasks"][0]["runs"]] == [f"{source}#task=6,trial=2"]
    clash = cli("group", f"{source}#task=6", "--task", "7")
    assert clash.returncode == 2 and "task=6 but task=7" in clash.stderr


def test_two_runs_to_open_even_when_every_pass_is_on_the_failures_branch(real: Path) -> None:
    # task 2: branch A holds the pass and two failures, branch B one failure
    source = str(real / "tau-bench" / "gpt-4o-airline.json")
    done = cli("group", source, "--task", "2")
    assert "2 of 3 failures take branch A (get_reservation_details)" in done.stdout
    assert (f"open a failure of branch A beside a pass: cassette-tui '{source}#task=2,trial=0' "
            f"'{source}#task=2,trial=2'") in done.stdout  # fmt: skip
