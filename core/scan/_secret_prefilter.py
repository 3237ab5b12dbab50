"""The line prefilter of the secret scan: which cassette lines certainly hold no secret.

``check`` scans every entry of a cassette; most lines of a real one hold no secret, and
the bytes of a line can prove it without walking its values: one pass of RE2's
multi-pattern matcher (google-re2, linear time) over the line looks for a necessary
condition of each source of hits in the detectors (``_secret_detectors.scan_string`` and
``scan_text``). When none is there, ``secrets.scan_entry`` of the line's entry finds
nothing; a property test holds the two equal, and the full scan stays the definition of a
secret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ._secret_detectors import (
    B64_DECODE_MIN,
    NOT_IN_WORD,
    PROVIDERS,
    QUERY,
    base64_hit,
    entropy_hit,
    is_id_key,
    is_secret_key,
    pattern_groups,
)

__all__ = ["build_prefilter", "line_secret_free", "lines_secret_free"]

#: a key the key-name rules name holds one of these, in any case: its last word, or the
#: last two joined ("apikey" split anywhere holds "key" or "apik")
_KEY_STEMS = "key|token|pass|pwd|secret|cookie|credentials|authorization|apik"
#: the bytes of the detectors' ``_B64_RUN`` class but the backslash (the scan's runs are
#: taken from its candidates, ``_CANDIDATE``, which hold none)
_B64_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")
_HEX_BYTES = re.compile(rb"[0-9a-fA-F]+")
#: a line's bytes with each of ``_B64_BYTES`` as ``a`` and every other byte as a space
_B64_MASK = bytes(0x61 if b in _B64_BYTES else 0x20 for b in range(256))
_MASKED_RUN = b"a" * 16
_HEX16 = re.compile(rb"[0-9a-fA-F]{16}")


def _candidate_runs(line: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each whole base64 run of ``line`` (bytes of ``_B64_BYTES``,
    not next to another) the entropy test may call random: 23 bytes or more (the base64
    limit needs 23 distinct ones), or 16 to 22 that hold 16 hex digits in a row. Byte
    searches over a mask of the line, not a regex over it: half the time of RE2's
    ``finditer`` (measured on the 100k text cassette)."""
    masked = line.translate(_B64_MASK)
    start = masked.find(_MASKED_RUN)
    while start >= 0:  # the first 16 in a row after a space start a whole run
        end = masked.find(b" ", start)
        if end < 0:
            end = len(masked)
        if end - start >= 23 or _HEX16.search(line, start, end) is not None:
            yield start, end
        start = masked.find(_MASKED_RUN, end)


#: the library's patterns that need a keyword before the value, loosened so that a match
#: in a window of one text implies a match in the line: no lookbehind, no lookahead, the
#: union of their keywords, separators and value characters, at least the shortest value
_CONTEXT_LOOSE = (
    r"(?i)(?:key|pwd|pw|password|pass|token)(?:\"|'|)(?:\]|)(?: *)(?:=|:|:=|=>| +|::)"
    r"(?: *)(?:\"|'|)[a-z0-9/+_\-]{24}"
)

#: the prefilter's patterns (RE2 syntax, on the line's UTF-8 bytes), by what a match means
_MAYBE = "maybe"  # a source of hits may be there: scan the entry
_KEY = "key"  # an object key holding a key-name stem: test the line's keys exactly
_QUERY_NAME = "query"  # a query parameter holding a stem: test the line's parameters
_SLASHES, _URL_NEED = "//", "url need"  # both: a URL pattern may match
_QUOTE, _STEM = "quote", "stem"  # both: the keyword plugin may match


def _loosened(pattern: str) -> str:
    """A library pattern without what RE2 lacks or a token alone sees otherwise: the
    lookaheads and the start/end delimiters go, repeats over 1000 become open; every
    match of the pattern in a token is a match of this in the line."""
    pattern = pattern.replace(r"(?!\w)", "")
    pattern = pattern.replace(r'(?:\s|=|:|"|^)', "").replace(r'(?:\s|"|$)', "")
    return re.sub(r"\{(\d+),(\d{4,})\}", r"{\1,}", pattern)


#: the delimiter of a line's texts: a plain line's own quote; ``\x00`` in a rebuilt one
_PLAIN, _REBUILT = b'"', b"\x00"


