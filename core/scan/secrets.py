"""Secret scanning: where a cassette holds a credential (``check``; ``redact`` uses the same scan).

What counts as a secret, on every string in an entry's ``args``, ``response`` / ``error``
and extra fields (``request_headers`` of an imported VCR cassette, say), at any depth, and
inside JSON held in a string (a request body, a tool's text result):

- the patterns of the detect-secrets library (Yelp/detect-secrets, its plugins run on
  strings in memory): provider key formats (AWS, GitHub, GitLab, OpenAI, Slack, Stripe,
  JWT, ...), private keys (the whole PEM block is the secret), passwords in URLs
  (``https://user:pw@host``), ``password = "..."`` assignments in text, and high-entropy
  base64/hex strings (its Shannon-entropy limits: 4.5 and 3.0 bits per character, for
  tokens of at least 20 and 16 characters; UUIDs and sequential strings excepted, and
  values under id-like keys such as ``request_id`` or ``etag``);
- bearer tokens (``Bearer <token>`` anywhere in a string);
- key-name rules on top: the string under a key whose last word is ``authorization``,
  ``token``, ``password``/``passwd``/``pwd``, ``secret``, ``cookie``, ``credentials`` or
  ``api key`` (``Authorization``, ``x-api-key``, ``access_token``, ``client_secret``,
  ``Set-Cookie``; not ``max_tokens`` or ``token_type``), and URL query parameters named so
  (``?access_token=...``). A scheme word (``Bearer``, ``Basic``) is kept, the rest is the
  secret;
- values at the paths listed under ``redact.paths`` in the config (``kind`` ``redact_path``).

Not secrets: values that already look masked (``<redacted:kind:hash8>`` placeholders,
``XXX``/``***`` runs, ``<...>``, ``{{...}}``, ``${...}``, ``REDACTED``), empty strings,
numbers and booleans, and binary envelopes (``{"_binary": true, ...}``).

The config (``[tool.cassette.redact]`` in ``pyproject.toml``, ``[redact]`` in
``cassette.toml``)::

    [tool.cassette.redact]
    record = true                          # recording redacts as it writes
    paths = ["$.args.user.email"]          # always redacted (and reported while present)
    allow = ["$.response.build_sha"]       # never a finding (a path pattern, ** and * work)
    allow_hashes = ["3f2a1b9c"]            # a value marked as not a secret, by its hash

``redact = true`` directly under ``[tool.cassette]`` is short for ``record = true``. A
finding's hash (``hash8``) is the first 8 hex digits of SHA-256 over the secret's UTF-8
text: the same secret has the same hash in every file, so an allowed hash stays allowed.
Values are never shown whole: ``mask`` keeps at most 4 characters and a quarter of the value.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..format.batching import batch_full
from ..format.findings import Finding
from ..format.jobs import Progress
from ..format.jsonpath import (
    ANY_DEPTH,
    JSONPathError,
    Part,
    Segment,
    format_path,
    iter_leaves,
    parse_path,
    segment_matches,
)
from ..keys.config import ProjectConfig
from ..keys.normalize import NormalizationConfigError

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.entry import Entry

__all__ = [
    "PLACEHOLDER_RE",
    "SecretConfig",
    "SecretHit",
    "classify",
    "hash8",
    "load_secret_config",
    "mask",
    "mask_value",
    "scan_entry",
    "scan_value",
    "secret_findings",
    "secret_scan_job",
]

#: the placeholder ``redact`` writes: ``<redacted:KIND:HASH8>``
PLACEHOLDER_RE = re.compile(r"<redacted:[a-z0-9_]+:[0-9a-f]{8}>")

# -- key-name rules --------------------------------------------------------------------------
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: the last word of a key that names a secret
_SECRET_LAST_WORDS = frozenset(
    {
        "authorization",
        "token",
        "password",
        "passwd",
        "pwd",
        "secret",
        "cookie",
        "credentials",
        "apikey",
        "passphrase",
    }
)
#: ``<word> key`` pairs that name a secret (``api_key``, ``x-api-key``, ``secret_key``)
_KEY_PREFIXES = frozenset({"api", "secret", "private", "access", "auth", "client", "signing"})
#: last words of keys whose values are identifiers, never scanned for entropy
_ID_WORDS = frozenset(
    {"id", "ids", "uuid", "guid", "etag", "hash", "digest", "sha", "checksum", "fingerprint"}
)
_SCHEME = re.compile(r"(?i)^\s*(bearer|basic|token|bot|digest)\s+")
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)")
#: a URL query parameter; its value stops at a NUL too, which ends a text in the prefilter's
#: rebuilt line (``_texts_line``), so one text's value never runs into the next text
_QUERY = re.compile(r"[?&;]([A-Za-z0-9_.\-]+)=([^&#\s\"'<>\x00]+)")
_MASKED = re.compile(
    r"(?is)^(?:.*(?:xxx|\*\*\*|•••).*|<[^<>]*>|\{\{.*\}\}|\$\{.*\}|%\([a-z_]+\)s"
    r"|\[?(?:redacted|filtered|masked|hidden|removed)\]?)$"
)
_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
#: base64-ish runs the entropy test looks at (the library's charset)
_B64_RUN = re.compile(r"[A-Za-z0-9+/\\\-_=]{16,}")
#: longer runs are data (an image, a binary body), not a credential
_ENTROPY_MAX = 512
#: a token longer than this is data: the library's token patterns are not run on it
_TOKEN_MAX = 8192
_HEX = re.compile(r"[0-9a-fA-F]+\Z")
_B64_MIN, _HEX_MIN = 20, 16
#: JSON text in a string is parsed and scanned inside, up to this size (characters)
_JSON_TEXT_MAX = 8_000_000


def key_words(key: str) -> list[str]:
    """``"x-api-key"`` -> ``["x", "api", "key"]``; ``"accessToken"`` -> ``["access", "token"]``."""
    return [w.lower() for w in _WORDS.findall(key)]


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a key names a secret (the key-name rules; see the module docstring)."""
    words = key_words(key)
    if not words:
        return False
    last = words[-1]
    if last in _SECRET_LAST_WORDS:
        return True
    if last == "key" and len(words) > 1 and words[-2] in _KEY_PREFIXES:
        return True
    return "".join(words[-2:]) == "apikey"


