"""The project's configuration read once per process (core/keys/config.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cassette_tui.core.keys import config as config_module
from cassette_tui.core.keys.config import ProjectConfig, load_rules
from cassette_tui.core.keys.normalize import NormalizationConfigError
from cassette_tui.core.loop.agent import resolve_agent
from cassette_tui.core.scan.redact_config import load_secret_config


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files parsed as TOML while the test runs."""
    seen: list[Path] = []
    parse = config_module._parse

    def counting(path: Path) -> dict:
        seen.append(path)
        return parse(path)

    monkeypatch.setattr(config_module, "_parse", counting)
    return seen


def aged(path: Path) -> Path:
    """``path`` last changed a minute ago (a file changed just before it is read is read
    again next time: its times may not show a second change as quick)."""
    old = path.stat().st_mtime - 60
    os.utime(path, (old, old))
    return path


def test_sections_of_pyproject_and_cassette_toml(tmp_path: Path) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text(
        '[project]\nname = "x"\n[tool.cassette]\nagent = "python a.py"\nredact = true\n'
        '[tool.cassette.normalize]\npresets = ["uuid"]\n',
        encoding="utf-8",
    )
    project = ProjectConfig.read(py)
    assert (project.path, project.agent, project.redact) == (py, "python a.py", True)
    assert project.normalize == {"presets": ["uuid"]}
    assert project.rules().describe() == ["preset uuid"]
    ct = tmp_path / "cassette.toml"
    ct.write_text('agent = "node a.js"\n[normalize]\ndrop = ["x"]\n', encoding="utf-8")
    assert ProjectConfig.find(tmp_path) == ProjectConfig.read(ct)
    assert ProjectConfig.read(ct).agent == "node a.js" and ProjectConfig.read(ct).redact is None


def test_no_config_is_the_empty_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert ProjectConfig.find(tmp_path) == ProjectConfig()
    assert ProjectConfig.load(root=tmp_path).rules().is_empty


def test_every_reader_shares_one_read(tmp_path: Path, parses: list[Path]) -> None:
    ct = tmp_path / "cassette.toml"
    ct.write_text('agent = "node a.js"\nredact = true\n[normalize]\ndrop = ["x"]\n', "utf-8")
    aged(ct)
    assert load_rules(ct).describe() == ["drop x"]
    assert load_secret_config(ct).record is True
    assert resolve_agent(None, ct).argv == ("node", "a.js")
    assert parses == [ct]


def test_found_pyproject_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[Path]
) -> None:
    monkeypatch.delenv("CASSETTE_CONFIG", raising=False)
    py = tmp_path / "pyproject.toml"
    py.write_text('[tool.cassette.normalize]\npresets = ["uuid"]\n', encoding="utf-8")
    aged(py)
    assert load_rules(root=tmp_path).describe() == ["preset uuid"]
    assert load_secret_config(root=tmp_path).record is False
    assert [p.name for p in parses] == ["pyproject.toml"]


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    ct = tmp_path / "cassette.toml"
    ct.write_text('[normalize]\ndrop = ["x"]\n', encoding="utf-8")
    assert load_rules(aged(ct)).describe() == ["drop x"]
    ct.write_text('[normalize]\ndrop = ["longer"]\n', encoding="utf-8")
    assert load_rules(ct).describe() == ["drop longer"]


def test_a_file_changed_just_before_it_was_read_is_read_again(
    tmp_path: Path, parses: list[Path]
) -> None:
    ct = tmp_path / "cassette.toml"
    ct.write_text('[normalize]\ndrop = ["a"]\n', encoding="utf-8")
    assert load_rules(ct).describe() == ["drop a"]
    ct.write_text('[normalize]\ndrop = ["b"]\n', encoding="utf-8")  # same size, same tick
    assert load_rules(ct).describe() == ["drop b"]
    assert parses == [ct, ct]


def test_a_bad_section_waits_for_its_reader(tmp_path: Path) -> None:
    ct = tmp_path / "cassette.toml"
    ct.write_text('redact = "yes"\n[normalize]\ndrop = ["x"]\n', encoding="utf-8")
    assert load_rules(ct).describe() == ["drop x"]
    with pytest.raises(NormalizationConfigError, match="expected true/false or a table"):
        load_secret_config(ProjectConfig.read(ct))


def test_verify_allow_of_pyproject_and_cassette_toml(tmp_path: Path) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text('[tool.cassette.verify]\nallow = ["search_docs", "read_file"]\n')
    assert ProjectConfig.read(py).verify_allow() == ["search_docs", "read_file"]
    toml = tmp_path / "cassette.toml"
    toml.write_text("[verify]\nallow = []\n")
    assert ProjectConfig.read(toml).verify_allow() == []
    assert ProjectConfig().verify_allow() == []


@pytest.mark.parametrize(
    ("text", "field"),
    [('verify = "all"\n', "verify"), ("[verify]\nallow = [1]\n", "verify.allow"),
     ('[verify]\nallow = "search_docs"\n', "verify.allow")],
)  # fmt: skip
def test_a_bad_verify_allow_names_its_field(tmp_path: Path, text: str, field: str) -> None:
    toml = tmp_path / "cassette.toml"
    toml.write_text(text)
    config = ProjectConfig.read(toml)
    config.rules()  # a bad verify section does not stop a command that only needs the rules
    with pytest.raises(NormalizationConfigError) as caught:
        config.verify_allow()
    assert caught.value.field == field and str(caught.value.path) == str(toml)