class _Sets(NamedTuple):
    """RE2's sets, one for each kind of line, and what a match of each pattern means."""

    plain: Any
    plain_meanings: tuple[str, ...]
    rebuilt: Any
    rebuilt_meanings: tuple[str, ...]


def _patterns(delimiter: bytes) -> list[tuple[str, str]]:
    """The prefilter's patterns for lines whose texts ``delimiter`` delimits: a plain line
    (no backslash: each text is its bytes, ``"`` only ever a delimiter) or a rebuilt one
    (``_texts_line``: ``\\x00`` delimits, ``"`` is a text's own)."""
    d = "\\x00" if delimiter == _REBUILT else '"'
    patterns: list[tuple[str, str]] = [
        # placeholders, PEM blocks, bearer words (``_scan_text``'s own tests)
        (_MAYBE, r"<redacted:|PRIVATE KEY|PuTTY-User-Key|earer|EARER"),
        # Python's case-insensitive [a-z] also matches these two; RE2's does not
        (_MAYBE, "\u0130|\u0131"),
        (_KEY, rf"{d}[^{d}]*(?i:{_KEY_STEMS})[^{d}]*{d}\s*:"),
        (_QUERY_NAME, rf"[A-Za-z0-9_.\-]*(?i:{_KEY_STEMS})[A-Za-z0-9_.\-]*="),
        # ``Basic <base64>`` in a text, and percent escapes (the scan decodes both)
        (_MAYBE, r"[Bb][Aa][Ss][Ii][Cc][ \t]|%[0-9A-Fa-f]{2}"),
        (_SLASHES, r"//"),
        # the URL patterns: basic-auth and Cloudant need "@", npm "_authToken", the rest
        # their hosts
        (_URL_NEED, r"@|_authToken|(?i:slack|softlayer)"),
        (_STEM, r"(?i:key|pass|pwd|secret|contrase)"),
        # the context patterns, loosened: their keywords, separators and value characters
        # (at least the shortest value); the AWS one has no lookaround
        (_MAYBE, _CONTEXT_LOOSE),
    ]
    if delimiter == _REBUILT:
        patterns += [
            # a key of JSON held in a text (its own quotes are the only ones in the line);
            # a plain line's texts hold no quote, so no JSON with a key either
            (_MAYBE, rf'"[^"\x00]*(?i:{_KEY_STEMS})[^"\x00]*"\s*:'),
            (_QUOTE, r"['`\"]"),
        ]
    else:
        patterns.append((_QUOTE, r"['`]"))  # a plain line's texts hold no ``"``
    for _, regex in pattern_groups()[1]:
        if "(?<" not in regex.pattern and "(?!" not in regex.pattern:
            flags = "(?i)" if regex.flags & re.IGNORECASE else ""
            patterns.append((_MAYBE, flags + regex.pattern))
    for _, regex in pattern_groups()[0]:
        flags = "(?i)" if regex.flags & re.IGNORECASE else ""
        patterns.append((_MAYBE, flags + _loosened(regex.pattern)))
    for _, regex in PROVIDERS:  # ASCII, no flags; RE2 has no lookbehind (looser is safe)
        patterns.append((_MAYBE, regex.pattern.replace(NOT_IN_WORD, "")))
    return [(meaning, _without_leading_run(pattern)) for meaning, pattern in patterns]


#: a pattern that starts with a long counted run of one class (``[0-9a-z]{32}-us...``,
#: the library's Mailchimp key), then something else
_LEADING_RUN = re.compile(r"(\(\?i\))?\[[^\]\\]+\]\{(\d+)(?:,\d*)?\}(.+)", re.DOTALL)


def _without_leading_run(pattern: str) -> str:
    """``pattern`` without a leading counted run of 16 or more of one class: every match of
    the pattern ends with a match of what follows the run, so the set still matches
    wherever it did (looser is safe). The run counted over every word of a line's text
    (``[0-9a-z]`` is most of prose) kept RE2's automaton in many states: the set took 2.4
    us a line with it, 1.9 without (measured on the 100k text cassette's plain lines)."""
    m = _LEADING_RUN.fullmatch(pattern)
    if m is None or int(m.group(2)) < 16 or m.group(3)[0] in "*+?{|)":
        return pattern
    return (m.group(1) or "") + m.group(3)


