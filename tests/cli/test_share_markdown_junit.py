"""Findings where review happens (issue 30): ``diff``/``gate --format markdown`` read by a
CommonMark parser with the table extension (as GitHub renders a comment), and ``gate
--junit`` read by a JUnit parser as CI tools read it."""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import pytest
from cassette_tui.tui.text.markdown import MAX_CHARS, code
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.factory import entry, write_cassette
from support.loop import agent_cmd, loop_cassette
from support.paths import SAMPLES
from support.run import cli

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake, shaped like a GitHub token


def parse(text: str) -> list:
    return MarkdownIt("commonmark").enable("table").parse(text)


def tables(text: str) -> list[list[list[str]]]:
    """Every table as rows of cell texts (inline content), header first."""
    out: list[list[list[str]]] = []
    row: list[str] | None = None
    for tok in parse(text):
        if tok.type == "table_open":
            out.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:
            row.append("".join(c.content for c in tok.children or []))
        elif tok.type == "tr_close" and row is not None:
            out[-1].append(row)
            row = None
    return out


def test_diff_markdown_of_the_sample_pair() -> None:
    # by seq: the first divergence is the response drift whose drift table is checked
    # (auto aligns the sample by key, where row 2 is A's extra retry: no drift table)
    done = cli("diff", str(SAMPLES / "fail.jsonl"), str(SAMPLES / "fix.jsonl"),
               "--align", "seq", "--format", "markdown")  # fmt: skip
    assert done.returncode == 1, done.stderr
    md = done.stdout
    heads = [t for t in parse(md) if t.type == "heading_open"]
    assert heads and heads[0].tag == "h3"
    assert "**Where the runs part:** row 2: A seq 2, B seq 2, `search_docs` (response drift)" in md
    drift, rows = tables(md)
    assert drift[0] == ["path", "A", "B", "change"]
    status = {r[0]: (r[1], r[2]) for r in drift[1:]}
    assert status["$.status"] == ("429", "200")
    assert rows[0] == ["row", "A seq", "B seq", "tool", "status", "what differs"]
    assert [r[4] for r in rows[1:]] == ["response drift", "other call", "other call",
                                        "only in A", "only in A", "only in A"]  # fmt: skip
    assert all(len(r) == 6 for r in rows)
    # the findings in the diff's own words, with their first action
    assert "error_response" in md and "retry budget" in md


def test_diff_markdown_masks_secrets_and_keeps_cells_whole(tmp_path: Path) -> None:
    a = write_cassette(tmp_path / "a.jsonl", entry(1, "http_get", {"url": "x"},
                       response={"auth": f"Bearer {TOKEN}", "note": "a | b `c` \n d"}))  # fmt: skip
    b = write_cassette(tmp_path / "b.jsonl", entry(1, "http_get", {"url": "x"},
                       response={"auth": "none", "note": "other"}))  # fmt: skip
    done = cli("diff", str(a), str(b), "--format", "markdown")
    assert done.returncode == 1
    assert TOKEN not in done.stdout and "ghp_" in done.stdout  # masked as check shows it
    drift = tables(done.stdout)[0]
    assert all(len(r) == 4 for r in drift)  # a pipe and a line end stayed in their cell
    note = next(r for r in drift if r[0] == "$.note")
    assert note[1] == "a | b `c` ⏎ d"
    revealed = cli("diff", str(a), str(b), "--format", "markdown", "--reveal")
    assert TOKEN in revealed.stdout


def test_a_same_pair_says_so(tmp_path: Path) -> None:
    a = write_cassette(tmp_path / "a.jsonl", entry(1))
    done = cli("diff", str(a), str(a), "--format", "markdown")
    assert done.returncode == 0 and "**the runs are the same**" in done.stdout


def test_many_rows_stay_under_the_comment_limit(tmp_path: Path) -> None:
    rows = [entry(i, "t", {"i": i}, response={"v": "x" * 300}) for i in range(1, 2001)]
    other = [entry(i, "t", {"i": i}, response={"v": "y" * 300}) for i in range(1, 2001)]
    a = write_cassette(tmp_path / "a.jsonl", *rows)
    b = write_cassette(tmp_path / "b.jsonl", *other)
    done = cli("diff", str(a), str(b), "--format", "markdown", "--limit", "0")
    assert len(done.stdout) < MAX_CHARS + 5000
    assert "more row" in done.stdout and "`--json` lists all" in done.stdout


