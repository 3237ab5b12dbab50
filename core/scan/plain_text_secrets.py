"""The secrets of a long plain string (not a JSON text: an answer's prose, a log, a list of
URLs), found without scanning all of it: the same set as ``scan_text`` of the whole.

A screen shows the start of a 2 MB string, but masks each secret the scan finds anywhere
in it everywhere its text occurs (``masking.mask_value``): ``hunter2xyz`` at the start is
masked because ``password = 'hunter2xyz'`` stands 100 KB later. Scanning only the part
shown missed that; scanning the whole text costs 45-90 ms for 2.4 MB of prose. Here the
text is cut into pieces of about ``PIECE`` characters, each piece is asked of ``check``'s
line prefilter as a text of its own (one RE2 pass; ``_secret_prefilter``), and only the
pieces it cannot call free are scanned.

Exact because a cut is made only where no detector of ``_scan_text`` reaches across it
(``_quiet_cut``): after one blank character between two others that are no quote, ``=``,
``:`` or ``>`` (the id-key look-back, the context patterns' separators), with no keyword
stem, context word, ``bearer``, ``basic`` or ``softlayer`` within 256 characters (the
keyword plugin's windows: 40 before, 200 after; a context pattern's match holds its
word); every other detector matches no blank space (tokens, the URL patterns, query
parameters). The scan's few whole-text rules are not cut at all: a text holding a
placeholder, a PEM block, a percent escape or npm's ``_authToken``, or whose lower case
changes its length, is scanned whole (``None``). A URL list with user names is cleared
by the URL patterns themselves, run by RE2 (``_no_url``).
``tests/core/scan/test_plain_text_secrets.py`` holds the pairs equal to the whole scan's.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from threading import Lock
from typing import Any

from ._secret_detectors import _CONTEXT, _STEMS, _longest_first, pattern_groups, scan_text
from ._secret_prefilter import REBUILT, SLASHES, URL_NEED, free_of, prefilter_sets, runs_free

__all__ = ["PIECE", "plain_text_secrets"]

#: the length a piece is cut at (at the first quiet cut past it)
PIECE = 32 * 1024
#: no piece is shorter (``_windows`` scans a text of 400 characters or fewer whole)
_PIECE_MIN = 1024
#: how far either side of a cut is looked at (``_quiet_cut``)
_AROUND = 256
#: what the scan reads over the whole text, not near each hit: placeholders split it,
#: a PEM block runs to its end, a percent escape decodes it whole (and not at all if any
#: escape fails), npm's URL pattern runs over lines and blank space. None spans a quiet
#: cut (``PRIVATE KEY`` holds a keyword stem), and the prefilter calls no piece holding
#: one free (``_piece_free``): only the pieces it does not are searched for them.
_WHOLE_TEXT_RULES = ("<redacted:", "PRIVATE KEY", "PuTTY-User-Key", "_authToken")
#: what may not stand next to the blank a cut follows
_NEXT_TO_CUT = frozenset("\"'`=:>")
_SPACE = re.compile(r"\s")
#: the words no cut may have near it (``_quiet_cut``), in a lower-cased text
_BLOCKING = re.compile(f"{_STEMS.pattern}|{_CONTEXT.pattern}|bearer|basic|softlayer")


def plain_text_secrets(text: str, entropy: bool = True) -> tuple[tuple[str, str], ...] | None:
    """``scan_text(text, entropy)``, the same ``(secret, detector)`` pairs in the same
    order, found piece by piece (the scan keeps the longest of secrets that hold one
    another, with the first detector by name: the same over the pieces as over the
    whole); ``None`` when the text has a rule that reads it whole (see the module) or is
    not UTF-8 (a lone surrogate), for the caller to scan it whole."""
    # an ASCII text's bytes are made a piece at a time, for the pieces scanned only: the
    # whole text's (34.6 MB at 24 MB of JSON) is a fresh mapping of the C library past
    # its 32 MB threshold, 20 ms of page faults a side, where B's pieces are A's
    ascii_only = text.isascii()
    if not ascii_only:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        if len(text.lower()) != len(text):
            return None  # the keyword search then runs case-blind on the text, not lowered
    cuts = _cuts(text)
    last = _last_texts(entropy)
    held: _Pieces = {}
    found: list[tuple[str, str]] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        piece = text[start:end]
        known, hits = _held(last, piece, start, end)
        if not known:
            piece_data = piece.encode("ascii" if ascii_only else "utf-8")
            hits = _piece_secrets(piece, piece_data, entropy)
        held[(start, end)] = hits
        if hits is None:
            _keep(text, entropy, held)
            return None
        found.extend(hits)
    _keep(text, entropy, held)
    return _longest_first(found)


#: the texts met last (by id and ``entropy``), each with what its pieces hold, by where
#: they start and end: the two sides of a drift are mostly the same text, cut at the same
#: places up to their difference, so B's pieces are A's. A piece is taken for one kept
#: when the text kept holds the same characters at the same place (``str.startswith``
#: at its start: a comparison, no copy and no hash: SHA-256 of each piece's bytes took
#: 2.4 ms for 2.4 MB, 25 ms for 24 MB)
_Hits = tuple[tuple[str, str], ...] | None
_Pieces = dict[tuple[int, int], _Hits]
_SEEN: OrderedDict[tuple[int, bool], tuple[str, _Pieces]] = OrderedDict()
_SEEN_KEPT = 4
_SEEN_LOCK = Lock()


def _last_texts(entropy: bool) -> list[tuple[str, _Pieces]]:
    """The texts kept with ``entropy``, newest first."""
    with _SEEN_LOCK:
        return [kept for (_, e), kept in reversed(_SEEN.items()) if e is entropy]


def _held(last: list[tuple[str, _Pieces]], piece: str, start: int, end: int) -> tuple[bool, _Hits]:
    """``(True, what piece holds)`` (``piece``: ``text[start:end]``) from a text kept that
    has the same piece at the same place; ``(False, None)`` when none has."""
    for text, pieces in last:
        if (start, end) in pieces and text.startswith(piece, start):
            return True, pieces[(start, end)]
    return False, None


def _keep(text: str, entropy: bool, pieces: _Pieces) -> None:
    """Keeps ``text`` and what its pieces hold, the last ``_SEEN_KEPT`` texts only."""
    with _SEEN_LOCK:
        _SEEN[(id(text), entropy)] = (text, pieces)
        _SEEN.move_to_end((id(text), entropy))
        while len(_SEEN) > _SEEN_KEPT:
            _SEEN.popitem(last=False)


def _piece_secrets(piece: str, data: bytes, entropy: bool) -> tuple[tuple[str, str], ...] | None:
    """``scan_text(piece, entropy)``, ``()`` when the prefilter calls the piece free;
    ``None`` when it holds a whole-text rule."""
    if _piece_free(piece, data):
        return ()
    return None if _whole_text_rules().search(data) is not None else scan_text(piece, entropy)


@functools.cache
def _whole_text_rules() -> Any:
    """RE2's search for what makes the scan read a text whole (``_WHOLE_TEXT_RULES``, a
    percent escape), on its UTF-8 bytes."""
    import re2

    words = "|".join(re.escape(rule) for rule in _WHOLE_TEXT_RULES)
    return re2.compile(f"{words}|%[0-9A-Fa-f]{{2}}".encode())


def _cuts(text: str) -> list[int]:
    """Where ``text`` is cut, its start and end included: at quiet cuts, each piece about
    ``PIECE`` characters (longer when no quiet cut comes sooner) and none shorter than
    ``_PIECE_MIN``."""
    cuts = [0]
    last = len(text) - _PIECE_MIN
    while True:
        cut = _next_cut(text, cuts[-1] + PIECE, last)
        if cut is None:
            cuts.append(len(text))
            return cuts
        cuts.append(cut)


def _next_cut(text: str, at: int, last: int) -> int | None:
    """The first quiet cut at or after ``at`` and at most ``last``, or ``None``."""
    while at <= last:
        m = _SPACE.search(text, at, last)
        if m is None:
            return None
        cut = m.end()
        quiet = _quiet_cut(text, cut)
        if quiet is True:
            return cut
        at = cut + 1 if quiet is False else quiet
    return None


def _quiet_cut(text: str, cut: int) -> bool | int:
    """Whether no detector of ``_scan_text`` reaches across ``cut``: the scan of the two
    sides apart finds what the scan of the whole finds. ``text[cut - 1]`` is one blank
    character between two others (``_NEXT_TO_CUT``: no quote, ``=``, ``:`` or ``>``), and
    within ``_AROUND`` characters either side:

    - no stem of a keyword of the keyword plugin (``_STEMS``): its windows (40 characters
      before a keyword, 200 after) stay on their side;
    - no word the context patterns need (``_CONTEXT``: ``key``, ``pw``, ``pass``,
      ``token``): each match holds one, and runs from it over at most a separator and
      blank space to a value, so no match crosses the one blank; their windows (100
      characters before a candidate token, 10 after) may span the cut, but a match in the
      whole window lies in the windows of one side;
    - no ``bearer`` (``\\s+`` before its token) or ``basic`` word, no ``softlayer`` (its
      URL pattern's ``api.softlayer`` takes any character for the dot);
    - the id-key look-back (``key: <token>``) needs ``:``, ``=`` or a quote next to the
      blank.

    Every other detector matches no blank space (tokens, the URL patterns but npm's and
    SoftLayer's, query parameters). Not quiet for a word: where the next cut past it may be."""
    before, after = text[cut - 2], text[cut]
    if before.isspace() or after.isspace() or before in _NEXT_TO_CUT or after in _NEXT_TO_CUT:
        return False
    lo = max(0, cut - _AROUND)
    words = [m.end() for m in _BLOCKING.finditer(text[lo : cut + _AROUND].lower())]
    if not words:
        return True
    return lo + words[-1] + _AROUND  # the next cut that may be quiet


def _piece_free(piece: str, data: bytes) -> bool:
    """Whether the prefilter proves ``piece`` (``data``: its UTF-8 bytes) free of secrets,
    read as the one text of a line (``\\x00`` around its bytes, as ``_texts_line``
    rebuilds a JSON string); a piece holding a NUL is scanned.

    The prefilter calls a line with ``//`` and ``@`` a maybe (a URL pattern may match):
    a list of URLs with user names (``https://user@host/``) would be scanned whole, and
    the scan's URL patterns took 73 s over 3.3 MB of them on one line. Here the URL
    patterns themselves are asked first (``_no_url``: linear, but for npm's)."""
    sets = prefilter_sets()
    if sets is None or b"\x00" in data:
        return False
    line = REBUILT + data + REBUILT
    hits = sets.rebuilt._set.Match(line)
    if hits:
        meanings = sets.rebuilt_meanings
        if URL_NEED in {meanings[i] for i in hits}:
            if b"_authToken" in data:
                return False  # npm's pattern, over lines: the text is scanned whole
            if _no_url(piece, line):
                hits = [i for i in hits if meanings[i] not in (SLASHES, URL_NEED)]
        if hits and not free_of(line, hits, meanings, REBUILT):
            return False
    return runs_free(line, REBUILT)


@functools.cache
def _url_matchers() -> tuple[Any, ...]:
    """A search for each URL pattern of the library but npm's (which needs
    ``_authToken``: a text holding it is scanned whole), called with the piece, its UTF-8
    bytes and whether it holds a dotted or dotless I: RE2's, on the bytes, of the pattern
    made at least as loose (``_loosened``), else Python's own. Python's backtracked over
    each line from each ``//``; RE2 is linear. A verbose pattern with no blank and no
    ``#`` (Slack's) means what it says without the flag, and goes to RE2 too."""
    import re2

    out: list[Any] = []
    for _, regex in pattern_groups()[2]:
        if "_authToken" in regex.pattern:
            continue
        loose = None if _verbose_matters(regex) else _loosened(regex.pattern)
        compiled = None
        if loose is not None:
            try:
                compiled = re2.compile(("(?i)" if regex.flags & re.IGNORECASE else "") + loose)
            except re2.error:
                compiled = None
        if compiled is not None and regex.flags & re.IGNORECASE:
            # Python's case-blind [a-z] also matches these two; RE2's does not
            out.append(
                lambda piece, data, dotted, c=compiled, r=regex: (
                    c.search(data) is not None or (dotted and r.search(piece) is not None)
                )
            )
        elif compiled is not None:
            out.append(lambda piece, data, dotted, c=compiled: c.search(data) is not None)
        else:
            out.append(lambda piece, data, dotted, r=regex: r.search(piece) is not None)
    return tuple(out)


def _verbose_matters(regex: re.Pattern[str]) -> bool:
    """Whether ``regex`` is verbose and its pattern holds what the flag reads otherwise:
    blank space or a ``#``."""
    return bool(regex.flags & re.VERBOSE) and re.search(r"[\s#]", regex.pattern) is not None


_DOTTED_I = re.compile("[\u0130\u0131]")
#: Python's ``\\w`` and ``\\d`` (Unicode) as a looser RE2 class body: the ASCII ones
#: and every character that is not ASCII
_LOOSE_CLASS = {"w": r"0-9A-Za-z_\x{80}-\x{10FFFF}", "d": r"0-9\x{80}-\x{10FFFF}"}


def _loosened(pattern: str) -> str | None:
    """``pattern`` for RE2, matching wherever Python's does (and maybe more): ``\\w`` and
    ``\\d`` widened to every non-ASCII character, ``\\s`` kept only inside a negated
    class (RE2's is narrower, so the class is wider); ``None`` for anything else that is
    not an escaped sign (a lookaround, a back-reference, ``\\b``, ``\\s`` outside)."""
    if re.search(r"\(\?<?[=!]", pattern):
        return None
    out: list[str] = []
    negated: bool | None = None  # outside a class; else whether the class is negated
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1 : i + 2]
            if e in _LOOSE_CLASS:
                if negated:
                    return None  # a negated class would narrow
                body = _LOOSE_CLASS[e]
                out.append(body if negated is False else f"[{body}]")
            elif e == "s" and negated is True:
                out.append(r"\s")
            elif e.isalnum() or not e:
                return None
            else:
                out.append("\\" + e)
            i += 2
            continue
        if negated is None and c == "[":
            negated = pattern[i + 1 : i + 2] == "^"
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            continue
        if negated is not None and c == "]":
            negated = None
        out.append(c)
        i += 1
    return "".join(out)


def _no_url(piece: str, data: bytes) -> bool:
    """Whether no URL pattern of the scan matches ``piece`` (``data``: its UTF-8 bytes):
    ``_url_hits`` finds nothing in it."""
    dotted = not data.isascii() and _DOTTED_I.search(piece) is not None
    return not any(matches(piece, data, dotted) for matches in _url_matchers())