def _compiled(patterns: list[tuple[str, str]], delimiter: bytes) -> Any:
    """RE2's set of ``patterns``, or ``None`` when it cannot be built."""
    import re2

    options = re2.Options()
    options.log_errors = False
    # room for the set's automaton: with RE2's default 8 MB its state cache fills and is
    # rebuilt over and over on a large cassette (measured: 32 MB scans 100k lines in 3/4
    # of the time; more does not help)
    options.max_mem = 32 << 20
    matcher = re2.Set.SearchSet(options)
    for _, pattern in patterns:
        matcher.Add(pattern)
    matcher.Compile()
    # RE2's set answers "no match" when its automaton cannot be built (out of memory):
    # a set that misses what it must find is not used (every line is then a maybe)
    key = delimiter + b"api_key" + delimiter + b":"
    if not matcher.Match(b"PRIVATE KEY") or not matcher.Match(key):
        return None
    return matcher


@functools.cache
def _prefilter() -> _Sets | None:
    """RE2's two sets and, per pattern index, what a match means; ``None`` without RE2."""
    try:
        import re2  # noqa: F401
    except ImportError:  # pragma: no cover - a dependency; without it, no prefilter
        return None
    plain, rebuilt = _patterns(_PLAIN), _patterns(_REBUILT)
    plain_set, rebuilt_set = _compiled(plain, _PLAIN), _compiled(rebuilt, _REBUILT)
    if plain_set is None or rebuilt_set is None:
        return None
    return _Sets(
        plain_set,
        tuple(meaning for meaning, _ in plain),
        rebuilt_set,
        tuple(meaning for meaning, _ in rebuilt),
    )


def build_prefilter() -> None:
    """Build RE2's sets now (the detectors' library imported, the patterns compiled:
    about 0.1 s of CPU): a worker forked after this shares them instead of building its
    own (``check.py``)."""
    _prefilter()


_entropy_seen: dict[bytes, bool] = {}
#: only runs this short are remembered (a digest, a token), at most this many of them
_ENTROPY_SEEN_LENGTH = 128
_ENTROPY_SEEN_COUNT = 65536


def _run_may_be_entropic(run: bytes) -> bool:
    hit = _entropy_seen.get(run)
    if hit is None:
        hit = entropy_hit(run.decode("ascii")) is not None
        # short runs only (a digest, a token): the cache lives as long as the process
        if len(run) <= _ENTROPY_SEEN_LENGTH and len(_entropy_seen) < _ENTROPY_SEEN_COUNT:
            _entropy_seen[run] = hit
    return hit


_base64_seen: dict[bytes, bool] = {}


def _run_hides_secret(run: bytes) -> bool:
    """``base64_hit`` of a run (short runs remembered, as ``_run_may_be_entropic``'s);
    what ``_b64_text`` refuses before decoding is refused here first."""
    body = run.rstrip(b"=")
    # ``_b64_text``'s own first exits, on the bytes: a length that leaves 1 over 4, a
    # ``=`` inside, or both alphabets' own bytes (``-``/``_`` and ``+``/``/``: a path)
    if len(body) % 4 == 1 or 0x3D in body:
        return False
    if (0x2F in body or 0x2B in body) and (0x2D in body or 0x5F in body):
        return False
    hit = _base64_seen.get(run)
    if hit is None:
        hit = base64_hit(run.decode("ascii")) is not None
        if len(run) <= _ENTROPY_SEEN_LENGTH and len(_base64_seen) < _ENTROPY_SEEN_COUNT:
            _base64_seen[run] = hit
    return hit


#: a JSON escape's byte after the backslash -> the byte it stands for (a quote is
#: ``\x00`` by the time escapes are read: ``_texts_line`` turns quotes into delimiters
#: first, so an escaped quote shows as a backslash and ``\x00``)
_ONE_BYTE_ESCAPES = {
    0x00: b'"',
    0x6E: b"\n",
    0x74: b"\t",
    0x72: b"\r",
    0x62: b"\b",
    0x66: b"\f",
    0x2F: b"/",
}
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")