@given(st.text(max_size=200))
def test_any_value_is_one_code_span_in_one_cell(value: str) -> None:
    md = f"| h |\n|---|\n| {code(value)} |\n"
    table = tables(md)
    assert len(table) == 1 and len(table[0]) == 2 and len(table[0][1]) == 1
    inline = [t for t in parse(md) if t.type == "inline"][1]
    kinds = [c.type for c in inline.children or []]
    assert kinds == ["code_inline"], (value, kinds)


def test_gate_markdown_and_junit_of_a_flaky_agent(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    report = tmp_path / "reports" / "gate.xml"
    done = cli("gate", str(cassette), "--agent", agent_cmd("fork"), "--runs", "16", "-j", "2",
               "--format", "markdown", "--junit", str(report))  # fmt: skip
    assert done.returncode == 1, done.stderr
    md = done.stdout
    assert "❌ **flaky:" in md and "The runs part at call 2" in md
    assert tables(md)[0][0] == ["run", "status", "exit", "replay", "calls"]
    xml = junitparser.JUnitXml.fromfile(str(report))
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors) == (1, 1, 0)
    case = next(iter(suite))
    assert case.name == str(cassette) and case.classname == "cassette-tui.gate"
    (failure,) = case.result
    assert isinstance(failure, junitparser.Failure) and failure.type == "flaky"
    assert "verdict flaky" in failure.message and "where the runs part" in failure.text
    props = {p.name: p.value for p in suite.properties()}
    assert props["verdict"] == "flaky" and props["runs"] == "16"


def test_gate_junit_of_a_deterministic_and_an_unclean_gate(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    report = tmp_path / "gate.xml"
    done = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "2",
               "--junit", str(report))  # fmt: skip
    assert done.returncode == 0, done.stderr
    suite = next(iter(junitparser.JUnitXml.fromfile(str(report))))
    assert (suite.tests, suite.failures, suite.errors) == (1, 0, 0)
    assert next(iter(suite)).is_passed
    # the report is replaced by the next gate (as pytest's --junitxml is)
    done = cli("gate", str(cassette), "--agent", agent_cmd("miss"), "--runs", "2",
               "--junit", str(report), "--json")  # fmt: skip
    assert done.returncode == 2 and json.loads(done.stdout)["verdict"] == "unclean_replay"
    suite = next(iter(junitparser.JUnitXml.fromfile(str(report))))
    assert (suite.failures, suite.errors) == (0, 1)
    (error,) = next(iter(suite)).result
    assert isinstance(error, junitparser.Error) and error.type == "unclean_replay"
    assert "miss" in error.text


def test_gate_junit_never_replaces_a_cassette(tmp_path: Path) -> None:
    cassette = loop_cassette(tmp_path)
    before = cassette.read_bytes()
    done = cli("gate", str(cassette), "--agent", agent_cmd("pass"), "--runs", "1",
               "--junit", str(cassette))  # fmt: skip
    assert done.returncode == 2
    assert "is not a JUnit XML report; not replaced" in done.stderr
    assert cassette.read_bytes() == before


@pytest.mark.parametrize("value", ["`", "``", "a`b", " ", "", "|", "\\|", "x\\", "*a*"])
def test_awkward_values(value: str) -> None:
    test_any_value_is_one_code_span_in_one_cell.hypothesis.inner_test(value)  # type: ignore[attr-defined]


def test_bisect_markdown_names_the_end_with_none_of_a_answers(tmp_path: Path) -> None:
    # B's own answers that do not pass offline: the unresolved candidate takes no seq of A,
    # which the Markdown showed as "- A seqs : ..."
    from cassette_tui.core.why.bisect import BisectResult, Candidate
    from cassette_tui.tui.text.markdown import bisect_markdown

    why = "left the recording: a miss of search_docs in run 1"
    end = Candidate((), "unresolved", why, tmp_path / "candidate-001.jsonl", 5)
    result = BisectResult("fail.jsonl", "fix.jsonl", [], None, candidates=[end], problem=why)
    text = bisect_markdown(result)
    assert "- A seqs none: left the recording" in text
    assert "A seqs :" not in text
