"""Lint one cassette: what will make a replay miss, repeat or mislead (``check`` command).

Finding kinds (``LintFinding.kind``):

``stale_digest``
    The stored ``args_digest`` differs from the one recomputed from ``args`` under the
    current normalization rules: args edited after recording, or different rules.
``repeated_key``
    A key ``(tool, args digest)`` recorded several times (``seqs`` lists them): replay
    serves them in recorded order; a retry storm or a loop when there are many.
``header_variants`` / ``distinct_errors``
    A key recorded several times that is not a retry: imported HTTP calls that differ in
    an answer-changing request header, or recordings that each failed differently (see
    ``repeats.py``).
``volatile_arg``
    An argument value that looks like a UUID, timestamp, request id or absolute/temp path
    even after normalization: the next live run will send another value and miss.
``binary_as_text``
    A text response that holds bytes decoded as text (gzip magic, NUL and other control
    characters, U+FFFD replacement characters). Store binary data as a base64 envelope
    ``{"_binary": true, "encoding": "base64", "data": ...}``, which is never flagged.
``seq_order``
    A ``seq`` that repeats an earlier one, or is lower than the one before it in a
    cassette with a repeated seq (or an in-memory one). A file whose seqs are unique is
    no finding whatever its line order: the recorder writes parallel calls as they finish,
    numbered as they were issued, and the load orders the entries by seq.
``over_normalization`` / ``unused_rule``
    The configured normalization rules checked against the data (see ``rulecheck.py``).
``bad_context``
    A ``context`` or ``run_outcome`` value (the words around the calls, ``context.py``)
    that readers ignore: a wrong type (the path names the field), or a ``run_outcome``
    on an entry that is not the last. Replay, the diff and the app still work: they are
    only context; the app and ``diff`` say so too.
``malformed_args``
    A call whose arguments the model sent as text that is not valid JSON (an imported
    entry's ``arguments_error``: a stray newline, a truncated string): the tool got them
    as text or refused them, so the cause of what follows is the model's output, not the
    tool (bugcase 39).
``non_finite``
    A bare ``NaN``, ``Infinity`` or ``-Infinity`` in a line (Python's ``json`` writes
    them): not JSON, so ``jq``, JavaScript and every strict parser refuse the line, though
    the load reads it as the float (docs/format.md, "Non-finite numbers"). The format's
    own form is ``{"$numberDouble": "NaN"}``, which the writer uses. One finding an entry
    (``path``: the first; the message counts them). A cassette held in memory has no text
    to look at: none there.
``bad_batch``
    A ``batch`` that is not what the format allows (docs/format.md: the integer seq of
    the first call of its batch, so from 1 to the entry's own seq): another type (a
    string, a float, ``null``, a boolean), a seq below 1, or one after the entry's own.
    A seq no entry has, before the entry's own, is the format's: a model turn's seqs are
    reserved when its first call starts, and a call that failed before it was recorded
    (its arguments not JSON) leaves its seq unused. Readers of the mark (the diff's
    pairing of parallel calls, the app's mark) ignore a value that is not an integer.
``empty``
    The cassette has no calls (an empty file, blank lines only, or an imported run that
    made no tool call). There is nothing to replay or compare: a replay serves nothing
    (the agent's first call misses) and a gate on it tests nothing. Most often the
    recording failed (the agent stopped before its first call, or recorded elsewhere).
    It is a finding like the others, so ``check`` exits 1: a cassette with no calls is
    never a useful fixture, and CI should say so rather than pass it.
``secret``
    The secret scan's finding (``secrets.py``; ``check`` runs it beside ``lint``).

``KINDS`` is the one list of them, in this order (``check --help`` and its tests read it).
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..format.batching import batch_full
from ..format.columns import DigestColumn
from ..format.constants import BATCH_FIELD
from ..format.context import CONTEXT_FIELD, OUTCOME_FIELD, call_context, outcome_from_json
from ..format.digest import DIGEST_PREFIX
from ..format.findings import Finding
from ..format.jsonpath import format_path, iter_leaves
from ..format.lines import json_type_name
from ..format.outcome import is_error_outcome, same_stored_outcomes
from ..keys.repeats import (
    NO_HEADERS_FORM,
    REPEATED_SENTENCE,
    classify,
    headers_form,
    plainly_repeated,
    recording_failed,
)
from ..keys.replay_key import KeyIndex
from ..keys.rule_check import rule_findings
from ..keys.volatile import EPOCH_MIN_S, volatile_kind

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.entry import Entry

#: the kinds ``repeats.classify`` gives a key recorded several times
REPEAT_KINDS = ("repeated_key", "header_variants", "distinct_errors")
KINDS = (
    "stale_digest",
    *REPEAT_KINDS,  # repeated_key, header_variants, distinct_errors (repeats.py)
    "volatile_arg",
    "binary_as_text",
    "seq_order",
    "over_normalization",
    "unused_rule",
    "bad_context",
    "malformed_args",
    "non_finite",
    "bad_batch",
    "empty",
    "secret",
)

#: volatile value kind -> (what it is, the preset that normalizes it)
_VOLATILE_HINTS = {
    "uuid": ("a UUID", "uuid"),
    "timestamp": ("an ISO-8601 timestamp", "timestamp"),
    "epoch": ("a Unix epoch timestamp", "timestamp"),
    "request_id": ("a request id", "request_id"),
    "temp_path": ("a temporary path", "path"),
    "abs_path": ("an absolute path", "path"),
}
#: control characters that count toward "binary decoded as text" (tab, newline, CR and
#: form feed excepted), C1 controls and DEL included
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


#: what every volatile string holds (``volatile.value_kind``): a UUID or a date a hyphen,
#: a request id one of ``-_:``, a path ``/``, ``\\``, ``:`` or ``%TEMP%``, an epoch ten
#: digits; a string with none of them is not looked at further
_MAY_BE_VOLATILE = re.compile(r"[-_:/\\%]|\d{10}")
#: a C1 control written as UTF-8 (see ``_may_be_binary``)
_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")
#: a ``\\u`` or ``\\b`` escape (see ``_may_be_binary``): a regex with one literal first
#: byte finds it from backslash to backslash, where ``b"\\u" in raw`` compares at every
#: ``u`` of the text (measured on the 100k text cassette's lines with a backslash, 43% of
#: its bytes: 0.7-0.9 us an entry against 3.8-5.0 for the two substring tests)
_ESCAPE_U_OR_B = re.compile(rb"\\[ub]")


def _may_be_binary(raw: bytes) -> bool:
    """Whether a line's bytes may hold a string that looks like binary data decoded as
    text (``binary_text_reason``): a ``\\u`` escape (NUL, controls, U+FFFD), ``\\b``, a
    DEL, a C1 control or U+FFFD written as UTF-8; never a false negative, sometimes a false
    positive. One-byte substring tests first (memchr, at memory speed); U+FFFD and the C1
    controls are not ASCII, so an ASCII line (most) skips their two tests: ``isascii``
    reads a word at a time, half the time of one ``in`` test (0.18 us against 0.31 for a
    line of the 100k text cassette)."""
    # one-byte tests (memchr) guard the longer ones: most lines hold no backslash
    return (
        (0x5C in raw and _ESCAPE_U_OR_B.search(raw) is not None)
        or 0x7F in raw
        or (
            not raw.isascii()
            and (
                (0xEF in raw and raw.find(b"\xef\xbf\xbd") >= 0)
                or (0xC2 in raw and _C1_BYTES.search(raw) is not None)
            )
        )
    )


#: the leaf types a volatile value can have (bools come along as ints: skipped)
_MAY_BE_VOLATILE_TYPES = (str, int, float)
#: the ``empty`` finding's message (the app's header says the same)
EMPTY_MESSAGE = "the cassette has no calls"

#: lint's findings are the engine's one finding type (``findings.py``)
LintFinding = Finding


class LintTail:
    """The entries from ``start`` on, linted elsewhere (another process): ``findings()``
    gives their ``entry_pass`` results as ``TailResult``, one item per entry in order, or
    ``None`` when ``lint`` must read them itself (then ``each`` is called for them as for
    the others)."""

    def __init__(self, start: int) -> None:
        self.start = start

    def findings(self) -> TailResult | None:
        return None


class TailResult(NamedTuple):
    """``entry_pass`` of the entries from a ``LintTail``'s start on, by position from the
    start: one digest and one ``failed`` byte per entry; the findings of the entries that
    have any, and the identity-headers forms that are not ``NO_HEADERS_FORM``."""

    digests: list[str]
    findings: dict[int, list[Finding]]
    failed: bytearray
    header_forms: dict[int, str]


def lint(
    cassette: Cassette,
    each: Callable[[int, Entry, bytes | None], None] | None = None,
    tail: LintTail | None = None,
    each_batch: Callable[[int, list[Entry], list[bytes | None]], None] | None = None,
) -> list[Finding]:
    """Every finding for ``cassette``, in entry order (``repeated_key`` at the first seq).

    Digests are recomputed under the cassette's own normalization rules (``load(...,
    rules=)``); volatile args are looked for in the normalized args, so a value a rule
    already neutralizes is not reported. ``each(i, entry, line bytes or None)`` is called
    for every entry as it is read (``check`` scans for secrets in the same pass; a
    batch's entries are handed over before lint looks at them: ``entry_passes``); the
    entry is not a copy: do not change it. ``tail``: the entries from ``tail.start`` on
    are linted elsewhere (``each`` is not called for them unless ``tail`` hands them back);
    the findings are the same. ``each_batch(position of the first, entries, line bytes)``
    instead of ``each``: called once a batch (``pass_columns``).
    """
    if each is not None and each_batch is not None:
        raise ValueError("each and each_batch exclude each other")
    passes = _entry_passes_all(cassette, each_batch or _each_of_batch(each), tail)
    findings = _entry_order_findings(cassette, passes)
    # the configured rules against the data: over-normalization, rules matching nothing
    checked = rule_findings(cassette)
    merged = {f.seqs for f in checked if f.kind == "over_normalization"}
    if merged:  # calls merged by a rule are not repeats of one call
        findings = [f for f in findings if not (f.kind == "repeated_key" and f.seqs in merged)]
    findings.extend(checked)
    if len(cassette) == 0:
        findings.insert(0, Finding(kind="empty", message=EMPTY_MESSAGE))
    return findings


def _entry_passes_all(
    cassette: Cassette,
    each_batch: Callable[[int, list[Entry], list[bytes | None]], None] | None,
    tail: LintTail | None,
) -> TailResult:
    """``entry_pass`` of every entry, by position (see ``lint``): one read of the entries,
    or of those before ``tail.start`` when ``tail`` gives the rest (read here too when it
    gives nothing whole)."""
    n = len(cassette)
    digests: list[str] = []
    found_at: dict[int, list[Finding]] = {}  # entry_pass's findings, of entries with any
    # what classifying a repeated key needs of each recording, kept from the pass
    failed = bytearray(n)
    header_forms: dict[int, str] = {}

    def read(start: int, stop: int | None) -> None:
        part = pass_columns(cassette, start, stop, each_batch)
        digests.extend(part.digests)
        found_at.update((start + k, found) for k, found in part.findings.items())
        failed[start : start + len(part.failed)] = part.failed
        header_forms.update((start + k, form) for k, form in part.header_forms.items())

    # the digests come from the entries as they are read (``entry_pass``): one read
    stop = n if tail is None or not cassette.is_file_backed else min(tail.start, n)
    read(0, stop)
    if stop < n:
        assert tail is not None
        rest = tail.findings()
        if rest is None or len(rest.digests) != n - stop or len(rest.failed) != n - stop:
            read(stop, None)
        else:
            digests.extend(rest.digests)
            found_at.update((stop + k, found) for k, found in rest.findings.items())
            failed[stop:] = rest.failed
            header_forms.update((stop + k, form) for k, form in rest.header_forms.items())
    return TailResult(digests, found_at, failed, header_forms)


def _entry_order_findings(cassette: Cassette, passes: TailResult) -> list[Finding]:
    """The findings of the entries, in entry order: each entry's own, and those that need
    the whole cassette, over its columns at once (most cassettes have no seq out of
    order, no stale digest, few repeated keys)."""
    indexed = _seq_findings(cassette)
    for i, found in _stale_digest_findings(cassette, passes.digests).items():
        indexed.setdefault(i, []).extend(found)
    repeated = _repeated_key_findings(cassette, passes.digests, passes.failed, passes.header_forms)
    found_at = passes.findings
    findings: list[Finding] = []
    for i in sorted(indexed.keys() | found_at.keys() | repeated.keys()):
        findings.extend(indexed.get(i, ()))
        findings.extend(found_at.get(i, ()))
        findings.extend(repeated.get(i, ()))
    return findings


def _seq_findings(cassette: Cassette) -> dict[int, list[Finding]]:
    """``seq_order`` findings by position: a seq that repeats an earlier one, or is lower
    than the one before it."""
    seqs = cassette.seqs
    found: dict[int, list[Finding]] = {}
    if all(map(operator.lt, seqs, itertools.islice(seqs, 1, None))):
        return found  # strictly increasing: neither
    first_at: dict[int, int] = {}
    prev: int | None = None
    for i, seq in enumerate(seqs):
        first = first_at.setdefault(seq, i)
        if first != i:
            message = (
                f"seq {seq} at line {cassette.line(i)} repeats the seq at line "
                f"{cassette.line(first)}"
            )
        elif prev is not None and seq < prev:
            message = (
                f"seq {seq} at line {cassette.line(i)} comes after seq {prev}: "
                "entries are not in call order"
            )
        else:
            prev = seq
            continue
        prev = seq
        found[i] = [Finding(kind="seq_order", seq=seq, path="$.seq", message=message)]
    return found


def _stale_digest_findings(cassette: Cassette, digests: list[str]) -> dict[int, list[Finding]]:
    """``stale_digest`` findings by position: a stored digest that differs from the one
    recomputed (``digests``). Only the positions ``_stale_candidates`` cannot prove equal
    are compared one by one (a text made per entry from the stored column cost 0.3 s at
    1M entries)."""
    found: dict[int, list[Finding]] = {}
    for i in _stale_candidates(cassette.stored_digests(), digests):
        old, new = cassette.stored_digest(i), digests[i]
        if old is not None and old != new:
            found[i] = [
                Finding(
                    kind="stale_digest",
                    seq=cassette.seq(i),
                    path="$.args_digest",
                    message=f"stored args digest {old} but its args now digest to {new}: "
                    "args edited after recording, or different normalization rules",
                )
            ]
    return found


#: entries a block of the stale-digest compare (``_stale_candidates``)
_STALE_BLOCK = 1024
_DIGEST_LEN = len(DIGEST_PREFIX) + 16


def _stale_candidates(stored: Sequence[str | None], digests: list[str]) -> Iterable[int]:
    """The positions, in order, where the stored digest may differ from ``digests[i]``;
    at every other one the two texts are equal.

    When every stored digest is of the standard form (``DigestColumn.all_standard``:
    ``sha256:`` and the 16 hex digits of its 8 bytes, ``codes``) and every recomputed one
    is as long, the stored texts are written all at once (C speed) and compared with the
    recomputed ones joined, block by block: two joins of texts of one length are equal
    exactly when the texts are, one by one. Only the blocks that differ are named."""
    n = len(digests)
    if (
        not isinstance(stored, DigestColumn)
        or not stored.all_standard
        or len(stored) != n
        or set(map(len, digests)) - {_DIGEST_LEN}
    ):
        return range(n)
    hex_digits = stored.codes.tobytes().hex().encode("ascii")  # the codes' bytes in order
    head, width = len(DIGEST_PREFIX), _DIGEST_LEN
    texts = bytearray((DIGEST_PREFIX + "0" * 16).encode("ascii") * n)
    for k in range(16):  # each digit of every text in one slice assignment
        texts[head + k :: width] = hex_digits[k::16]
    ours = "".join(digests)
    stored_texts = texts.decode("ascii")
    if ours == stored_texts:
        return ()
    step = _STALE_BLOCK * width
    return [
        i
        for b in range(0, n, _STALE_BLOCK)
        if ours[b * width : b * width + step] != stored_texts[b * width : b * width + step]
        for i in range(b, min(b + _STALE_BLOCK, n))
    ]


def _repeated_key_findings(
    cassette: Cassette, digests: list[str], failed: bytearray, header_forms: dict[int, str]
) -> dict[int, list[Finding]]:
    """The finding of each key recorded more than once, at its first position: a retry or
    a loop, or header variants / distinct errors (``repeats.py``)."""
    # a key is repeated only where its digest is: count the digests (strings, C speed),
    # then build keys for the positions of the digests that repeat
    counts = Counter(digests)
    if len(counts) == len(digests):
        return {}  # every digest once
    twice = {dig for dig, count in counts.items() if count > 1}
    at = list(itertools.compress(itertools.count(), map(twice.__contains__, digests)))
    positions = KeyIndex.from_keys(((cassette.tool(i), digests[i]) for i in at), at).repeated()
    found: dict[int, list[Finding]] = {}
    for (tool, dig), idxs in positions.items():
        seqs = [cassette.seq(i) for i in idxs]
        # told without reading the recordings again when what the pass kept of them
        # leaves no other kind, or when they store the same outcome bytes
        forms = {header_forms.get(i, NO_HEADERS_FORM) for i in idxs}
        fails = sum(failed[i] for i in idxs)
        if plainly_repeated(fails, len(idxs), forms) or same_stored_outcomes(cassette, idxs):
            kind, why = "repeated_key", REPEATED_SENTENCE
        else:
            kind, why = classify([cassette._entry(i) for i in idxs])
        found[idxs[0]] = [
            Finding(
                kind=kind,
                seq=seqs[0],
                message=f"{tool} {dig} recorded {len(seqs)} times (seq "
                f"{', '.join(map(str, seqs))}): {why}",
                seqs=tuple(seqs),
            )
        ]
    return found


def _each_of_batch(
    each: Callable[[int, Entry, bytes | None], None] | None,
) -> Callable[[int, list[Entry], list[bytes | None]], None] | None:
    """``lint``'s ``each`` (called an entry at a time) as a call for a batch."""
    if each is None:
        return None

    def each_batch(first: int, entries: list[Entry], raws: list[bytes | None]) -> None:
        for i, (entry, raw) in enumerate(zip(entries, raws, strict=True), first):
            each(i, entry, raw)

    return each_batch


def pass_columns(
    cassette: Cassette,
    start: int = 0,
    stop: int | None = None,
    each_batch: Callable[[int, list[Entry], list[bytes | None]], None] | None = None,
    between: Callable[[], None] | None = None,
) -> TailResult:
    """``entry_pass`` of every entry ``start <= i < stop``, kept as ``TailResult``'s
    columns by position from ``start``: the same values ``entry_passes`` gives, in one
    loop with ``entry_pass`` inline (a pass over every entry, ``check``: no generator step
    and no call an entry but the parse's and the digest's). The cassette is read a batch
    at a time (``Cassette.entry_batches``): ``each_batch(position of the first, entries,
    line bytes)`` is called for each batch before lint looks at its entries (the secret
    scan's: ``SecretBatch.add_batch``), then ``between()``, when given, after the batch.

    Raises:
        CassetteFormatError: an entry that does not parse (file, line, field).
    """
    digests: list[str] = []
    found_at: dict[int, list[Finding]] = {}
    failed = bytearray()
    header_forms: dict[int, str] = {}
    last = len(cassette) - 1
    apply, entry_digest = cassette.rules.apply, cassette.entry_digest
    exotic = cassette.exotic_lines
    append_digest, append_failed = digests.append, failed.append
    k = 0  # the position from start
    for first, entries, raws in cassette.entry_batches(start, stop):
        if each_batch is not None:
            each_batch(first, entries, raws)
        i = first
        for entry, raw in zip(entries, raws, strict=True):
            # ``entry_pass``, inline
            normalized = apply(entry.tool, entry.args)
            extra = entry.extra
            if extra and "request_headers" in extra:
                form = headers_form(entry)
                if form != NO_HEADERS_FORM:
                    header_forms[k] = form
            append_digest(entry_digest(i, normalized))
            # ``_entry_findings`` asked only when a finding may be there (a call and a
            # list an entry less): a line that may hold binary text, an extra field it
            # reads, a volatile arg
            if (
                raw is None
                or _may_be_binary(raw)
                or (extra and not _WORDLESS.isdisjoint(extra))
                or _has_volatile(normalized)
                # a line the fast parser read holds no bare NaN/Infinity (a substring
                # test of the line cost 2 us an entry on the 100k text cassette)
                or i in exotic
            ):
                found = _entry_findings(cassette, entry, raw, i == last, normalized, i in exotic)
                if found:
                    found_at[k] = found
            # ``recording_failed``, inline
            append_failed(entry.error is not None or is_error_outcome(False, entry.response))
            i += 1
            k += 1
        # the batch let go before the next one is read: its entries' memory is then
        # reused, still in the CPU's caches (kept until the next step, the next batch went
        # to fresh memory: 1 us an entry more)
        del entries, raws, entry, raw, normalized
        if between is not None:
            between()
    return TailResult(digests, found_at, failed, header_forms)


def entry_passes(
    cassette: Cassette,
    start: int = 0,
    stop: int | None = None,
    each: Callable[[int, Entry, bytes | None], None] | None = None,
) -> Iterator[tuple[int, Entry, tuple[str, list[Finding], bool, str]]]:
    """``(i, entry, entry_pass(...))`` of every entry ``start <= i < stop`` in order, the
    cassette read once (``entries_read``), in batches (``batching.py``): ``each`` (as
    ``lint``'s) is called for all of a batch's entries, then they are linted, so that each
    step's tables stay in the CPU's caches (measured: about a sixth of ``check``).

    Raises:
        CassetteFormatError: an entry that does not parse (file, line, field).
    """
    last = len(cassette) - 1
    reader = cassette.entries_read(start, stop)
    while True:
        batch: list[tuple[int, Entry, bytes | None]] = []
        size = 0
        for item in reader:
            batch.append(item)
            size += len(item[2] or b"")
            if batch_full(len(batch), size):
                break
        if not batch:
            return
        if each is not None:
            for i, entry, raw in batch:
                each(i, entry, raw)
        for i, entry, raw in batch:
            yield i, entry, entry_pass(cassette, i, entry, raw, last=i == last)


def entry_pass(
    cassette: Cassette, i: int, entry: Entry, raw: bytes | None, last: bool
) -> tuple[str, list[Finding], bool, str]:
    """``(args digest, findings, failed, headers form)`` of entry ``i`` from the entry
    alone: its args digest under the cassette's rules (``Cassette.entry_digest``); the
    findings that depend on it alone, in ``lint``'s order: ``volatile_arg`` (in its
    normalized args), ``binary_as_text`` (``raw``: its line's bytes, which may prove there
    is none), ``bad_context`` (``last``: it is the last entry); and what classifying a
    repeated key needs of it (``repeats.recording_failed``, ``repeats.headers_form``)."""
    normalized = cassette.rules.apply(entry.tool, entry.args)
    form = headers_form(entry) if "request_headers" in entry.extra else NO_HEADERS_FORM
    return (
        cassette.entry_digest(i, normalized),
        _entry_findings(
            cassette, entry, raw, last, normalized, raw is not None and _may_be_non_finite(raw)
        ),
        recording_failed(entry),
        form,
    )


def _entry_findings(
    cassette: Cassette,
    entry: Entry,
    raw: bytes | None,
    last: bool,
    normalized: Any,
    may_be_non_finite: bool,
) -> list[Finding]:
    """The findings of one entry alone (``entry_pass``); ``may_be_non_finite``: its line
    ``raw`` may hold a bare ``NaN``/``Infinity`` (else no ``non_finite`` finding)."""
    here: list[Finding] = []
    seq = entry.seq
    for path, value, kind in _volatile_leaves(normalized) if _has_volatile(normalized) else ():
        what, preset = _VOLATILE_HINTS[kind]
        here.append(
            Finding(
                kind="volatile_arg",
                seq=seq,
                path="$.args" + path[1:],
                message=f"{entry.tool} arg {path} looks like {what} ({value!r:.60}); the next "
                f"live run will send another value and miss: normalize it "
                f'(presets = ["{preset}"]) or drop the key',
            )
        )
    if entry.is_error:
        outcome, part = entry.error, "error"
    else:
        outcome, part = entry.response, "response"
    # bytes decoded as text show in the line as an escape (\u0000, \b, \ufffd), a
    # DEL, a C1 control or U+FFFD: a line with none of them skips the walk
    binary = raw is None or _may_be_binary(raw)
    for path, why in _binary_texts(outcome, part) if binary else ():
        here.append(
            Finding(
                kind="binary_as_text",
                seq=seq,
                path=path,
                message=f"text at {path} looks like binary data decoded as text ({why}); the "
                "bytes are lost: record it as a base64 envelope "
                '{"_binary": true, "encoding": "base64", "data": ...}',
            )
        )
    if entry.extra and (CONTEXT_FIELD in entry.extra or OUTCOME_FIELD in entry.extra):
        here.extend(_word_findings(entry, last, cassette.path))
    if entry.extra and isinstance(entry.extra.get(MALFORMED_FIELD), str):
        here.append(malformed_args_finding(entry))
    if may_be_non_finite and raw is not None:
        here.extend(_non_finite_findings(entry, raw))
    if entry.extra and BATCH_FIELD in entry.extra:
        here.extend(_batch_findings(entry))
    return here


def _may_be_non_finite(raw: bytes) -> bool:
    """Whether the line ``raw`` may hold a bare ``NaN``/``Infinity`` (two substring
    tests; a string holding the word, or ``{"$numberDouble": "NaN"}``, passes too).
    ``check``'s pass asks the parse instead (``Cassette.exotic_lines``)."""
    return b"NaN" in raw or b"Infinity" in raw


class _Bare(NamedTuple):
    """A bare non-finite number as the line spells it (``parse_constant``'s value)."""

    name: str


def _non_finite_findings(entry: Entry, raw: bytes) -> list[Finding]:
    """The ``non_finite`` finding of the line ``raw`` when it holds a bare ``NaN``,
    ``Infinity`` or ``-Infinity`` (its first path, and how many), else none."""
    try:
        # the line parsed once already (the load): this parse only marks where they are
        record = json.loads(raw, parse_constant=_Bare)
    except (ValueError, RecursionError):
        return []
    found = [(parts, leaf) for parts, leaf in iter_leaves(record) if type(leaf) is _Bare]
    if not found:
        return []
    parts, first = found[0]
    path = format_path(parts)
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return [
        Finding(
            kind="non_finite",
            seq=entry.seq,
            path=path,
            message=f"{entry.tool}: a bare {first.name} at {path}{more} (line {entry.line}) "
            "is not JSON: jq, JavaScript and strict parsers refuse the line (cassette-tui "
            f'reads it as the float); write {{"$numberDouble": "{first.name}"}}, as '
            "cassette-tui's writer does",
        )
    ]


def _batch_findings(entry: Entry) -> list[Finding]:
    """The ``bad_batch`` finding of an entry whose ``batch`` cannot be the seq of the
    first call of its batch (docs/format.md): not an integer, below 1, or after the
    entry's own seq (the first call's seq may be unused: a reserved seq whose call
    failed before it was recorded)."""
    mark = entry.extra[BATCH_FIELD]
    if type(mark) is not int:
        why = f"expected an integer seq, got {json_type_name(mark)} {json.dumps(mark)[:40]}"
    elif mark < 1:
        why = f"{mark} is not a seq (seqs start at 1)"
    elif mark > entry.seq:
        why = f"{mark} is after the entry's own seq {entry.seq}"
    else:
        return []
    return [
        Finding(
            kind="bad_batch",
            seq=entry.seq,
            path="$." + BATCH_FIELD,
            message=f"{BATCH_FIELD} at line {entry.line}: {why}; it should be the seq of the "
            "first call of its batch of parallel calls, so readers ignore it",
        )
    ]


#: the entry field an importer sets when the model's arguments were not valid JSON
MALFORMED_FIELD = "arguments_error"
#: the extra fields ``_entry_findings`` reads: an entry with none of them has no
#: ``bad_context``, ``malformed_args`` nor ``bad_batch`` finding
_WORDLESS = frozenset({CONTEXT_FIELD, OUTCOME_FIELD, MALFORMED_FIELD, BATCH_FIELD})


def malformed_args_finding(entry: Entry) -> Finding:
    """The ``malformed_args`` finding of an entry with ``arguments_error``."""
    return Finding(
        kind="malformed_args",
        seq=entry.seq,
        path="$." + MALFORMED_FIELD,
        message=f"{entry.tool}: the model's arguments could not be parsed "
        f"({entry.extra[MALFORMED_FIELD]}); the call was made with them as text, so what "
        "follows it comes from the model's output, not from the tool",
    )


def _word_findings(entry: Any, last: bool, path: Any) -> list[Finding]:
    """``bad_context`` findings for one entry's words (``context.py``): each value the
    readers ignore, and a ``run_outcome`` that is not on the last entry."""
    _, warnings = call_context(entry, path)
    found = [
        Finding(
            kind="bad_context",
            seq=entry.seq,
            path="$." + w.field,
            message=f"{w.field} at line {w.line}: {w.message}; ignored (only context)",
        )
        for w in warnings
    ]
    if OUTCOME_FIELD in entry.extra:
        if not last:
            found.append(
                Finding(
                    kind="bad_context",
                    seq=entry.seq,
                    path="$." + OUTCOME_FIELD,
                    message=f"{OUTCOME_FIELD} at line {entry.line} is not on the last entry: "
                    "readers take a run's outcome from the last entry only; ignored",
                )
            )
        else:
            _, bad = outcome_from_json(entry.extra[OUTCOME_FIELD], path, entry.line)
            found.extend(
                Finding(
                    kind="bad_context",
                    seq=entry.seq,
                    path="$." + w.field,
                    message=f"{w.field} at line {w.line}: {w.message}; ignored (only context)",
                )
                for w in bad
            )
    return found


#: ``volatile_kind`` of strings met before (args repeat their values from call to call: a
#: model name, a locale, a folder), bounded
_KIND_SEEN: dict[str, str | None] = {}
_KIND_SEEN_LENGTH = 128
_KIND_SEEN_COUNT = 16384
_UNSEEN = object()


#: how every string ``volatile_kind`` names starts (it matches whole strings only): a UUID
#: (8 hex digits and ``-``), a date (``\d{4}-``), an epoch (ten digits), ``urn:uuid:``, a
#: request id's word (``REQUEST_ID_RE``), a temporary or absolute path (``/``, ``%TEMP%``,
#: a drive letter and ``:``, ``\\``); case-insensitive where those patterns are, with the
#: same folding, and ``\d`` any digit as theirs. Most strings fail at their first
#: character (a word, a relative path), so the patterns are not tried
_VOLATILE_START = re.compile(
    r"[0-9a-fA-F]{8}-|\d{4}-|\d{10}|/|\\\\"
    r"|(?i:urn:uuid:|x-|req|rid|trace|span|corr|%temp%|[A-Za-z]:)"
)


def _string_kind(text: str) -> str | None:
    kind = _KIND_SEEN.get(text, _UNSEEN)
    if kind is _UNSEEN:
        kind = (
            volatile_kind(text)
            if _VOLATILE_START.match(text) is not None and _MAY_BE_VOLATILE.search(text) is not None
            else None
        )
        # short strings only, and not too many: the cache lives as long as the process
        # (a tester's cassette of long distinct prompts kept 300 MB alive)
        if len(text) <= _KIND_SEEN_LENGTH and len(_KIND_SEEN) < _KIND_SEEN_COUNT:
            _KIND_SEEN[text] = kind
    return kind  # type: ignore[return-value]


def _has_volatile(value: Any) -> bool:
    """Whether any leaf below ``value`` is a volatile value (``_volatile_leaves`` yields
    something), asked of the values alone (``leaf_values``'s walk, inline: no path built,
    no generator step a leaf, a string seen before one dict look-up) for the common case
    of none."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    seen = _KIND_SEEN.get
    while stack:
        node = pop()
        kind_of = type(node)
        if kind_of is str:
            kind = seen(node, _UNSEEN)
            if kind is _UNSEEN:
                kind = _string_kind(node)
            if kind is not None:
                return True
        elif kind_of is dict:
            push(node.values())
        elif kind_of is list:
            push(node)
        elif kind_of is int or kind_of is float:
            if node >= EPOCH_MIN_S and volatile_kind(node) is not None:
                return True
        elif kind_of is bool or node is None:
            continue
        elif isinstance(node, dict):
            push(node.values())
        elif isinstance(node, list | tuple):
            push(node)
        else:
            return True  # another type (a subclass): the full walk decides
    return False


def _volatile_leaves(value: Any) -> Iterator[tuple[str, Any, str]]:
    """``(path, leaf, kind)`` of every volatile leaf below ``value``, in document order."""
    for parts, leaf in iter_leaves(value, only=_MAY_BE_VOLATILE_TYPES):
        kind_of = type(leaf)
        if kind_of is str:
            kind = _string_kind(leaf)
        elif kind_of is bool or not leaf >= EPOCH_MIN_S:  # small numbers (NaN) never epochs
            continue
        else:
            kind = volatile_kind(leaf)  # a bare date (flight, birth date) is domain data
        if kind is not None:
            yield format_path(parts), leaf, kind


def binary_text_reason(text: str) -> str | None:
    """Why ``text`` looks like binary data decoded as text, or ``None`` when it does not.

    Flags: gzip magic (``\\x1f\\x8b``, or ``\\x1f`` followed by the deflate byte when the
    invalid ``\\x8b`` was dropped), NUL characters, U+FFFD replacement characters, or
    more than 10% control characters (tab, newline, CR and form feed excepted)."""
    if not text:
        return None
    if text.startswith("\x1f") and len(text) > 1 and text[1] in "\x8b\x08\ufffd":
        return "gzip magic bytes \\x1f\\x8b at the start"
    if "\x00" in text:
        return "NUL characters"
    replacements = text.count("\ufffd")
    if replacements:
        return f"{replacements} U+FFFD replacement character(s) from an invalid UTF-8 decode"
    if _CONTROL.search(text) is None:  # the common case, without a per-character loop
        return None
    controls = len(_CONTROL.findall(text))
    if controls * 10 > len(text):
        return f"{controls} control characters in {len(text)}"
    return None


def _is_envelope(node: Any) -> bool:
    return isinstance(node, dict) and node.get("_binary") is True


def _binary_texts(value: Any, part: str) -> Iterator[tuple[str, str]]:
    """``(path, why)`` of every string leaf below ``value`` (the entry's ``part``,
    ``"response"`` or ``"error"``) that looks like binary data decoded as text, in
    document order. A base64 envelope is not entered. No recursion, and a path is built
    only for a string that is flagged (this runs over every response of ``check``)."""
    if type(value) is str:
        why = binary_text_reason(value)
        if why is not None:
            yield format_path((part,)), why
        return
    if _is_envelope(value) or not isinstance(value, dict | list):
        return
    items = value.items() if isinstance(value, dict) else enumerate(value)
    stack: list[tuple[tuple[Any, ...], Iterator[tuple[Any, Any]]]] = [((part,), iter(items))]
    while stack:
        parts, it = stack[-1]
        for key, child in it:
            kind = type(child)
            if kind is str:
                if child:
                    why = binary_text_reason(child)
                    if why is not None:
                        yield format_path(parts + (key,)), why
            elif kind is dict:
                if child.get("_binary") is not True:
                    stack.append((parts + (key,), iter(child.items())))
                    break
            elif kind is list:
                stack.append((parts + (key,), iter(enumerate(child))))
                break
        else:
            stack.pop()
