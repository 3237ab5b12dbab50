"""``cassette-tui import``, ``check`` and ``diff`` on what agent frameworks write (issue 25),
as a user runs them: the installed script on real framework output (tests/support/
frameworks.py), and bugcases 39 (malformed arguments) and 50 (Anthropic blocks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import frameworks

SCRIPT = Path(sys.executable).with_name("cassette-tui")
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}

#: format -> (run function, its file)
FORMATS = {
    "pydantic-ai": ("pydantic_ai_run", "messages"),
    "otel": ("pydantic_ai_run", "otlp"),
    "openai-responses": ("openai_agents_run", "items"),
    "openai-agents": ("openai_agents_run", "trace"),
    "langchain": ("langgraph_run", "checkpoint"),
    "smolagents": ("smolagents_run", "steps"),
    "anthropic": ("anthropic_run", "messages"),
}


def ct(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=ENV, cwd=cwd,
        check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Every format's (failing, passing) file, each framework run once."""
    folder = tmp_path_factory.mktemp("runs")
    made: dict[tuple[str, bool], dict[str, Path]] = {}
    out = {}
    for fmt, (run, kind) in FORMATS.items():
        for failing in (True, False):
            if (run, failing) not in made:
                made[run, failing] = getattr(frameworks, run)(folder / run / str(failing), failing)
        out[fmt] = (made[run, True][kind], made[run, False][kind])
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_import_writes_the_calls_and_says_how_it_paired(
    runs: dict[str, tuple[Path, Path]], fmt: str, tmp_path: Path
) -> None:
    _, passing = runs[fmt]
    done = ct("import", passing, "-o", tmp_path / "run.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["format"] == fmt
    written = record["written"][0]
    assert written["entries"] == 3 and written["pairing"] in ("id", "span", "step")
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [e["tool"] for e in lines] == ["get_weather", "get_weather", "book"]
    text = ct("import", passing, "-o", tmp_path / "again.jsonl")
    assert text.returncode == 0 and "results" in text.stdout + " results"  # a sentence
    assert f"from {fmt} " in text.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_diff_of_a_failing_and_a_passing_run_names_the_first_divergence(
    runs: dict[str, tuple[Path, Path]], fmt: str
) -> None:
    failing, passing = runs[fmt]
    done = ct("diff", failing, passing)
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("first divergence:"))
    assert "A seq 3" in line and line.rstrip().split("  ")[2].startswith("book")
    if fmt != "anthropic":  # the Messages API parses inputs: no malformed call there
        assert "A seq 3's arguments could not be parsed (arguments_error:" in done.stdout
        assert "-> The cause is the model's output" in done.stdout
        check = ct("check", failing)
        assert check.returncode == 1
        assert "malformed_args  seq 3" in check.stdout


def test_bugcase_39_malformed_arguments_are_named_by_check_and_diff(real: Path) -> None:
    case = real / "bugcases" / "39_malformed_tool_arguments"
    check = ct("check", "fail.json", cwd=case)
    assert check.returncode == 1
    assert "3 entries, 2 findings" in check.stdout
    assert "malformed_args  seq 1" in check.stdout and "malformed_args  seq 3" in check.stdout
    assert "(char 39)" in check.stdout
    diff = ct("diff", "fail.json", "pass.json", cwd=case)
    assert diff.returncode == 1
    assert "A seq 1's arguments could not be parsed (arguments_error:" in diff.stdout
    assert 'the tool answered {"text": "Error: could not parse arguments"}' in diff.stdout
    assert "and A retried at seq 2" in diff.stdout
    assert "check the response before it" not in diff.stdout  # there is none before seq 1


def test_bugcase_50_anthropic_blocks_import_as_calls(real: Path, tmp_path: Path) -> None:
    case = real / "bugcases" / "50_anthropic_tool_use_blocks"
    done = ct("import", case / "messages.json", "-o", tmp_path / "m.jsonl")
    assert done.returncode == 0, done.stderr
    assert (
        "(1 entry) from anthropic" in done.stdout and "paired with their calls by id" in done.stdout
    )
    entry = json.loads((tmp_path / "m.jsonl").read_text())
    assert (entry["tool"], entry["args"], entry["response"]) == (
        "get_weather",
        {"city": "Porto"},
        {"temp_c": 22},
    )
    assert entry["tool_call_id"] == "toolu_01A"
    assert entry["context"]["assistant"] == "Let me check."
    assert entry["run_outcome"]["final_answer"] == "It is 22C in Porto."
    same = ct("import", case / "responses_items.json", "-o", tmp_path / "r.jsonl", "--json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["format"] == "openai-responses"
    other = json.loads((tmp_path / "r.jsonl").read_text())
    assert (other["tool"], other["args"], other["response"]) == (
        entry["tool"],
        entry["args"],
        entry["response"],
    )


def test_anthropic_blocks_forced_as_openai_are_refused(real: Path) -> None:
    case = real / "bugcases" / "50_anthropic_tool_use_blocks"
    done = ct("import", case / "messages.json", "--from", "openai", "--list")
    assert done.returncode == 2
    assert "'tool_use' content block (the Anthropic Messages format)" in done.stderr


def test_a_file_with_tool_calls_no_importer_reads_is_an_error_not_0_entries(
    tmp_path: Path,
) -> None:
    """Gemini's contents (no importer for them): the calls are seen, the formats tried
    are listed, exit 2; never a 0-entry cassette."""
    gemini = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
        ]
    }
    src = tmp_path / "gemini.json"
    src.write_text(json.dumps(gemini))
    done = ct("import", src, "-o", tmp_path / "g.jsonl")
    assert done.returncode == 2
    assert "functionCall" in done.stderr
    for fmt in ("tau-bench", "openai", "anthropic", "pydantic-ai", "langchain", "otel", "vcr"):
        assert fmt in done.stderr
    assert not (tmp_path / "g.jsonl").exists()
    as_chat = tmp_path / "chat.json"  # the same parts in a messages list
    as_chat.write_text(json.dumps({"messages": gemini["contents"]}))
    done = ct("import", as_chat, "-o", tmp_path / "c.jsonl")
    assert done.returncode == 2
    assert "'functionCall' content block (the Gemini format)" in done.stderr


def test_the_readme_table_lists_every_format_with_the_versions_tested() -> None:
    """Each framework format has a row in the README's table; every library version the
    table names is the one pinned in the ``frameworks`` extra and installed here."""
    import re
    import tomllib
    from importlib.metadata import version

    from cassette_tui.core.importers import FORMATS
    from support.paths import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = readme.split("### Agent frameworks' own files", 1)[1].split("```", 1)[0]
    rows = {
        m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z-]+)` \| ([^|]+)\|", readme, re.M)
    }
    rows.pop("--from", None)  # the header row
    older = {"cassette", "tau-bench", "openai", "inspect", "vcr"}
    assert set(rows) == set(FORMATS) - older
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = dict(
        pin.split("==") for pin in project["project"]["optional-dependencies"]["frameworks"]
    )
    for fmt, written_by in rows.items():
        named = re.findall(r"([a-z][a-z-]+) (\d+\.\d+\.\d+)", written_by)
        assert named, f"{fmt}: no library version in {written_by!r}"
        for package, tested in named:
            assert pins[package] == tested, f"{fmt}: {package} {tested} is not the pinned one"
            assert version(package) == tested, f"{package} installed is not the tested one"
