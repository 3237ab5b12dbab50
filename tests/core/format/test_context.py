"""The words around the calls (core/format/context.py): what the importers keep before each call
and how a run ended, and that a cassette holding them reads, replays, digests, checks and
diffs exactly as one without (they are context, not identity)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.diff.result import diff_cassettes
from cassette_tui.core.format.cassette import load, save
from cassette_tui.core.format.context import (
    CONTEXT_FIELD,
    OUTCOME_FIELD,
    Answered,
    RunOutcome,
    call_context,
    run_outcome,
)
from cassette_tui.core.format.entry import Entry
from cassette_tui.core.importers.detect import import_file
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.replay.replayer import Replayer
from cassette_tui.core.scan.lint import lint


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


#: a made-up support chat: a user question, a call with words, a call answering a tool
#: result, two parallel calls, then a final answer
CHAT = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "Where is my order 42?"},
    {
        "role": "assistant",
        "content": "Let me look the order up.",
        "reasoning_content": "The user gave an order id.",
        "tool_calls": [_call("c1", "get_order", {"id": 42})],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
    {"role": "assistant", "content": None, "tool_calls": [_call("c2", "track", {"id": 42})]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"at": "depot"}'},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("c3", "eta", {"id": 42}), _call("c4", "weather", {"city": "Oslo"})],
    },
    {"role": "tool", "tool_call_id": "c3", "content": "2 days"},
    {"role": "tool", "tool_call_id": "c4", "content": "snow"},
    {"role": "assistant", "content": "It arrives in 2 days, weather permitting."},
]


def _write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_chat_import_keeps_the_words_before_each_call(tmp_path: Path) -> None:
    cassette = open_cassette(_write(tmp_path, "chat.json", CHAT))
    contexts = [call_context(cassette[i])[0] for i in range(len(cassette))]
    first, second, eta, weather = contexts
    assert first is not None and first.assistant == "Let me look the order up."
    assert first.reasoning == "The user gave an order id."
    assert first.answered == Answered("user", "Where is my order 42?")
    # a call without text answers the tool result before it: named by its seq, not copied
    assert second is not None and second.assistant is None
    assert second.answered == Answered("tool", None, (1,))
    # parallel calls share their message's words; empty text is no text
    assert eta == weather
    assert (
        eta is not None and eta.assistant is None and eta.answered == Answered("tool", None, (2,))
    )


def test_chat_import_keeps_the_final_answer_on_the_last_entry(tmp_path: Path) -> None:
    cassette = open_cassette(_write(tmp_path, "chat.json", CHAT))
    outcome, warnings = run_outcome(cassette)
    assert warnings == []
    assert outcome == RunOutcome(final_answer="It arrives in 2 days, weather permitting.", steps=4)
    assert outcome.limit_reached is None  # a bare chat log does not say
    # written to disk: on the last line only, and read back from there
    out = save(cassette, tmp_path / "chat.jsonl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [OUTCOME_FIELD in x for x in lines] == [False, False, False, True]
    assert run_outcome(load(out))[0] == outcome


def test_a_chat_that_ends_on_a_call_has_no_final_answer(tmp_path: Path) -> None:
    cassette = open_cassette(_write(tmp_path, "chat.json", CHAT[:6]))
    outcome, _ = run_outcome(cassette)
    assert outcome is not None and outcome.final_answer is None and outcome.steps == 2


def test_inspect_reasoning_parts_and_the_limit_field(tmp_path: Path) -> None:
    sample = {
        "id": 1,
        "epoch": 1,
        "scores": {"match": {"value": "I"}},
        "limit": {"type": "message", "limit": 6},
        "messages": [
            {"role": "user", "content": "Count the files."},
            {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "reasoning": "ls first"},
                    {"type": "text", "text": "Listing."},
                ],
                "tool_calls": [{"id": "t1", "function": "bash", "arguments": {"cmd": "ls"}}],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "a b"},
        ],
    }
    doc = {"version": 2, "eval": {"task": "t"}, "samples": [sample]}
    cassette = open_cassette(_write(tmp_path, "log.json", doc))
    context = call_context(cassette[0])[0]
    assert context is not None and (context.assistant, context.reasoning) == (
        "Listing.",
        "ls first",
    )
    outcome = run_outcome(cassette)[0]
    assert outcome is not None
    assert (outcome.reward, outcome.passed, outcome.limit_reached) == (0.0, False, True)
    assert (outcome.limit, outcome.limit_value) == ("message", 6)
    assert outcome.summary() == "✗ reward 0 · message limit reached (6)"


def _tau_run(task: int, trial: int, reward: float, reward_info: Any, traj: list) -> dict:
    return {"task_id": task, "trial": trial, "reward": reward,
            "info": {"task": {}, "reward_info": reward_info}, "traj": traj}  # fmt: skip


def test_tau_bench_step_limit_from_reward_info(tmp_path: Path) -> None:
    ended = CHAT + [{"role": "user", "content": "thanks ###STOP###"}]
    cut = CHAT[:6]  # the loop ran out after a tool result: no final answer
    runs = [
        _tau_run(1, 0, 1.0, {"reward": 1.0, "info": {}}, ended),
        _tau_run(1, 1, 0.0, None, cut),
        {"task_id": 1, "trial": 2, "reward": 0.0, "info": {}, "traj": cut},
    ]
    path = _write(tmp_path, "tau.json", runs)
    done, limited, unknown = (
        run_outcome(open_cassette(f"{path}#task=1,trial={t}"))[0] for t in range(3)
    )
    assert done is not None and limited is not None and unknown is not None
    assert (done.limit_reached, done.passed, done.reward) == (False, True, 1.0)
    assert done.summary() == "✓ reward 1"
    assert (limited.limit_reached, limited.steps, limited.final_answer) == (True, 2, None)
    assert limited.evidence is not None and "reward_info is null" in limited.evidence
    assert limited.summary() == "✗ reward 0 · step limit reached (2 steps)"
    assert unknown.limit_reached is None  # no reward_info key: the file does not say
    assert unknown.summary() == "✗ reward 0 · no final answer"


@pytest.mark.parametrize(
    ("outcome", "score", "limit", "went_wrong"),
    [
        (RunOutcome(0.0, False, None, 30, True, "steps", 30), "✗ reward 0",
         "step limit reached (30 steps)", True),
        (RunOutcome(1.0, True, "ok", 3, False), "✓ reward 1", None, False),
        (RunOutcome(0.5, None, None, 3, None), "reward 0.5", None, False),
        (RunOutcome(None, None, None, 6, True, "message", 6), "", "message limit reached (6)",
         True),
        (RunOutcome(None, False), "✗", None, True),
        (RunOutcome(), "", None, False),
    ],
)  # fmt: skip
def test_the_summary_is_made_of_the_fields_words(
    outcome: RunOutcome, score: str, limit: str | None, went_wrong: bool
) -> None:
    """The readers of an outcome (the import note, the header's stress) take its parts
    (``reward_words``, ``limit_words``, ``went_wrong``), never the summary's text."""
    assert (outcome.reward_words(), outcome.limit_words(), outcome.went_wrong) == (
        score,
        limit,
        went_wrong,
    )
    parts = [p for p in (score, limit) if p]
    if limit is None and outcome.final_answer is None and outcome.steps is not None and parts:
        parts.append("no final answer")
    assert outcome.summary() == " · ".join(parts)


def test_a_run_without_calls_keeps_its_outcome_in_memory(tmp_path: Path) -> None:
    runs = [_tau_run(5, 0, 1.0, {"reward": 1.0}, [{"role": "user", "content": "hi"},
                                                  {"role": "assistant", "content": "Hello."}])]  # fmt: skip
    cassette = open_cassette(_write(tmp_path, "tau.json", runs))
    assert len(cassette) == 0
    outcome = run_outcome(cassette)[0]
    assert outcome is not None and outcome.final_answer == "Hello." and outcome.passed is True


# -- the words are context, not identity -----------------------------------------------------


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    """The chat import written to disk, and the same file with every word removed."""
    with_words = save(open_cassette(_write(tmp_path, "chat.json", CHAT)), tmp_path / "with.jsonl")
    records = [json.loads(x) for x in with_words.read_text().splitlines()]
    for record in records:
        record.pop(CONTEXT_FIELD, None)
        record.pop(OUTCOME_FIELD, None)
    without = tmp_path / "without.jsonl"
    without.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return with_words, without


def test_words_change_no_key_no_replay_no_check_and_no_diff(tmp_path: Path) -> None:
    with_path, without_path = _pair(tmp_path)
    assert CONTEXT_FIELD in with_path.read_text()  # the words are really there
    a, b = load(with_path), load(without_path)
    # every line is an entry, with the same stored digests and the same replay keys
    for path in (with_path, without_path):
        assert all("tool" in json.loads(x) for x in path.read_text().splitlines())
    assert len(a) == len(b) == 4
    assert [a[i].args_digest for i in range(4)] == [b[i].args_digest for i in range(4)]
    assert a.digests() == b.digests()
    assert [a.key(i) for i in range(4)] == [b.key(i) for i in range(4)]
    # replay serves the same responses, with the same report
    ra, rb = Replayer(a), Replayer(b)
    for i in range(4):
        entry = b[i]
        assert ra(entry.tool, entry.args) == rb(entry.tool, entry.args)
    assert ra.report()["used"] == rb.report()["used"]
    # check finds the same (nothing)
    assert [f.kind for f in lint(a)] == [f.kind for f in lint(b)] == []
    # and a diff of the two is all `same`
    result = diff_cassettes(a, b)
    assert result.is_same and result.first_divergence is None


def test_other_words_on_the_same_calls_still_diff_as_same(tmp_path: Path) -> None:
    a = [Entry(1, "t", {"q": 1}, {"r": 1}, extra={CONTEXT_FIELD: {"assistant": "yes"}})]
    b = [Entry(1, "t", {"q": 1}, {"r": 1}, extra={CONTEXT_FIELD: {"assistant": "no"},
                                                  OUTCOME_FIELD: {"reward": 0.0}})]  # fmt: skip
    pa, pb = save(a, tmp_path / "a.jsonl"), save(b, tmp_path / "b.jsonl")
    assert diff_cassettes(load(pa), load(pb)).is_same


# -- bad words: ignored with a warning naming file, line and field ----------------------------


def test_bad_words_are_ignored_with_a_warning(tmp_path: Path) -> None:
    records = [
        {"seq": 1, "tool": "t", "args": {}, "response": 1,
         CONTEXT_FIELD: {"assistant": 3, "answered": {"role": "tool", "seqs": ["x"]}}},
        {"seq": 2, "tool": "t", "args": {"n": 2}, "response": 2,
         OUTCOME_FIELD: {"reward": "high", "limit_reached": True, "steps": 30}},
    ]  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    cassette = load(path)  # the loader does not mind: every line is a good entry
    assert {f.kind for f in lint(cassette)} == {"bad_context"}  # check says it
    context, warnings = call_context(cassette[0], cassette.path)
    assert context == call_context(cassette[0])[0]
    assert context is not None and context.assistant is None
    assert context.answered == Answered("tool", None, ())
    assert [(w.line, w.field) for w in warnings] == [
        (1, "context.answered.seqs"),
        (1, "context.assistant"),
    ]
    assert str(warnings[1]).startswith(f"{path}:1: field context.assistant: expected text")
    outcome, warnings = run_outcome(cassette)
    assert outcome is not None and outcome.limit_reached is True and outcome.reward is None
    expected = (
        f"{path}:2: field run_outcome.reward: expected a number, got text 'high'; "
        "ignored (context only)"
    )
    assert [str(w) for w in warnings] == [expected]


def test_an_entry_that_is_not_an_object_context_is_dropped(tmp_path: Path) -> None:
    entry = Entry(1, "t", {}, 1, extra={CONTEXT_FIELD: "hello"}, line=7)
    context, warnings = call_context(entry, "x.jsonl")
    assert context is None
    assert [str(w) for w in warnings] == [
        "x.jsonl:7: field context: expected an object, got text 'hello'; ignored (context only)"
    ]


@pytest.mark.parametrize("fmt", ["openai", "tau-bench"])
def test_the_imported_cassette_metadata_has_the_outcome(tmp_path: Path, fmt: str) -> None:
    doc = CHAT if fmt == "openai" else [_tau_run(1, 0, 1.0, {"reward": 1.0}, CHAT)]
    imported = import_file(_write(tmp_path, "x.json", doc))
    assert imported.fmt == fmt
    cassette = imported.cassette(0)
    assert cassette.metadata[OUTCOME_FIELD]["final_answer"] == CHAT[-1]["content"]


def test_a_cassette_without_an_outcome_is_told_from_the_bytes(tmp_path: Path) -> None:
    """The app asks on its UI thread: a last line without the field is not parsed (its
    response may be megabytes long), so even a response that only the full parse refuses
    does not stop the answer."""
    from cassette_tui.core.format.errors import CassetteFormatError

    path = tmp_path / "own.jsonl"
    path.write_text(
        '{"seq": 1, "tool": "t", "args": {}, "response": {"a": 1}}\n'
        '{"seq": 2, "tool": "t", "args": {"n": 2}, "response": {"a": 1, "a": 2}}\n'
    )
    cassette = load(path)
    assert run_outcome(cassette) == (None, [])
    with pytest.raises(CassetteFormatError):
        cassette[1]  # the full parse names the duplicate key


def test_check_reports_bad_words_as_bad_context(tmp_path: Path) -> None:
    records = [
        {"seq": 1, "tool": "t", "args": {}, "response": 1, CONTEXT_FIELD: {"reasoning": ["x"]},
         OUTCOME_FIELD: {"reward": 1.0}},
        {"seq": 2, "tool": "t", "args": {"n": 2}, "response": 2,
         OUTCOME_FIELD: {"steps": -1, "final_answer": "done"}},
    ]  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    found = [(f.kind, f.seq, f.path) for f in lint(load(path))]
    assert found == [
        ("bad_context", 1, "$.context.reasoning"),
        ("bad_context", 1, "$.run_outcome"),  # not on the last entry: ignored
        ("bad_context", 2, "$.run_outcome.steps"),
    ]
    messages = [f.message for f in lint(load(path))]
    assert (
        messages[0]
        == "context.reasoning at line 1: expected text, got a list; ignored (only context)"
    )


@pytest.mark.parametrize("outcome", [None, {"reward": 1.0, "steps": 3}, {"reward": "high"}])
def test_the_last_entry_parsed_already_gives_the_outcome_of_its_line(
    tmp_path: Path, outcome: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The detail of the last step passes its entry: the same outcome and warnings as from
    the line, and the line's bytes are not read again (a 24 MB answer's)."""
    last: dict[str, Any] = {"seq": 2, "tool": "t", "args": {}, "response": "x" * 100}
    if outcome is not None:
        last[OUTCOME_FIELD] = outcome
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"seq": 1, "tool": "t", "args": {}, "response": 1}) + "\n"
                    + json.dumps(last) + "\n")  # fmt: skip
    cassette = load(path)
    expected = run_outcome(cassette)
    entry = cassette.entry_view(1)
    monkeypatch.setattr(type(cassette), "raw_line", lambda self, i: pytest.fail("read again"))
    assert run_outcome(cassette, entry) == expected
