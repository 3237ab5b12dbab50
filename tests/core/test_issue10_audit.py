"""Issue 10 kinds that no other test held (found by the issue's audit): args that JSON
would change are blamed on the args at their path, before the live call, for every
changed type; every answer-changing request header (not only Accept) is part of an
imported HTTP call's key, and a shared key that differs in one is named, not a retry
storm; epoch and request-id values in a response are metadata drift like uuids."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest
import yaml
from cassette_tui.core import Recorder, Replayer, diff_cassettes, load
from cassette_tui.core.diff.model import Status
from cassette_tui.core.importers.sources import open_cassette
from cassette_tui.core.replay.recorder import NotSerializable
from cassette_tui.core.scan.lint import lint
from support.factory import entry, make_cassette, write_cassette


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    S = 1


class Name(str):
    pass


# -- args JSON would change: blamed on the args, at the first changed path -------------------
@pytest.mark.parametrize(
    ("args", "path", "what"),
    [
        ({1: "a", "b": 2}, "$[1]", 'int key 1 becomes the string "1"'),  # mixed key types
        ({"k": {2: 1}}, "$.k[2]", 'int key 2 becomes the string "2"'),
        ({"a": {"b": [1, ("x",)]}}, "$.a.b[1]", "tuple becomes a list"),
        ({"n": Name("x")}, "$.n", "str subclass"),
        ({"s": Size.S}, "$.s", "int subclass"),
        ({"c": [Colour.RED]}, "$.c[0]", "is not JSON data"),
        ({"when": {1, 2}}, "$.when", "is not JSON data"),
    ],
    ids=["mixed-keys", "int-key", "tuple", "str-subclass", "int-enum", "enum", "set"],
)
def test_args_that_json_changes_are_blamed_at_their_path_before_the_live_call(
    tmp_path: Path, args: dict, path: str, what: str
) -> None:
    ran: list[str] = []
    out = tmp_path / "run.jsonl"
    with Recorder(out) as rec:
        with pytest.raises(NotSerializable) as info:
            rec.wrap(lambda t, a: ran.append(t))("search", args)
        rec.wrap(lambda t, a: {"ok": 1})("search", {"q": 1})  # the recorder goes on
    err = info.value
    assert (err.part, err.path) == ("args", path)  # the args, not the response
    text = str(err)
    assert "the args" in text and f"at {path}" in text and what in text
    assert "the call was not run" in text
    assert ran == []  # the live tool never ran
    assert [(e.seq, e.args) for e in load(out)] == [(1, {"q": 1})]


# -- answer-changing request headers in an imported HTTP call ---------------------------------
URI = "https://api.example.test/v1/report?month=2024-05"


def _vcr(tmp_path: Path, headers: list[dict[str, list[str]]], bodies: list[str]) -> Path:
    interactions = [
        {
            "request": {"body": None, "headers": h, "method": "GET", "uri": URI},
            "response": {
                "body": {"string": body},
                "headers": {"Content-Type": ["text/plain"]},
                "status": {"code": 200, "message": "OK"},
            },
        }
        for h, body in zip(headers, bodies, strict=True)
    ]
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


IDENTITY = [
    ("Accept", "application/json", "text/csv"),
    ("Range", "bytes=0-99", "bytes=100-199"),
    ("Accept-Language", "en", "fr"),
    ("X-Api-Version", "2023-01-01", "2024-06-01"),
    ("anthropic-version", "2023-06-01", "2024-10-22"),
]


@pytest.mark.parametrize(("header", "first", "second"), IDENTITY)
def test_answer_changing_header_is_part_of_the_imported_calls_key(
    tmp_path: Path, header: str, first: str, second: str
) -> None:
    agent = {"User-Agent": ["python-requests/2.31.0"]}
    path = _vcr(
        tmp_path,
        [{header: [first], **agent}, {header: [second], **agent}],
        ["first answer", "second answer"],
    )
    c = open_cassette(path)
    assert [e.args["headers"] for e in c] == [{header: [first]}, {header: [second]}]
    assert c.key(0) != c.key(1)
    assert not [f for f in lint(c) if f.kind in ("repeated_key", "header_variants")]
    # asked in the other order, each request gets its own answer, never the other's
    replay = Replayer(c)
    assert replay("http", c[1].args) == c[1].response
    assert replay("http", c[0].args) == c[0].response
    assert c[0].response != c[1].response


def test_a_header_that_does_not_change_the_answer_stays_out_of_the_key(tmp_path: Path) -> None:
    path = _vcr(
        tmp_path,
        [{"User-Agent": ["a/1"], "X-Trace": ["t1"]}, {"User-Agent": ["b/2"], "X-Trace": ["t2"]}],
        ["same", "same"],
    )
    c = open_cassette(path)
    assert "headers" not in c[0].args and c.key(0) == c.key(1)


@pytest.mark.parametrize(("header", "first", "second"), IDENTITY)
def test_a_shared_key_differing_in_such_a_header_is_named_not_a_retry_storm(
    tmp_path: Path, header: str, first: str, second: str
) -> None:
    """A cassette written before the header joined the key (the header only in
    ``request_headers``): check names the header and the by-position replay."""
    args = {"method": "GET", "uri": URI, "body": None}
    path = write_cassette(
        tmp_path / "old.jsonl",
        entry(1, "http", args, response={"body": "one"}, request_headers={header: [first]}),
        entry(2, "http", args, response={"body": "two"}, request_headers={header: [second]}),
    )
    (finding,) = lint(load(path))
    assert finding.kind == "header_variants"
    assert header in finding.message and "by position" in finding.message
    assert "retry storm" not in finding.message


# -- response metadata: the volatile kinds the args side knows --------------------------------
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"at": 1715785203, "n": 1}, {"at": 1715871611, "n": 1}),  # epoch seconds
        ({"at": 1715785203123, "n": 1}, {"at": 1715871611456, "n": 1}),  # epoch ms
        ({"request_id": "req_abc123", "n": 1}, {"request_id": "req_xyz789", "n": 1}),
    ],
    ids=["epoch", "epoch-ms", "request-id"],
)
def test_volatile_kinds_in_a_response_are_metadata_drift(a: dict, b: dict) -> None:
    ca = make_cassette([("t", {"q": 1}, a), ("t", {"q": 2}, {"v": 1})])
    cb = make_cassette([("t", {"q": 1}, b), ("t", {"q": 2}, {"v": 2})])
    result = diff_cassettes(ca, cb)
    assert [r.status for r in result.rows] == [Status.METADATA_DRIFT, Status.RESPONSE_DRIFT]
    assert result.first_divergence == 1  # shown, but not the first divergence
    stale = [f for f in result.findings if f.kind == "stale_response"]
    assert all(1 not in f.side_seqs("a") for f in stale)