def _texts_line(raw: bytes) -> bytes | None:
    """The line with each JSON string's text as it is decoded, between ``\x00``
    delimiters (so every text the scan sees, keys included, is a substring of it and
    ``"`` is only ever a text's own), or ``None`` when that cannot be made: a NUL, a
    backslash, NUL or lone surrogate written as a ``\\u`` escape, an escape JSON does not
    have, or a text that holds an escaped backslash and may be JSON (a ``{`` or ``[`` in
    it: the scan decodes JSON held in a text once more, and what it sees then is not a
    substring of the line). Bytes that are not UTF-8 are left as they are.

    One pass over the escapes, whatever their number: the quotes become delimiters, then
    the line is split at its backslashes, and each piece after one starts with what the
    escape names (an empty piece: an escaped backslash, whose next piece is plain text).
    Escapes pair from the left, as JSON reads them, so ``\\\\"`` ends its text."""
    if 0 in raw:
        return None
    line = raw.replace(b'"', b"\x00")
    if 0x5C not in line:
        return line
    unescaped = _unescaped(line.split(b"\\"))
    if unescaped is None:
        return None
    line, backslash = unescaped
    if backslash and _json_text_with_backslash(line):
        return None
    return line


#: ``_unescaped`` joins its parts in blocks of this many
_JOIN_BLOCK = 1 << 16


def _unescaped(pieces: list[bytes]) -> tuple[bytes, bool] | None:
    """The pieces of a line split at its backslashes, joined with each escape decoded, and
    whether one of them was an escaped backslash; ``None`` for a lone backslash at the end
    or an escape ``_texts_line`` refuses.

    The parts are joined a block of about ``_JOIN_BLOCK`` pieces at a time: ``bytes.join``
    holds a buffer view (80 bytes) of each part while it joins, so a line of 2M escaped
    backslashes joined at once took 400 MB."""
    out = [pieces[0]]
    blocks: list[bytes] = []
    backslash = False
    i, n = 1, len(pieces)
    while i < n:
        stop = min(n, i + _JOIN_BLOCK)
        while i < stop:
            piece = pieces[i]
            if not piece:  # an escaped backslash
                if i + 1 == n:
                    return None  # a lone backslash at the end: not JSON
                out.append(b"\\")
                out.append(pieces[i + 1])
                backslash = True
                i += 2
                continue
            char = _ONE_BYTE_ESCAPES.get(piece[0])
            if char is not None:
                out.append(char)
                out.append(piece[1:])
                i += 1
                continue
            decoded = _unicode_escape(pieces, i)
            if decoded is None:
                return None
            char, rest, i = decoded
            out.append(char)
            out.append(rest)
        if i < n:  # more to come: this block's parts joined now
            blocks.append(b"".join(out))
            out = []
    if blocks:
        blocks.append(b"".join(out))
        return b"".join(blocks), backslash
    return b"".join(out), backslash


def _unicode_escape(pieces: list[bytes], i: int) -> tuple[bytes, bytes, int] | None:
    """The ``\\uXXXX`` escape that starts piece ``i`` (a surrogate pair: the next piece
    too) as ``(its UTF-8 bytes, the rest of its last piece, the next piece's index)``;
    ``None`` for another escape, a lone surrogate, a NUL or a backslash (see
    ``_texts_line``)."""
    piece = pieces[i]
    if piece[0] != 0x75 or _HEX4.match(piece, 1) is None:  # 0x75: u
        return None
    code = int(piece[1:5], 16)
    rest = piece[5:]
    if 0xD800 <= code <= 0xDBFF and not rest and i + 1 < len(pieces):  # a surrogate pair?
        low = pieces[i + 1]
        if low[:1] == b"u" and _HEX4.match(low, 1) is not None:
            second = int(low[1:5], 16)
            if 0xDC00 <= second <= 0xDFFF:
                code = 0x10000 + ((code - 0xD800) << 10) + second - 0xDC00
                rest = low[5:]
                i += 1
    if 0xD800 <= code <= 0xDFFF or code in (0, 0x5C):
        return None  # a lone surrogate, a NUL or a backslash: see above
    return chr(code).encode("utf-8"), rest, i + 1


