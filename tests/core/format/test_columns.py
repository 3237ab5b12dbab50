"""The index's compact columns (``format/columns.py``) give back exactly what they were
given: a digest of the standard form as its 8 bytes, any other stored text or none aside."""

from __future__ import annotations

from cassette_tui.core.format.columns import DigestColumn, digest_code
from cassette_tui.core.format.digest import digest
from hypothesis import given
from hypothesis import strategies as st

_standard = st.integers(0, 2**64 - 1).map(lambda n: f"sha256:{n:016x}")
# texts a file may hold that look like a digest but are not of the standard form
_near = st.sampled_from(
    [
        "sha256:0123456789ABCDEF",  # upper case
        "sha256:+123456789abcdef",  # int() would take these
        "sha256:0_23456789abcdef",
        "sha256: 123456789abcdef",
        "sha256:0123456789abcde",  # one digit short
        "sha256:0123456789abcdef0",
        "md5:0123456789abcdef",
        "",
    ]
)
_value = st.one_of(_standard, _near, st.none(), st.text(max_size=30))


@given(st.lists(_value, max_size=40), st.integers(0, 40))
def test_column_gives_back_its_values(values: list[str | None], cut: int) -> None:
    one_by_one = DigestColumn()
    for v in values:
        one_by_one.append(v)
    batched = DigestColumn(values[:cut])  # a batch, then another
    batched.extend(values[cut:])
    for column in (one_by_one, batched):
        assert list(column) == values
        assert [column[i] for i in range(-len(values), 0)] == values
        assert column == values and column[3:9] == values[3:9]
        order = list(reversed(range(len(values))))
        assert list(column.taken(order)) == [values[k] for k in order]
    assert one_by_one == batched


@given(st.lists(_standard, min_size=2, max_size=40))
def test_codes_are_equal_exactly_when_digests_are(values: list[str]) -> None:
    column = DigestColumn(values)
    assert column.all_standard
    for i, v in enumerate(values):
        assert digest_code(v) == column.codes[i]
        for j, w in enumerate(values):
            assert (column.codes[i] == column.codes[j]) == (v == w)


def test_real_digests_take_the_compact_form() -> None:
    values = [digest({"q": n}) for n in range(100)]
    column = DigestColumn(values)
    assert column.all_standard and list(column) == values
    assert column.codes.itemsize == 8
    assert digest_code("sha256:0123456789ABCDEF") is None


def test_a_loaded_cassette_keeps_its_digests_as_columns(tmp_path) -> None:
    """The load's stored digests (standard, another text, none; lines out of seq order, as
    parallel calls finish) and the key pass's digests and hashes come back exactly, held
    8 bytes an entry, whether the keys come from the load or from a second read."""
    import json

    from cassette_tui.core.format.cassette import load
    from cassette_tui.core.format.columns import NO_RESPONSE_HASH

    stored = [digest({"n": 0}), "sha256:0123456789ABCDEF", None, "anything", digest({"x": 1})]
    lines = []
    for seq, kept in zip([2, 1, 4, 3, 5], stored, strict=True):
        record = {"seq": seq, "tool": f"t{seq % 2}", "args": {"n": seq}, "response": seq}
        if kept is not None:
            record["args_digest"] = kept
        if seq == 4:
            del record["response"]
            record["error"] = {"type": "E", "message": "m"}
        lines.append(json.dumps(record))
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by_seq = dict(zip([2, 1, 4, 3, 5], stored, strict=True))
    for keyed in (False, True):
        c = load(path, keys=keyed)
        assert [c.seq(i) for i in range(5)] == [1, 2, 3, 4, 5]
        assert [c.stored_digest(i) for i in range(5)] == [by_seq[s] for s in range(1, 6)]
        assert list(c.digests()) == [digest({"n": s}) for s in range(1, 6)]
        assert c.digest_codes().itemsize == 8
        assert [digest_code(d) for d in c.digests()] == list(c.digest_codes())
        hashes = c.response_hashes()
        assert hashes.typecode == "q" and hashes[3] == NO_RESPONSE_HASH
        assert NO_RESPONSE_HASH not in (hashes[0], hashes[1], hashes[2], hashes[4])
        assert c.first(3).stored_digest(2) == by_seq[3]