@functools.lru_cache(maxsize=4096)
def _is_id_key(key: str) -> bool:
    words = key_words(key)
    return bool(words) and words[-1] in _ID_WORDS


def looks_masked(text: str) -> bool:
    """Whether ``text`` is already a placeholder or a mask, not a secret."""
    text = text.strip()
    return not text or PLACEHOLDER_RE.fullmatch(text) is not None or bool(_MASKED.match(text))


# -- detect-secrets --------------------------------------------------------------------------
@functools.cache
def _plugins() -> tuple[list[Any], Any, Any, Any]:
    """The library's regex plugins (instances), its keyword plugin, and its two entropy
    plugins. Public IPs are not secrets here; the keyword and entropy plugins are run apart
    (the keyword one needs no file type, the entropy ones run on every token, unquoted)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )
    from detect_secrets.plugins.ip_public import IPPublicDetector
    from detect_secrets.plugins.keyword import KeywordDetector

    apart: tuple[type, ...] = (
        IPPublicDetector,
        KeywordDetector,
        Base64HighEntropyString,
        HexHighEntropyString,
    )
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    regex_plugins = [cls() for cls in classes if cls not in apart]
    regex_plugins.sort(key=lambda p: p.secret_type)
    return regex_plugins, KeywordDetector(), Base64HighEntropyString(), HexHighEntropyString()


#: the words every context pattern of the library needs before its value
_CONTEXT = re.compile("key|pw|pass|token")


def _token_hits(
    token: str, regexes: list[tuple[str, re.Pattern[str]]], found: list[tuple[str, str]]
) -> None:
    for slug, regex in regexes:
        for m in regex.finditer(token):
            secret = _plugin_secret(m, token)
            if secret and not looks_masked(secret):
                found.append((secret, slug))


@functools.cache
def _any_token_pattern() -> re.Pattern[str]:
    """One search that matches where any context-free pattern of the library matches."""
    parts = []
    for _, regex in _pattern_groups()[0]:
        flags = "i" if regex.flags & re.IGNORECASE else ""
        parts.append(f"(?{flags}:{regex.pattern})" if flags else f"(?:{regex.pattern})")
    return re.compile("|".join(parts))


@functools.cache
def _pattern_groups() -> tuple[
    list[tuple[str, re.Pattern[str]]],
    list[tuple[str, re.Pattern[str]]],
    list[tuple[str, re.Pattern[str]]],
]:
    """The library's regex patterns in three groups, by what they need around the secret:
    nothing (run on each candidate token), a keyword before it (``(?:key|pwd|...)``, run
    in windows around candidates), or a URL (``://``, run on texts holding ``//``)."""
    token, context, url = [], [], []
    for plugin in _plugins()[0]:
        slug = _slug(plugin.secret_type)
        for regex in plugin.denylist:
            if slug == "private_key":
                continue  # the whole PEM block, found apart
            pattern = regex.pattern
            if "(?:key|pwd" in pattern or "(?<=\\W)" in pattern:
                context.append((slug, regex))
            elif "://" in pattern or "\\/\\/" in pattern or "http" in pattern:
                url.append((slug, regex))
            else:
                token.append((slug, regex))
    return token, context, url


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


@functools.cache
def _heuristics() -> tuple[Any, Any, Any]:
    from detect_secrets.filters.heuristic import (
        is_potential_uuid,
        is_sequential_string,
        is_templated_secret,
    )

    return is_sequential_string, is_potential_uuid, is_templated_secret


def _entropy_hit(token: str) -> str | None:
    """``"high_entropy_hex"``/``"high_entropy_base64"`` when the library's entropy plugins
    call ``token`` random (over their limits), else ``None``."""
    _, _, b64, hexp = _plugins()
    sequential, uuid_like, _ = _heuristics()
    distinct = len(set(token))
    if _HEX.match(token):
        if (
            distinct < 9
            or len(token) < _HEX_MIN
            or hexp.calculate_shannon_entropy(token) <= hexp.entropy_limit
        ):
            return None
        kind = "high_entropy_hex"
    else:
        if (
            distinct < 23
            or len(token) < _B64_MIN
            or b64.calculate_shannon_entropy(token) <= b64.entropy_limit
        ):
            return None
        kind = "high_entropy_base64"
    if sequential(token) or uuid_like(token):
        return None
    return kind


def scan_text(text: str, entropy: bool = True) -> tuple[tuple[str, str], ...]:
    """The secrets inside one string (see ``_scan_text``); strings up to 4 KB, the ones
    that repeat across entries (arg values, short results), are remembered."""
    if len(text) <= _CACHED_MAX:
        return _scan_text_cached(text, entropy)
    return _scan_text(text, entropy)


_CACHED_MAX = 4096


@functools.lru_cache(maxsize=32768)
def _scan_text_cached(text: str, entropy: bool) -> tuple[tuple[str, str], ...]:
    return _scan_text(text, entropy)


def _scan_text(text: str, entropy: bool = True) -> tuple[tuple[str, str], ...]:
    """The secrets inside one string, as ``(secret, detector)`` pairs, longest first,
    without one that is part of another. ``entropy=False`` leaves out the entropy test
    (values under id-like keys). Placeholders are never secrets.

    The library's patterns run on windows of the text around what could start a secret
    (a token of 8+ characters with a digit and a letter, or of 20+; a keyword of its keyword plugin;
    ``://``; ``xox``), not over all of it: prose without such a token costs one regex
    pass (see ``benchmarks/bench_secrets.py``)."""
    if "<redacted:" in text and PLACEHOLDER_RE.search(text):
        found: list[tuple[str, str]] = []
        for piece in PLACEHOLDER_RE.split(text):
            found.extend(scan_text(piece, entropy))
        return _longest_first(found)
    found = []
    if "PRIVATE KEY" in text or "PuTTY-User-Key" in text:
        blocks = _PEM.findall(text)
        found.extend((b, "private_key") for b in blocks or [text])
    spans: list[tuple[int, int]] = []
    any_token = _any_token_pattern()
    digit, letter = _DIGIT.search, _LETTER.search
    for m in _CANDIDATE.finditer(text):
        token = m.group(0)
        if len(token) > _TOKEN_MAX:
            continue  # data (a blob, a padded field), not a credential
        if len(token) < 20 and not (digit(token) and letter(token)):
            continue
        spans.append(m.span())
        # patterns that need no context, on the token; one combined search first
        if any_token.search(token) is not None:
            _token_hits(token, _pattern_groups()[0], found)
        if entropy and len(token) >= _HEX_MIN:
            for run_m in _B64_RUN.finditer(token):
                run = run_m.group(0)
                if len(run) <= _ENTROPY_MAX and not _after_id_key(text, m.start() + run_m.start()):
                    kind = _entropy_hit(run)
                    if kind is not None:
                        found.append((run, kind))
    # patterns with a keyword before the value (``aws_secret = "..."``): around candidates,
    # when one of their keywords is there
    for window in _windows(text, spans, 100, 10):
        lowered_window = window.lower()
        if _CONTEXT.search(lowered_window):
            for slug, regex in _pattern_groups()[1]:
                for m in regex.finditer(window):
                    secret = _plugin_secret(m, window)
                    if secret and not looks_masked(secret):
                        found.append((secret, slug))
    if "//" in text:  # URL patterns (passwords in URLs, webhook and registry URLs)
        for slug, regex in _pattern_groups()[2]:
            for m in regex.finditer(text):
                secret = _plugin_secret(m, text)
                if secret and not looks_masked(secret):
                    found.append((secret, slug))
    lowered = text.lower()
    keyword_spans: list[tuple[int, int]] = []
    if _STEMS.search(lowered):
        # the plugin's keywords are lower case: a case-sensitive search of the lowered
        # text is many times faster than an IGNORECASE one (same offsets unless lower()
        # changed the length, then the slow search)
        if len(lowered) == len(text):
            keyword_spans = [m.span() for m in _KEYWORDS(False).finditer(lowered)]
        else:
            keyword_spans = [m.span() for m in _KEYWORDS(True).finditer(text)]
    if keyword_spans:
        _, _, templated = _heuristics()
        for window in _windows(text, keyword_spans, 40, 200):
            if '"' not in window and "'" not in window and "`" not in window:
                continue  # each of the plugin's (quotes-required) patterns needs a quote
            for secret in _plugins()[1].analyze_string(window):
                if secret and not looks_masked(secret) and not templated(secret):
                    found.append((secret, "password_assignment"))
    if "earer" in text or "EARER" in text:
        for m in _BEARER.finditer(text):
            if not looks_masked(m.group(1)):
                found.append((m.group(1), "bearer_token"))
    if "=" in text:
        for m in _QUERY.finditer(text):
            if is_secret_key(m.group(1)) and not looks_masked(m.group(2)):
                found.append((m.group(2), "key_name"))
    return _longest_first(found)


#: what could start a secret: a run of token characters (ASCII)
_CANDIDATE = re.compile(r"[A-Za-z0-9+/=_.\-:~]{8,}")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")
#: a substring of every keyword of the keyword plugin (a cheap test before its regex)
_STEMS = re.compile("key|pass|pwd|secret|contrase")


@functools.cache
def _KEYWORDS(ignore_case: bool) -> re.Pattern[str]:
    """The keyword plugin's keywords, as one search (where its assignments can start)."""
    from detect_secrets.plugins.keyword import DENYLIST

    return re.compile("|".join(DENYLIST), re.IGNORECASE if ignore_case else 0)


_KEY_BEFORE = re.compile(r"""["']?([A-Za-z0-9_.\-]+)["']?\s*[:=]\s*["']?\Z""")


def _after_id_key(text: str, at: int) -> bool:
    """Whether the token at ``at`` is the value of an id-like key written in the text
    (``"id": "chatcmpl-..."``, ``request_id=...``): an identifier, not a credential."""
    m = _KEY_BEFORE.search(text, max(0, at - 60), at)
    return m is not None and _is_id_key(m.group(1))


def _windows(text: str, spans: list[tuple[int, int]], before: int, after: int) -> list[str]:
    """The parts of ``text`` around ``spans`` (``before``/``after`` characters more),
    overlapping ones merged; the whole text when it is short."""
    if not spans:
        return []
    if len(text) <= 400:
        return [text]
    spans.sort()
    out: list[str] = []
    cur_start, cur_end = max(spans[0][0] - before, 0), spans[0][1] + after
    for s, e in spans[1:]:
        if s - before <= cur_end:
            cur_end = max(cur_end, e + after)
        else:
            out.append(text[cur_start:cur_end])
            cur_start, cur_end = max(s - before, 0), e + after
    out.append(text[cur_start:cur_end])
    return out


_SPACE = re.compile(r"\s")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+/=")


def _plugin_secret(m: re.Match[str], text: str) -> str:
    """The secret in a match of one of the library's patterns: the group that holds it
    when the pattern captures one after some context (``://user:(pw)@``), else the whole
    match (``(ghp)_...`` captures only the prefix), without the delimiters some patterns
    include, and carried to the end of the token when the pattern stops short (a JWT's
    lazy signature)."""
    start, end = m.span()
    for g in range(1, (m.re.groups or 0) + 1):
        if m.start(g) > start and m.group(g):
            start, end = m.span(g)
            break
    while start < end and text[start] in " \t\r\n\"'=:":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    cut = _SPACE.search(text, start, end)  # a token never holds whitespace (npm's ".+")
    if cut is not None:
        end = cut.start()
    if end > start and text[end - 1] in ".":
        while end < len(text) and text[end] in _TOKEN_CHARS:
            end += 1
    return text[start:end]


def _longest_first(found: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    if not found:
        return ()
    out: list[tuple[str, str]] = []
    for secret, kind in sorted(set(found), key=lambda p: (-len(p[0]), p[0], p[1])):
        if not any(secret in longer for longer, _ in out):
            out.append((secret, kind))
    return tuple(out)


# -- the line prefilter ----------------------------------------------------------------------
# ``check`` scans every entry of a cassette; most lines of a real one hold no secret, and
# the bytes of a line can prove it without walking its values: one pass of RE2's
# multi-pattern matcher (google-re2, linear time) over the line looks for a necessary
# condition of each source of hits in ``_scan_string`` / ``_scan_text``. When none is
# there, ``scan_entry`` of the line's entry finds nothing; a property test holds the two
# equal, and the full scan stays the definition of a secret.

#: each JSON string of a rebuilt line in turn (``\x00`` delimits them): an object key
#: (followed by ``:``) is captured, a value is matched as the empty capture
_JSON_KEY = re.compile("\x00([^\x00]*)\x00\\s*:|\x00[^\x00]*\x00")
#: a key the key-name rules name holds one of these, in any case: its last word, or the
#: last two joined ("apikey" split anywhere holds "key" or "apik")
_KEY_STEMS = "key|token|pass|pwd|secret|cookie|credentials|authorization|apik"
#: the bytes of ``_B64_RUN``'s class but the backslash (the scan's runs are taken from
#: its candidates, ``_CANDIDATE``, which hold none)
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


@functools.cache
def _prefilter() -> tuple[Any, tuple[str, ...]] | None:
    """The RE2 set and, per pattern index, what a match means; ``None`` without RE2."""
    try:
        import re2
    except ImportError:  # pragma: no cover - a dependency; without it, no prefilter
        return None
    patterns: list[tuple[str, str]] = [
        # placeholders, PEM blocks, bearer words (``_scan_text``'s own tests)
        (_MAYBE, r"<redacted:|PRIVATE KEY|PuTTY-User-Key|earer|EARER"),
        # Python's case-insensitive [a-z] also matches these two; RE2's does not
        (_MAYBE, "\u0130|\u0131"),
        (_KEY, rf"\x00[^\x00]*(?i:{_KEY_STEMS})[^\x00]*\x00\s*:"),
        # a key of JSON held in a text (its own quotes are the only ones in the line)
        (_MAYBE, rf'"[^"\x00]*(?i:{_KEY_STEMS})[^"\x00]*"\s*:'),
        (_QUERY_NAME, rf"[?&;][A-Za-z0-9_.\-]*(?i:{_KEY_STEMS})[A-Za-z0-9_.\-]*="),
        (_SLASHES, r"//"),
        # the URL patterns: basic-auth and Cloudant need "@", npm "_authToken", the rest
        # their hosts
        (_URL_NEED, r"@|_authToken|(?i:slack|softlayer)"),
        (_QUOTE, r"['`\"]"),
        (_STEM, r"(?i:key|pass|pwd|secret|contrase)"),
        # the context patterns, loosened: their keywords, separators and value characters
        # (at least the shortest value); the AWS one has no lookaround
        (_MAYBE, _CONTEXT_LOOSE),
    ]
    for _, regex in _pattern_groups()[1]:
        if "(?<" not in regex.pattern and "(?!" not in regex.pattern:
            flags = "(?i)" if regex.flags & re.IGNORECASE else ""
            patterns.append((_MAYBE, flags + regex.pattern))
    for _, regex in _pattern_groups()[0]:
        flags = "(?i)" if regex.flags & re.IGNORECASE else ""
        patterns.append((_MAYBE, flags + _loosened(regex.pattern)))
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
    if not matcher.Match(b"PRIVATE KEY") or not matcher.Match(b"\x00api_key\x00:"):
        return None
    return matcher, tuple(meaning for meaning, _ in patterns)


_entropy_seen: dict[bytes, bool] = {}
#: only runs this short are remembered (a digest, a token), at most this many of them
_ENTROPY_SEEN_LENGTH = 128
_ENTROPY_SEEN_COUNT = 65536


def _run_may_be_entropic(run: bytes) -> bool:
    hit = _entropy_seen.get(run)
    if hit is None:
        hit = _entropy_hit(run.decode("ascii")) is not None
        # short runs only (a digest, a token): the cache lives as long as the process
        if len(run) <= _ENTROPY_SEEN_LENGTH and len(_entropy_seen) < _ENTROPY_SEEN_COUNT:
            _entropy_seen[run] = hit
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
    if b"\x00" in raw:
        return None
    line = raw.replace(b'"', b"\x00")
    if b"\\" not in line:
        return line
    pieces = line.split(b"\\")
    out = [pieces[0]]
    backslash = False
    i, n = 1, len(pieces)
    while i < n:
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
        if piece[0] != 0x75 or _HEX4.match(piece, 1) is None:  # 0x75: u
            return None
        code = int(piece[1:5], 16)
        rest = piece[5:]
        if 0xD800 <= code <= 0xDBFF and not rest and i + 1 < n:  # a surrogate pair?
            low = pieces[i + 1]
            if low[:1] == b"u" and _HEX4.match(low, 1) is not None:
                second = int(low[1:5], 16)
                if 0xDC00 <= second <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + second - 0xDC00
                    rest = low[5:]
                    i += 1
        if 0xD800 <= code <= 0xDFFF or code in (0, 0x5C):
            return None  # a lone surrogate, a NUL or a backslash: see above
        out.append(chr(code).encode("utf-8"))
        out.append(rest)
        i += 1
    line = b"".join(out)
    at = line.find(b"\\") if backslash else -1
    while at >= 0:  # each text holding a backslash, found from the backslash
        start = line.rfind(b"\x00", 0, at) + 1
        end = line.find(b"\x00", at)
        end = len(line) if end < 0 else end
        if line.find(b"{", start, end) >= 0 or line.find(b"[", start, end) >= 0:
            return None
        at = line.find(b"\\", end)
    return line


#: the form of a digest the engine writes (``digest.DIGEST_PREFIX`` and 16 hex digits)
_DIGEST_FORM = re.compile(r"sha256:[0-9a-f]{16}")


def _without_stored_digest(raw: bytes, stored: str) -> bytes:
    """``raw`` without its top-level ``"args_digest":"<stored>"`` member when that is
    certain to be the one cut (the scan never reads that field, and its hex run would
    cost the runs' test on every line), else ``raw`` as it is (the prefilter then sees
    more than the scan, which is safe). Certain: ``stored`` has the engine's digest form
    and the line spells the key ``"args_digest"`` once, not after a backslash (so not
    inside another text, as in a key ``foo\\"args_digest``)."""
    if _DIGEST_FORM.fullmatch(stored) is None or raw.count(b'"args_digest"') != 1:
        return raw
    member = b'"args_digest":"' + stored.encode("ascii") + b'"'
    at = raw.find(member)
    if at < 0:  # json.dumps' spacing
        member = b'"args_digest": "' + stored.encode("ascii") + b'"'
        at = raw.find(member)
    if at <= 0 or raw[at - 1] == 0x5C:  # 0x5C: a backslash
        return raw
    return raw[:at] + raw[at + len(member) :]


def line_secret_free(raw: bytes, stored_digest: str | None = None) -> bool:
    """Whether the bytes of one cassette line prove that ``scan_entry`` (without a config's
    ``paths``) finds no secret in its entry: ``True`` means none; ``False`` means "maybe"
    (scan the entry). ``stored_digest``: the entry's top-level ``args_digest`` (a field the
    scan does not look at), left out of the test when given.

    Conservative: a line whose texts cannot be rebuilt as substrings of one line
    (``_texts_line``: an escaped backslash, say) is a maybe. Otherwise the line is a maybe
    when it holds a key the key-name rules name (or a stem of one in a key of JSON held in
    a text), a query parameter they name, a placeholder, a PEM block, a URL with what a URL
    pattern needs, a bearer word, a keyword with a quote (``'`` or a backtick), what one of
    the library's token or context patterns matches (loosened), or a base64/hex run over
    the entropy limits. Raises nothing (a line that is not UTF-8 is a maybe)."""
    return lines_secret_free([raw], [stored_digest])[0]


def lines_secret_free(raws: list[bytes], stored_digests: list[str | None]) -> list[bool]:
    """``line_secret_free`` of each line (``stored_digests``: one per line, or ``None``),
    the same answers. Each step runs over all the lines before the next one starts: RE2's
    automaton then stays in the CPU's caches (measured on the 100k text cassette: its match
    took 26 us a line between parses, 12 us in a row)."""
    built = _prefilter()
    if built is None:
        return [False] * len(raws)
    matcher, meanings = built
    rebuilt = [
        _texts_line(raw if stored is None else _without_stored_digest(raw, stored))
        for raw, stored in zip(raws, stored_digests, strict=True)
    ]
    match = matcher.Match
    found = [None if line is None else match(line) for line in rebuilt]
    return [
        line is not None and (not hits or _free_of(line, hits, meanings)) and _runs_free(line)
        for line, hits in zip(rebuilt, found, strict=True)
    ]


def _free_of(raw: bytes, found: list[int], meanings: tuple[str, ...]) -> bool:
    """Whether what RE2's set matched on a rebuilt line (``found``: the indexes of its
    patterns, not empty) leaves it free of a secret; its runs are ``_runs_free``'s."""
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
        for key in set(_JSON_KEY.findall(line)):
            if is_secret_key(key):
                return False
    if _QUERY_NAME in seen:
        for m in _QUERY.finditer(line):
            if is_secret_key(m.group(1)):
                return False
    return True


def _runs_free(raw: bytes) -> bool:
    """Whether no base64 or hex run of a rebuilt line may be over the entropy limits
    where the scan tests it. Not a pattern of RE2's set: its counted repetition made the
    set's automaton twice as slow on every line (measured: 10 us a line, 5.7 without)."""
    for start, end in _candidate_runs(raw):
        run = raw[start:end]
        # the entropy test's own first exits (``_entropy_hit``): fewer than 9
        # distinct characters, or fewer than 23 in a run that is not all hex
        distinct = len(set(run))
        if distinct < 9 or (distinct < 23 and _HEX_BYTES.fullmatch(run) is None):
            continue
        if not _entropy_skipped(raw, start) and _run_may_be_entropic(run):
            return False
    return True


def _entropy_skipped(line: bytes, at: int) -> bool:
    """Whether the scan never tests the entropy of a run at ``at`` of a rebuilt line: it
    is outside every text (a number), or in a text (not JSON) that is the value of an
    id-like key (``request_id``, ``etag``, ...: ``_scan_string``'s ``entropy=False``)."""
    opened = line.count(b"\x00", 0, at)
    if not opened & 1:
        return True  # not in a string: numbers are never scanned
    start = line.rfind(b"\x00", 0, at)
    end = line.find(b"\x00", at)
    try:
        text = line[start + 1 : end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    if text.lstrip()[:1] in ("{", "["):
        return False  # JSON in a text: its leaves have keys of their own
    key_end = line.rfind(b"\x00", 0, start)
    if key_end < 0:
        return False
    between = line[key_end + 1 : start].strip(b" \t\n\r")
    if between != b":":
        return False  # a list item, or not an object's value
    key_start = line.rfind(b"\x00", 0, key_end)
    try:
        key = line[key_start + 1 : key_end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _is_id_key(key)


@functools.lru_cache(maxsize=65536)
def classify(secret: str) -> str:
    """The kind a placeholder names for ``secret``: a function of the value alone, so the
    same secret gets the same placeholder wherever it was found (``github_token``,
    ``private_key``, ``json_web_token``, ..., ``high_entropy_base64``; else ``secret``)."""
    regex_plugins, _, _, _ = _plugins()
    if "PRIVATE KEY" in secret or "PuTTY-User-Key" in secret:
        return "private_key"
    for plugin in regex_plugins:
        for _ in plugin.analyze_string(secret):
            return _slug(plugin.secret_type)
    if _B64_RUN.fullmatch(secret) and len(secret) <= _ENTROPY_MAX:
        kind = _entropy_hit(secret)
        if kind is not None:
            return kind
    return "secret"


def value_hash(secret: str) -> str:
    """SHA-256 (hex) over the secret's UTF-8 text."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def hash8(secret: str) -> str:
    """The first 8 hex digits of ``value_hash``: what findings show and placeholders carry."""
    return value_hash(secret)[:8]


def mask(secret: str) -> str:
    """The secret with at most 4 characters (and at most a quarter of it) left, and its
    length: ``"ghp_…(40 chars)"``, ``"…(6 chars)"``. Never the whole value."""
    keep = min(4, len(secret) // 4)
    shown = "".join(c if c.isprintable() else "?" for c in secret[:keep])
    return f"{shown}…({len(secret)} chars)"


# -- config ----------------------------------------------------------------------------------
def _parse_pattern(text: str) -> tuple[Segment, ...]:
    return parse_path(text, pattern=True)


def path_matches(pattern: tuple[Segment, ...], parts: tuple[Part, ...]) -> bool:
    """Whether ``pattern`` matches ``parts`` or one of its ancestors (a rule on a node
    covers everything below it). ``**`` matches any number of levels."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head is ANY_DEPTH:
        return any(path_matches(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts or not segment_matches(head, parts[0]):
        return False
    return path_matches(rest, parts[1:])


@dataclass(frozen=True)
class SecretConfig:
    """The scan and redaction settings (see the module docstring).

    Attributes:
        record: recording redacts as it writes (``record = true`` / ``redact = true``).
        paths: path patterns whose values are always redacted (entry-rooted: ``$.args...``).
        allow: path patterns where nothing is a finding.
        allow_hashes: hex prefixes (8 to 64 digits) of ``value_hash`` of allowed values.
        source: the config file, for messages.
    """

    record: bool = False
    paths: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    allow_hashes: tuple[str, ...] = ()
    source: str | None = field(default=None, compare=False)
    _paths: tuple[tuple[Segment, ...], ...] = field(init=False, repr=False, compare=False)
    _allow: tuple[tuple[Segment, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_paths", tuple(_parse_pattern(p) for p in self.paths))
        object.__setattr__(self, "_allow", tuple(_parse_pattern(p) for p in self.allow))

    def allowed(self, parts: tuple[Part, ...], secret: str) -> bool:
        """Whether a value at ``parts`` is marked as not a secret (by path or by hash)."""
        if any(path_matches(p, parts) for p in self._allow):
            return True
        if self.allow_hashes:
            full = value_hash(secret)
            return any(full.startswith(h) for h in self.allow_hashes)
        return False

    def redact_path(self, parts: tuple[Part, ...]) -> bool:
        """Whether a value at ``parts`` is under a ``redact.paths`` pattern."""
        return any(path_matches(p, parts) for p in self._paths)

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], source: str | None = None) -> SecretConfig:
        """From the ``redact`` table; raises ``NormalizationConfigError`` naming the field."""

        def bad(fld: str, why: str) -> NormalizationConfigError:
            return NormalizationConfigError(source, None, f"redact.{fld}", why)

        known = {"record", "paths", "allow", "allow_hashes"}
        for key in table:
            if key not in known:
                raise bad(key, f"unknown key; expected one of {', '.join(sorted(known))}")
        record = table.get("record", False)
        if not isinstance(record, bool):
            raise bad("record", "expected true or false")
        lists: dict[str, tuple[str, ...]] = {}
        for name in ("paths", "allow", "allow_hashes"):
            value = table.get(name, [])
            if not isinstance(value, list):
                raise bad(name, f"expected a list of strings, got {type(value).__name__}")
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item:
                    raise bad(f"{name}[{i}]", "expected a non-empty string")
                if name == "allow_hashes":
                    if not re.fullmatch(r"(?:sha256:)?[0-9a-fA-F]{8,64}", item):
                        raise bad(f"{name}[{i}]", "expected 8 to 64 hex digits (a finding's hash)")
                else:
                    try:
                        _parse_pattern(item)
                    except JSONPathError as exc:
                        raise bad(f"{name}[{i}]", str(exc)) from None
            lists[name] = tuple(value)
        hashes = tuple(h.lower().removeprefix("sha256:") for h in lists["allow_hashes"])
        return cls(record, lists["paths"], lists["allow"], hashes, source=source)


def load_secret_config(
    config: ProjectConfig | str | Path | None = None, root: str | Path | None = None
) -> SecretConfig:
    """The redaction settings from the project's config (``config``, a read
    ``ProjectConfig``, else the file ``ProjectConfig.load(config, root)`` finds):
    ``[tool.cassette.redact]`` or ``redact = true`` under ``[tool.cassette]`` in
    ``pyproject.toml``; ``[redact]`` or a top-level ``redact = true`` in ``cassette.toml``.
    No config gives the defaults (scan everything, allow nothing, record unredacted).

    Raises:
        NormalizationConfigError: a missing named config, bad TOML, or a bad field.
    """
    project = config if isinstance(config, ProjectConfig) else ProjectConfig.load(config, root)
    path, value = project.path, project.redact
    if path is None:
        return SecretConfig()
    if value is None:
        return SecretConfig(source=str(path))
    if isinstance(value, bool):
        return SecretConfig(record=value, source=str(path))
    if not isinstance(value, Mapping):
        raise NormalizationConfigError(path, None, "redact", "expected true/false or a table")
    return SecretConfig.from_mapping(value, source=str(path))


def app_secret_config() -> SecretConfig:
    """The project's redaction settings for a screen: ``load_secret_config()``, or the
    defaults when the config cannot be read (the screen shows the lint's own error)."""
    try:
        return load_secret_config()
    except NormalizationConfigError:
        return SecretConfig()


# -- scanning --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret in an entry.

    Attributes:
        parts: where the string holding it is, from the entry (``("args", "headers",
            "Authorization")``).
        secret: the secret's text (a part of that string, or all of it).
        detector: what found it (``key_name``, ``bearer_token``, ``github_token``,
            ``private_key``, ``high_entropy_base64``, ``redact_path``, ...).
        inner: the path inside JSON text held in that string, or ``None``.
    """

    parts: tuple[Part, ...]
    secret: str
    detector: str
    inner: tuple[Part, ...] | None = None

    @property
    def path(self) -> str:
        return format_path(self.parts)

    @property
    def hash8(self) -> str:
        return hash8(self.secret)

    @property
    def masked(self) -> str:
        return mask(self.secret)


def _is_envelope(node: Any) -> bool:
    return isinstance(node, dict) and node.get("_binary") is True


def _last_key(parts: tuple[Part, ...]) -> str | None:
    for p in reversed(parts):
        if isinstance(p, str):
            return p
    return None


def _scan_string(
    text: str, key: str | None, depth: int = 0
) -> list[tuple[str, str, tuple[Part, ...] | None]]:
    """``(secret, detector, inner path)`` for one string found under ``key``."""
    if not text or text.isspace():
        return []
    if key is not None and is_secret_key(key) and not PLACEHOLDER_RE.search(text):
        m = _SCHEME.match(text)
        secret = text[m.end() :] if m else text
        if secret.strip() and not looks_masked(secret):
            bearer = m is not None and m.group(1).lower() == "bearer"
            return [(secret, "bearer_token" if bearer else "key_name", None)]
        return []
    head = text.lstrip()[:1]
    if head in ("{", "[") and depth < 4 and len(text) <= _JSON_TEXT_MAX:
        try:
            inner_value = orjson.loads(text)
        except orjson.JSONDecodeError:
            inner_value = None
        if isinstance(inner_value, dict | list):
            out: list[tuple[str, str, tuple[Part, ...] | None]] = []
            for parts, leaf in iter_leaves(inner_value, skip=_is_envelope):
                if isinstance(leaf, str):
                    for secret, detector, _ in _scan_string(leaf, _last_key(parts), depth + 1):
                        out.append((secret, detector, parts))
            return out
    entropy = key is None or not _is_id_key(key)
    return [(s, d, None) for s, d in scan_text(text, entropy)]


def scan_value(
    value: Any, prefix: tuple[Part, ...], config: SecretConfig | None = None
) -> list[SecretHit]:
    """Every secret below ``value`` (found at ``prefix`` in the entry), in document order,
    allowed ones left out. Values at ``config.paths`` are hits of kind ``redact_path``."""
    config = config or _DEFAULT
    hits: list[SecretHit] = []
    if not config._paths:  # the common case: only strings matter, a path only for a hit
        for parts, leaf in iter_leaves(value, prefix, skip=_is_envelope, only=(str,)):
            last = parts[-1] if parts else None
            key = last if type(last) is str else _last_key(parts)
            for secret, detector, inner in _scan_string(leaf, key):
                if not config.allowed(parts, secret):
                    hits.append(SecretHit(parts, secret, detector, inner))
        return hits
    for parts, leaf in iter_leaves(value, prefix, skip=_is_envelope):
        if config._paths and config.redact_path(parts):
            if isinstance(leaf, str) and not looks_masked(leaf) and not config.allowed(parts, leaf):
                hits.append(SecretHit(parts, leaf, "redact_path"))
            continue
        if not isinstance(leaf, str):
            continue
        for secret, detector, inner in _scan_string(leaf, _last_key(parts)):
            if not config.allowed(parts, secret):
                hits.append(SecretHit(parts, secret, detector, inner))
    return hits


_DEFAULT = SecretConfig()


def entry_parts(entry: Entry) -> list[tuple[str, Any]]:
    """The parts of an entry a secret can be in: ``args``, ``response`` or ``error``, and
    every extra field, as ``(name, value)``."""
    out: list[tuple[str, Any]] = [("args", entry.args)]
    out.append(("error", entry.error) if entry.is_error else ("response", entry.response))
    out.extend(entry.extra.items())
    return out


def scan_entry(entry: Entry, config: SecretConfig | None = None) -> list[SecretHit]:
    """Every secret in ``entry`` (args, response or error, extra fields)."""
    hits: list[SecretHit] = []
    for name, value in entry_parts(entry):
        hits.extend(scan_value(value, (name,), config))
    return hits


def mask_value(value: Any, key: str | None = None) -> Any:
    """``value`` for display: each secret in it (the scan without config; ``key``: the key
    a bare string was found under) replaced by ``mask(secret)`` in guillemets, so a screen
    never shows one whole. Returns ``value`` itself when nothing is a secret."""
    if isinstance(value, str):
        secrets = [s for s, _, _ in _scan_string(value, key)]
        return _mask_text(value, secrets) if secrets else value
    hits = scan_value(value, ())
    if not hits:
        return value
    by_leaf: dict[tuple[Part, ...], list[str]] = {}
    for hit in hits:
        by_leaf.setdefault(hit.parts, []).append(hit.secret)
    for parts, secrets in by_leaf.items():
        value = _replace_at(value, parts, lambda leaf, s=secrets: _mask_text(leaf, s))
    return value


def _mask_text(text: str, secrets: list[str]) -> str:
    import json as _json

    for secret in sorted(set(secrets), key=len, reverse=True):
        shown = f"«{mask(secret)}»"
        text = text.replace(secret, shown)
        escaped = _json.dumps(secret, ensure_ascii=False)[1:-1]
        if escaped != secret:
            text = text.replace(escaped, shown)
    return text


def _replace_at(value: Any, parts: tuple[Part, ...], fn: Any) -> Any:
    if not parts:
        return fn(value) if isinstance(value, str) else value
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        return {**value, head: _replace_at(value[head], rest, fn)}
    if isinstance(value, list) and isinstance(head, int):
        out = list(value)
        out[head] = _replace_at(value[head], rest, fn)
        return out
    return value


_LABELS = {
    "key_name": "a value under a secret-named key",
    "bearer_token": "a bearer token",
    "password_assignment": "a password assignment",
    "private_key": "a private key",
    "basic_auth_credentials": "a password in a URL",
    "high_entropy_base64": "a high-entropy string",
    "high_entropy_hex": "a high-entropy hex string",
    "redact_path": "a value at a redact path",
}


def hit_finding(seq: int, hit: SecretHit) -> Finding:
    """The ``secret`` finding of one hit; the message shows the value masked only."""
    label = _LABELS.get(hit.detector, f"a {hit.detector.replace('_', ' ')}")
    where = hit.path
    if hit.inner is not None:
        where += f" (in the JSON text, at {format_path(hit.inner)})"
    return Finding(
        kind="secret",
        seq=seq,
        path=hit.path,
        seqs=(seq,),
        message=f"{label} at {where}: {hit.masked}, hash {hit.hash8}; redact it "
        f"(cassette-tui redact), or mark it as not a secret "
        f'(allow_hashes = ["{hit.hash8}"] under [tool.cassette.redact])',
        action="cassette-tui redact FILE -o OUT",
        evidence={
            "detector": hit.detector,
            "masked": hit.masked,
            "hash": hit.hash8,
            "inner_path": format_path(hit.inner) if hit.inner is not None else None,
        },
    )


def entry_secret_findings(
    entry: Entry, config: SecretConfig | None = None, raw: bytes | None = None
) -> list[Finding]:
    """The ``secret`` findings of one entry, in document order. ``raw``: the entry's line
    as stored, when known; a line whose bytes prove it holds no secret
    (``line_secret_free``) is not walked (without ``paths`` in the config)."""
    return entries_secret_findings([entry], config, [raw])


def entries_secret_findings(
    entries: Sequence[Entry], config: SecretConfig | None, raws: Sequence[bytes | None]
) -> list[Finding]:
    """``entry_secret_findings`` of each entry (``raws``: its line, or ``None``), in
    order, with the lines' prefilter run over them as one batch (``lines_secret_free``)."""
    free = [False] * len(entries)
    if not (config or _DEFAULT)._paths:
        known = [(k, raw) for k, raw in enumerate(raws) if raw is not None]
        stored = [entries[k].args_digest for k, _ in known]
        answers = lines_secret_free(
            [raw for _, raw in known],
            [digest if isinstance(digest, str) else None for digest in stored],
        )
        for (k, _), answer in zip(known, answers, strict=True):
            free[k] = answer
    findings: list[Finding] = []
    for entry, skip in zip(entries, free, strict=True):
        if not skip:
            findings.extend(hit_finding(entry.seq, hit) for hit in scan_entry(entry, config))
    return findings


class SecretBatch:
    """The ``secret`` findings of entries met one at a time in a pass (``check``), scanned
    in batches (``entries_secret_findings``) as ``batching.batch_full`` bounds them (a
    count of entries, or bytes of lines); ``findings`` holds those of the batches
    done, in order: call ``flush()`` after the last entry. The entries are kept until
    their batch is scanned: do not change them meanwhile."""

    def __init__(self, config: SecretConfig | None) -> None:
        self.config = config
        self.findings: list[Finding] = []
        self._entries: list[Entry] = []
        self._raws: list[bytes | None] = []
        self._bytes = 0

    def add(self, entry: Entry, raw: bytes | None) -> None:
        self._entries.append(entry)
        self._raws.append(raw)
        self._bytes += len(raw or b"")
        if batch_full(len(self._entries), self._bytes):
            self.flush()

    def flush(self) -> list[Finding]:
        """Scan the entries added since the last batch; returns ``findings``."""
        if self._entries:
            self.findings.extend(entries_secret_findings(self._entries, self.config, self._raws))
            self._entries, self._raws, self._bytes = [], [], 0
        return self.findings


def secret_scan_job(
    cassette: Cassette, config: SecretConfig | None = None
) -> Generator[Progress, None, list[Finding]]:
    """Scan every entry: yields ``Progress(stage="secrets", unit="entries")`` every 1000
    entries; returns the ``secret`` findings in entry order."""
    batch = SecretBatch(config)
    total = len(cassette)
    # one sequential read, the entries as parsed (no defensive copy: only read here), with
    # their lines' bytes when the cassette is file-backed (the line prefilter)
    for i, entry, raw in cassette.entries_read():
        if i % 1000 == 0:
            yield Progress("secrets", i, total, "entries")
        batch.add(entry, raw)
    yield Progress("secrets", total, total, "entries")
    return batch.flush()


def check_rows(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """``check --json`` rows of ``secret`` findings: the usual fields plus ``"secret":
    {"detector", "masked", "hash", "inner_path"}`` (the value itself never)."""
    rows = []
    for f in findings:
        row = f.to_check_json()
        row["secret"] = dict(f.evidence)
        rows.append(row)
    return rows


def secret_findings(cassette: Cassette, config: SecretConfig | None = None) -> list[Finding]:
    """``secret_scan_job`` run to its end."""
    from ..format.jobs import run_job

    return run_job(secret_scan_job(cassette, config))