def _json_text_with_backslash(line: bytes) -> bool:
    """Whether a text of a rebuilt line that holds a backslash may be JSON (holds a ``{``
    or a ``[``)."""
    at = line.find(b"\\")
    while at >= 0:  # each text holding a backslash, found from the backslash
        start = line.rfind(b"\x00", 0, at) + 1
        end = line.find(b"\x00", at)
        end = len(line) if end < 0 else end
        if line.find(b"{", start, end) >= 0 or line.find(b"[", start, end) >= 0:
            return True
        at = line.find(b"\\", end)
    return False


def line_secret_free(raw: bytes) -> bool:
    """Whether the bytes of one cassette line prove that ``scan_entry`` (without a config's
    ``paths``) finds no secret in its entry: ``True`` means none; ``False`` means "maybe"
    (scan the entry).

    Conservative: a line whose texts cannot be rebuilt as substrings of one line
    (``_texts_line``: an escaped backslash, say) is a maybe. Otherwise the line is a maybe
    when it holds a key the key-name rules name (or a stem of one in a key of JSON held in
    a text), a query parameter or assignment they name, a placeholder, a PEM block, a URL
    with what a URL pattern needs, a bearer word, a ``Basic`` word, a percent escape, a
    keyword with a quote (``'`` or a backtick), what one of the library's token or context
    patterns (loosened) or of the detectors' own provider formats matches, or a base64/hex
    run over the entropy limits or holding a secret once decoded. Raises nothing (a line
    that is not UTF-8 is a maybe)."""
    return lines_secret_free([raw])[0]


def lines_secret_free(raws: list[bytes]) -> list[bool]:
    """``line_secret_free`` of each line, the same answers.

    A line with no backslash and no NUL (most of them) is read as it is: each of its
    texts is its own bytes and ``"`` only ever delimits one, so it needs no rebuild and
    goes to the set written for ``"`` as the delimiter; any other line is rebuilt
    (``_texts_line``) and goes to the set for ``\\x00``. Each step runs over all the lines
    before the next one starts: RE2's automaton then stays in the CPU's caches (measured
    on the 100k text cassette: its match took 26 us a line between parses, 12 us in a
    row)."""
    sets = _prefilter()
    if sets is None:
        return [False] * len(raws)
    # one-byte tests as ints: ``bytes in bytes`` first tries its operand as an int and
    # clears the TypeError, ten times the time of ``memchr`` itself on a line
    plain = [0x5C not in raw and 0 not in raw for raw in raws]
    lines = [raw if p else _texts_line(raw) for raw, p in zip(raws, plain, strict=True)]
    # the plain lines first, then the rebuilt ones: one automaton at a time stays in the
    # CPU's caches (the two in turn, line by line, did not)
    plain_match, rebuilt_match = sets.plain._set.Match, sets.rebuilt._set.Match
    found = [plain_match(line) if p else None for line, p in zip(lines, plain, strict=True)]
    for k, (line, p) in enumerate(zip(lines, plain, strict=True)):
        if not p and line is not None:
            found[k] = rebuilt_match(line)
    out = []
    for line, p, hits in zip(lines, plain, found, strict=True):
        if line is None:
            out.append(False)
            continue
        delimiter = _PLAIN if p else _REBUILT
        if hits:
            meanings = sets.plain_meanings if p else sets.rebuilt_meanings
            if not _free_of(line, hits, meanings, delimiter):
                out.append(False)
                continue
        out.append(_runs_free(line, delimiter))
    return out


#: a key of a line's text in turn (group 1), by the texts' delimiter: an object key
#: (followed by ``:``) is captured, a value is matched as the empty capture
_JSON_KEYS = {
    _PLAIN: re.compile('"([^"]*)"\\s*:|"[^"]*"'),
    _REBUILT: re.compile("\x00([^\x00]*)\x00\\s*:|\x00[^\x00]*\x00"),
}


def _free_of(raw: bytes, found: list[int], meanings: tuple[str, ...], delimiter: bytes) -> bool:
    """Whether what RE2's set matched on a line (``found``: the indexes of its patterns,
    not empty; ``delimiter``: its texts') leaves it free of a secret; its runs are
    ``_runs_free``'s."""
    seen = {meanings[i] for i in found}
    if (
        _MAYBE in seen
        or (_SLASHES in seen and _URL_NEED in seen)
        or (_QUOTE in seen and _STEM in seen)
    ):
        return False
    try:
        line = raw.decode("utf-8") if _KEY in seen or _QUERY_NAME in seen else ""
    except UnicodeDecodeError:
        return False
    if _KEY in seen:
        for key in set(_JSON_KEYS[delimiter].findall(line)):
            if is_secret_key(key):
                return False
    if _QUERY_NAME in seen:
        for m in QUERY.finditer(line):
            if is_secret_key(m.group(1)):
                return False
    return True


#: what comes before the hex digits of an args digest the engine writes
#: (``"args_digest":"sha256:<16 hex>"``), by the texts' delimiter
_DIGEST_HEADS = {d: d + b"args_digest" + d + b":" + d + b"sha256:" for d in (_PLAIN, _REBUILT)}
_HEAD_LENGTH = len(_DIGEST_HEADS[_PLAIN])


#: the bytes a path's run holds most (the hyphen, the slash, the commonest letters): a run
#: with fewer than ``_COMMON_ROOM`` other bytes holds fewer than 23 distinct ones
_COMMON = b"-/etaoinrslcdpmu"
_COMMON_ROOM = 23 - len(_COMMON)


def _runs_free(raw: bytes, delimiter: bytes) -> bool:
    """Whether no base64 or hex run of a line (``delimiter``: its texts') may be over the
    entropy limits where the scan tests it, nor be the base64 of a text holding a secret.
    Not a pattern of RE2's set: its counted repetition made the set's automaton twice as
    slow on every line (measured: 10 us a line, 5.7 without). The runs are
    ``_candidate_runs``', found inline (no generator step a run), the args digest passed
    over by its position; each run is let go by its cheapest test first (a short one by
    ``isalnum``, a long one by ``_b64_text``'s refusal of both alphabets' own bytes before
    ``_run_hides_secret`` is called)."""
    masked = raw.translate(_B64_MASK)
    find = masked.find
    at = find(_MASKED_RUN)
    if at < 0:
        return True
    size = len(masked)
    while at >= 0:  # the first 16 in a row after a space start a whole run
        start = at
        end = find(b" ", start + 16)
        if end < 0:
            end = size
            at = -1
        else:
            at = find(_MASKED_RUN, end)
        length = end - start
        if length < 23:
            # the engine's args digest (every line has one): its 16 hex digits are the
            # text after an ``args_digest`` key, whose value the scan never tests for
            # entropy (an id-like key; ``_entropy_skipped`` finds the same, slower), and
            # too short to decode as base64
            if (
                length == 16
                and start >= _HEAD_LENGTH
                and raw.startswith(_DIGEST_HEADS[delimiter], start - _HEAD_LENGTH)
            ):
                continue
            run = raw[start:end]
            # the entropy test's own first exits (``entropy_hit``): a run shorter than 23
            # that is not all hex has fewer than 23 distinct characters (it is a candidate
            # only when it holds 16 hex digits in a row, which an all-hex run of 16 or more
            # does); fewer than 9. ``isalnum`` first: one C pass lets go a word with a
            # ``-`` or ``/``, most short runs
            if not run.isalnum() or _HEX_BYTES.fullmatch(run) is None or len(set(run)) < 9:
                continue
        else:
            run = raw[start:end]
            # base64 of a text holding a secret: decoded by the scan wherever the run is
            # (``_run_hides_secret``'s own first exits inline: most long runs are paths
            # that hold both alphabets' own bytes)
            # (the bytes as ints, as in ``lines_secret_free``)
            if (
                length >= B64_DECODE_MIN
                and not ((0x2F in run or 0x2B in run) and (0x2D in run or 0x5F in run))
                and _run_hides_secret(run)
            ):
                return False
            # under 23 distinct bytes only an all-hex run may be random; a path is not
            # alphanumeric, which ``isalnum`` tells without the regex, and needs 23
            # distinct bytes: ``_COMMON``'s count at most its length, the others at most
            # their number, a bound that lets most paths go without ``set`` (a fifth of
            # its time)
            if not run.isalnum():
                if len(run.translate(None, _COMMON)) < _COMMON_ROOM or len(set(run)) < 23:
                    continue
            else:
                distinct = len(set(run))
                if distinct < 9 or (distinct < 23 and _HEX_BYTES.fullmatch(run) is None):
                    continue
        if not _entropy_skipped(raw, start, delimiter) and _run_may_be_entropic(run):
            return False
    return True


def _entropy_skipped(line: bytes, at: int, delimiter: bytes) -> bool:
    """Whether the scan never tests the entropy of a run at ``at`` of a line (its texts
    delimited by ``delimiter``): it is outside every text (a number), or in a text (not
    JSON) that is the value of an id-like key (``request_id``, ``etag``, ...:
    ``_scan_string``'s ``entropy=False``)."""
    opened = line.count(delimiter, 0, at)
    if not opened & 1:
        return True  # not in a string: numbers are never scanned
    start = line.rfind(delimiter, 0, at)
    end = line.find(delimiter, at)
    try:
        text = line[start + 1 : end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    if text.lstrip()[:1] in ("{", "["):
        return False  # JSON in a text: its leaves have keys of their own
    key_end = line.rfind(delimiter, 0, start)
    if key_end < 0:
        return False
    between = line[key_end + 1 : start].strip(b" \t\n\r")
    if between != b":":
        return False  # a list item, or not an object's value
    key_start = line.rfind(delimiter, 0, key_end)
    try:
        key = line[key_start + 1 : key_end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return is_id_key(key)


# -- the public names of the long-text scans (``plain_text_secrets``, ``masking``) ----------
#: the delimiter of a plain line's texts (a line with no backslash and no NUL)
PLAIN = _PLAIN
#: the delimiter of a rebuilt line's texts (``_texts_line``): a long text asked of the
#: prefilter is framed as the one text of such a line, ``\x00`` either side of its bytes
REBUILT = _REBUILT
#: what a match of RE2's pattern means (``_Sets``'s meanings): ``//``, and what a URL
#: pattern needs besides (``@``, ``_authToken``, a host): both, and a URL pattern may match
SLASHES, URL_NEED = _SLASHES, _URL_NEED


def prefilter_sets() -> _Sets | None:
    """RE2's two sets (plain lines, rebuilt lines) and what a match of each pattern means,
    built once; ``None`` without google-re2 (nothing is then proven free)."""
    return _prefilter()


def free_of(line: bytes, found: list[int], meanings: tuple[str, ...], delimiter: bytes) -> bool:
    """Whether the patterns RE2's set matched on ``line`` (``found``: their indexes, not
    empty; ``meanings``: the set's; ``delimiter``: the line's texts') leave it free of a
    secret, its base64/hex runs aside (``runs_free``)."""
    return _free_of(line, found, meanings, delimiter)


#: a line at least this long has its runs found by two masks (``_sparse_runs_free``)
_SPARSE_MIN = 4096
#: a line's bytes with each hex digit as ``h`` and every other byte as a space
_HEX_MASK = bytes(0x68 if chr(b) in "0123456789abcdefABCDEF" else 0x20 for b in range(256))
_MASKED_LONG_RUN, _MASKED_HEX16 = b"a" * 23, b"h" * 16


def runs_free(raw: bytes, delimiter: bytes) -> bool:
    """Whether no base64 or hex run of a line (``delimiter``: its texts') may be over the
    entropy limits where the scan tests it, nor be the base64 of a text holding a secret:
    ``_runs_free``'s answer. A long line (a long text's piece: ``plain_text_secrets``) is
    searched by ``_sparse_runs_free``, which goes to the runs that can matter only."""
    if len(raw) >= _SPARSE_MIN:
        return _sparse_runs_free(raw, delimiter)
    return _runs_free(raw, delimiter)


def _sparse_runs_free(raw: bytes, delimiter: bytes) -> bool:
    """``_runs_free(raw, delimiter)``, the same answer: its loop over the runs of 16 or
    more until ``_SHORT_RUNS`` runs of 16 to 22 were met, then two byte searches for the
    rest of the line (``_sparse_rest``). A text of URLs has such a run in most of them
    (``com/docs/page/123``): each was a step of the loop."""
    masked = raw.translate(_B64_MASK)
    size = len(masked)
    at = masked.find(_MASKED_RUN)
    short = 0
    while at >= 0:  # the first 16 in a row after a space start a whole run
        end = masked.find(b" ", at + 16)
        end = size if end < 0 else end
        if end - at >= 23:
            if not _long_run_free(raw, at, end, delimiter):
                return False
        else:
            if not _short_run_free(raw, at, end, delimiter):
                return False
            short += 1
            if short == _SHORT_RUNS and end < size:
                return _sparse_rest(raw, masked, end, delimiter)
        at = -1 if end == size else masked.find(_MASKED_RUN, end)
    return True


#: the runs of 16 to 22 bytes met one by one before the rest of a line is searched for the
#: runs that can matter only
_SHORT_RUNS = 16


def _sparse_rest(raw: bytes, masked: bytes, at: int, delimiter: bytes) -> bool:
    """``_runs_free``'s answer over the runs that start after ``at`` (not in a run:
    ``masked[at]`` is a space): the runs of 23 or more, then the runs of 16 to 22 that hold
    16 hex digits in a row (a shorter run is let go unless it is all hex)."""
    size = len(masked)
    run = masked.find(_MASKED_LONG_RUN, at)
    while run >= 0:  # from a space: the first 23 in a row start a whole run
        end = masked.find(b" ", run + 23)
        end = size if end < 0 else end
        if not _long_run_free(raw, run, end, delimiter):
            return False
        run = -1 if end == size else masked.find(_MASKED_LONG_RUN, end)
    hexes = raw.translate(_HEX_MASK)
    digits = hexes.find(_MASKED_HEX16, at)
    while digits >= 0:
        start = masked.rfind(b" ", 0, digits) + 1
        end = masked.find(b" ", digits)
        end = size if end < 0 else end
        if end - start < 23 and not _short_run_free(raw, start, end, delimiter):
            return False
        digits = hexes.find(_MASKED_HEX16, end)
    return True


def _long_run_free(raw: bytes, start: int, end: int, delimiter: bytes) -> bool:
    """``_runs_free``'s test of a run of 23 bytes or more."""
    run = raw[start:end]
    if (
        end - start >= B64_DECODE_MIN
        and not ((b"/" in run or b"+" in run) and (b"-" in run or b"_" in run))
        and _run_hides_secret(run)
    ):
        return False
    distinct = len(set(run))
    if distinct < 9 or (distinct < 23 and (not run.isalnum() or _HEX_BYTES.fullmatch(run) is None)):
        return True
    return _entropy_skipped(raw, start, delimiter) or not _run_may_be_entropic(run)


def _short_run_free(raw: bytes, start: int, end: int, delimiter: bytes) -> bool:
    """``_runs_free``'s test of a run of 16 to 22 bytes."""
    if (
        end - start == 16
        and start >= _HEAD_LENGTH
        and raw.startswith(_DIGEST_HEADS[delimiter], start - _HEAD_LENGTH)
    ):
        return True
    run = raw[start:end]
    if not run.isalnum() or _HEX_BYTES.fullmatch(run) is None or len(set(run)) < 9:
        return True
    return _entropy_skipped(raw, start, delimiter) or not _run_may_be_entropic(run)


#: what a match of the one pattern ``json_text_set`` adds means: a number orjson may refuse
#: where msgspec does not (a float past 1.8e308: an exponent, or 300 digits in a row), so
#: the text is left to orjson's parse (``json_list_secrets``); a digit before an ``e`` in a
#: text counts too (looser is safe: the parse is the old way)
NUMBER_RISK = "number"


@functools.cache
def json_text_set() -> tuple[Any, tuple[str, ...]] | None:
    """RE2's set for plain lines (``prefilter_sets().plain``'s patterns, the same indexes)
    with one pattern more, last: ``NUMBER_RISK``'s. One pass over a part of a JSON text
    (a line with no backslash and no NUL, as ``lines_secret_free`` reads it) then says
    both whether it may hold a secret and whether orjson may refuse a number in it. Its
    meanings by index; ``None`` without google-re2."""
    if _prefilter() is None:
        return None
    patterns = [*_patterns(_PLAIN), (NUMBER_RISK, r"[0-9][eE]|[0-9]{300}")]
    compiled = _compiled(patterns, _PLAIN)
    if compiled is None:
        return None
    return compiled, tuple(meaning for meaning, _ in patterns)
