"""What a secret is: the detectors run on each string of an entry (``secrets.py`` walks the
entries and makes the findings; ``check`` and ``redact`` use the same scan).

What counts as a secret, on every string in an entry's ``args``, ``response`` / ``error``
and extra fields (``request_headers`` of an imported VCR cassette, say), at any depth, in
its object keys and tool name (``key_secrets``; ``secrets.tool_hits``), inside JSON held in
a string (a request body, a tool's text result), inside base64 of printable text (the run
is the secret: ``base64_hit``) and in the URL-decoded text (the secret as written, its
escapes included). A run of token characters over 8192 long is data (an image, a path
list): neither decoded nor tested for entropy, but a provider key format glued to it
(``/usr/lib/...ghp_...``) is found as anywhere else:

- the patterns of the detect-secrets library (Yelp/detect-secrets, its plugins run on
  strings in memory): provider key formats (AWS, GitHub, GitLab, OpenAI, Slack, Stripe,
  JWT, ...), private keys (the whole PEM block is the secret), passwords in URLs
  (``https://user:pw@host``), ``password = "..."`` assignments in text, and high-entropy
  base64/hex strings (its Shannon-entropy limits: 4.5 and 3.0 bits per character, for
  tokens of at least 20 and 16 characters; UUIDs and sequential strings excepted, and
  values under id-like keys such as ``request_id`` or ``etag``);
- provider formats the library lacks or stops short of (``PROVIDERS``: OpenAI ``sk-proj-``,
  Anthropic ``sk-ant-``, GitHub ``github_pat_``, Google ``AIza``, whole ``sk_live_`` and
  ``xox*`` tokens);
- bearer tokens (``Bearer <token>`` anywhere in a string) and ``Basic <base64>`` credentials
  (the base64 of ``user:password``) anywhere in a string;
- key-name rules on top: the string under a key whose last word is ``authorization``,
  ``token``, ``password``/``passwd``/``pwd``, ``secret``, ``cookie``, ``credentials`` or
  ``api key`` (``Authorization``, ``x-api-key``, ``access_token``, ``client_secret``,
  ``Set-Cookie``; not ``max_tokens`` or ``token_type``), and URL query parameters and
  assignments named so (``?access_token=...``, ``export API_KEY=...``). A scheme word
  (``Bearer``, ``Basic``) is kept, the rest is the secret;
- values at the paths listed under ``redact.paths`` in the config (``kind`` ``redact_path``;
  ``secrets.scan_value`` applies them, ``redact_config.py`` reads them).

Not secrets: values that already look masked (``looks_masked``: placeholders, ``<...>``,
``{{...}}``, ``${...}``, ``[REDACTED]``, and whole-value mask shapes such as ``XXXX-XXXX``,
``****1234`` or ``AUTHORIZATION-XXX``; a value merely holding ``xxx`` is no mask), empty
strings, numbers and booleans, binary envelopes (``{"_binary": true, ...}``), lower-case
hex of 40, 64 or 128 digits (git object ids, digests), UUIDs, and the values of id-like
keys (``request_id``, ``thought_signature``) and path variables (``PWD``, ``HOME``,
``*_PATH``, ``*_DIR``) for the entropy test (path variables for the key-name rules too).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import urllib.parse
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

import orjson

from ..format.jsonpath import Part, iter_leaves
from ._bytes_lru import BytesLRU

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
    {
        "id",
        "ids",
        "uuid",
        "guid",
        "etag",
        "hash",
        "digest",
        "sha",
        "checksum",
        "fingerprint",
        "signature",
    }
)
#: environment variables that hold paths (``PWD``, ``HOME``, ``*_PATH``, ``*_DIR``): their
#: values are never secrets by their key or their entropy (written as such, upper case)
_PATH_VARIABLE = re.compile(r"(?:OLD)?PWD|HOME|PATH|[A-Z0-9_]*_(?:PATH|DIR|HOME|ROOT)")
_SCHEME = re.compile(r"(?i)^\s*(bearer|basic|token|bot|digest)\s+")
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)")
#: a URL query parameter or an assignment (``?access_token=...``, ``export API_KEY=...``,
#: ``--password=...``): a name not inside a longer one; its value stops at a NUL too, which
#: ends a text in the prefilter's rebuilt line (``_texts_line``), so one text's value never
#: runs into the next text
QUERY = re.compile(r"(?<![A-Za-z0-9_.\-])([A-Za-z0-9_.\-]+)=([^&#\s\"'<>\x00]+)")
#: not after a letter: ``task-<32 hex>`` or ``disk_live_...`` is no key (a digit may come
#: before one: ``%22sk-proj-...`` in URL-encoded text)
NOT_IN_WORD = "(?<![A-Za-z])"
#: provider key formats the library lacks or stops short of, each carried to the end of its
#: token (``(slug, pattern)``; ASCII, no flags: the prefilter runs them without the
#: ``NOT_IN_WORD`` lookbehind)
PROVIDERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slug, re.compile(pattern))
    for slug, pattern in (
        ("anthropic_api_key", NOT_IN_WORD + r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        ("openai_token", NOT_IN_WORD + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"),
        ("openai_token", NOT_IN_WORD + r"sk-[A-Za-z0-9]{32,}"),
        ("github_token", r"github_pat_[A-Za-z0-9_]{22,}"),
        # not cut at the library's 36: GitHub says its tokens may grow to 255 characters
        # (changelog 2021-03-31), so what follows a token glued to it may be its tail
        ("github_token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}"),
        ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
        ("stripe_access_key", NOT_IN_WORD + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
        ("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,}"),
    )
)
#: ``Basic <base64 of user:password>`` in any text (ASCII letters: no case folding)
BASIC = re.compile(r"[Bb][Aa][Ss][Ii][Cc][ \t]+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
#: a percent escape: a text holding one is scanned URL-decoded too
PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: base64 runs this long (or longer) are decoded and scanned inside
B64_DECODE_MIN, _B64_DECODE_MAX = 24, 8192
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
#: whole-value mask shapes: a ``<...>``, ``{{...}}``, ``${...}`` or ``%(name)s`` template, or a
#: bracketed word (``[REDACTED]``)
_MASKED = re.compile(
    r"(?is)^(?:<[^<>]*>|\{\{.*\}\}|\$\{.*\}|%\([a-z_]+\)s"
    r"|\[?(?:redacted|filtered|masked|hidden|removed)\]?)$"
)
#: a label in capitals, then a mask (``AUTHORIZATION-XXX``, ``X-API-KEY-****``: VCR users')
_LABELLED_MASK = re.compile(r"[A-Z][A-Z0-9_\-]*[-_ :]+(?:X{3,}|\*{3,})")
#: a run of mask characters (``xxx``, ``****``, ``•••``)
_MASK_RUN = re.compile(r"[xX]{3,}|[*•●]{3,}")
#: what a mask may keep visible around its runs (``sk-``, ``-``, a last four)
_MASK_KEPT_MAX = 12
_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
#: base64-ish runs the entropy test looks at (the library's charset)
_B64_RUN = re.compile(r"[A-Za-z0-9+/\\\-_=]{16,}")
#: longer runs are data (an image, a binary body), not a credential
_ENTROPY_MAX = 512
#: a token longer than this is data: no entropy test, no context window; only the patterns
#: that need no context are run on it (``_long_token_hits``)
_TOKEN_MAX = 8192
#: a token longer than this has the patterns that need no context found as a long one's
#: (``_long_token_hits``: RE2 first, Python's patterns where a hit starts): Python's own
#: search of ``sk-proj-`` repeated over 8 KB took 60 ms (quadratic), over 512 B 0.3 ms
_PY_SEARCH_MAX = 512
_HEX = re.compile(r"[0-9a-fA-F]+\Z")
#: lower-case hex of these lengths is a digest (git object ids: 40 and 64), not a secret
_HASH_LENGTHS = frozenset({40, 64, 128})
_B64_MIN, _HEX_MIN = 20, 16
#: JSON text in a string is parsed and scanned inside, up to this size (characters)
_JSON_TEXT_MAX = 8_000_000


def key_words(key: str) -> list[str]:
    """``"x-api-key"`` -> ``["x", "api", "key"]``; ``"accessToken"`` -> ``["access", "token"]``."""
    return [w.lower() for w in _WORDS.findall(key)]


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a key names a secret (the key-name rules; see the module docstring). A
    path variable (``PWD``, ``OLDPWD``, ``HOME``, ``*_PATH``, ``*_DIR``) never does."""
    if _PATH_VARIABLE.fullmatch(key):
        return False
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
def is_id_key(key: str) -> bool:
    """Whether the value of ``key`` is an identifier or a path, never tested for entropy:
    an id-like last word (``request_id``, ``etag``, ``sha``, ``thought_signature``) or a
    path variable (``PWD``, ``HOME``, ``XDG_CONFIG_DIR``)."""
    if _PATH_VARIABLE.fullmatch(key):
        return True
    words = key_words(key)
    return bool(words) and words[-1] in _ID_WORDS


def looks_masked(text: str) -> bool:
    """Whether ``text`` is already a placeholder or a mask, not a secret: empty, a
    ``<redacted:...>`` placeholder or another ``<...>``/``{{...}}``/``${...}`` template,
    a bracketed ``[REDACTED]`` word, or a mask shape: runs of ``x``/``X`` or ``*``/``•``
    (3 or more in a row) with at most 8 characters visible around them, or as many as
    they hold and at most 12 (``XXXX-XXXX``, ``****``, ``sk-****abcd``), or a label in
    capitals before one (``AUTHORIZATION-XXX``). A value that merely
    holds ``xxx`` (``hunter2-XXX-rocks``, a random token) is not a mask."""
    text = text.strip()
    if not text or PLACEHOLDER_RE.fullmatch(text) is not None or _MASKED.match(text):
        return True
    if _LABELLED_MASK.fullmatch(text):
        return True
    masked = sum(len(m) for m in _MASK_RUN.findall(text))
    if masked == 0:
        return False
    kept = len(text) - masked
    return kept <= _MASK_KEPT_MAX and kept <= max(masked, 8)


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


def _pattern_hits(
    text: str, regexes: list[tuple[str, re.Pattern[str]]], found: list[tuple[str, str]]
) -> None:
    """The library's ``regexes`` (``(slug, pattern)``) on ``text``: each match's secret
    (``_plugin_secret``) that does not look masked, with the slug as its detector."""
    for slug, regex in regexes:
        _add_plugin_hits(slug, regex.finditer(text), text, found)


def _add_plugin_hits(
    slug: str, matches: Iterable[re.Match[str]], text: str, found: list[tuple[str, str]]
) -> None:
    """Each secret of ``matches`` (one pattern's, in order) that does not look masked, as
    ``(secret, slug)`` in ``found``; a match that ends within the last secret kept is
    skipped: its secret is part of that one (a JWT's lazy match carried to the end of the
    token, ``_plugin_secret``: in a run of ``eyJ...`` parts each match was carried to the
    end again, quadratic in time and in the text of the secrets, which the longest then
    hid)."""
    kept_end = -1
    for m in matches:
        if m.end() <= kept_end:
            continue
        start, end = _plugin_span(m, text)
        secret = text[start:end]
        if secret and not looks_masked(secret):
            found.append((secret, slug))
            kept_end = end


@functools.cache
def _any_token_pattern() -> re.Pattern[str]:
    """One search that matches where any context-free pattern of the library matches."""
    parts = []
    for _, regex in pattern_groups()[0]:
        flags = "i" if regex.flags & re.IGNORECASE else ""
        parts.append(f"(?{flags}:{regex.pattern})" if flags else f"(?:{regex.pattern})")
    return re.compile("|".join(parts))


@functools.cache
def pattern_groups() -> tuple[
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


def entropy_hit(token: str) -> str | None:
    """``"high_entropy_hex"``/``"high_entropy_base64"`` when the library's entropy plugins
    call ``token`` random (over their limits), else ``None``."""
    _, _, b64, hexp = _plugins()
    sequential, uuid_like, _ = _heuristics()
    distinct = len(set(token))
    if _HEX.match(token):
        if len(token) in _HASH_LENGTHS and token.islower():
            return None  # a git object id or a SHA-1/256/512 digest (lower case)
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
# 8M characters of remembered texts (~8-16 MB with the str headers): a diff of 300k rows
# hit the old 32,768-entry cache 86% of the time and the entry count let it hold up to
# ~128 MB of texts, the largest part of the diff's peak memory (issue 31,
# docs/performance.md).
_CACHED_CHARS = 8 * 1024 * 1024


def _scan_text_uncached(text: str, entropy: Hashable) -> tuple[tuple[str, str], ...]:
    return _scan_text(text, bool(entropy))


_scan_text_cached: BytesLRU[tuple[tuple[str, str], ...]] = BytesLRU(
    _scan_text_uncached, _CACHED_CHARS
)


def _scan_text(text: str, entropy: bool = True) -> tuple[tuple[str, str], ...]:
    """The secrets inside one string, as ``(secret, detector)`` pairs, longest first,
    without one that is part of another. ``entropy=False`` leaves out the entropy test
    (values under id-like keys). Placeholders are never secrets.

    The library's patterns run on windows of the text around what could start a secret
    (a token of 8+ characters with a digit and a letter, or of 20+; a keyword of its keyword plugin;
    ``://``; ``xox``), not over all of it: prose without such a token costs one regex
    pass (see ``benchmarks/bench_secrets.py``). Each step below appends its hits to
    ``found``; the cheap test that rules a step out is made here, before calling it."""
    if "<redacted:" in text and PLACEHOLDER_RE.search(text):
        return _between_placeholders(text, entropy)
    found: list[tuple[str, str]] = []
    if "PRIVATE KEY" in text or "PuTTY-User-Key" in text:
        blocks = _PEM.findall(text)
        found.extend((b, "private_key") for b in blocks or [text])
    spans = _token_hits(text, entropy, found)
    if spans:
        _context_hits(text, spans, found)
    if "//" in text:
        _url_hits(text, found)
    lowered = text.lower()
    if _STEMS.search(lowered):
        _keyword_hits(text, lowered, found)
    if "earer" in text or "EARER" in text:
        for m in _BEARER.finditer(text):
            if not looks_masked(m.group(1)):
                found.append((m.group(1), "bearer_token"))
    if "=" in text:
        for m in QUERY.finditer(text):
            if is_secret_key(m.group(1)) and not looks_masked(m.group(2)):
                found.append((m.group(2), "key_name"))
    if "basic" in lowered:
        for m in BASIC.finditer(text):
            if _basic_credentials(m.group(1)):
                found.append((m.group(1), "basic_auth"))
    if "%" in text and PERCENT.search(text) is not None:
        _percent_hits(text, entropy, found)
    return _longest_first(found)


def _basic_credentials(token: str) -> bool:
    """Whether ``token`` is the base64 of ``user:password`` (printable, with a colon)."""
    try:
        text = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in text and _UNPRINTABLE.search(text) is None and not looks_masked(text)


def _percent_hits(text: str, entropy: bool, found: list[tuple[str, str]]) -> None:
    """The secrets of the URL-decoded ``text``, each as it is written in ``text`` (its
    percent-encoded form when it holds an escaped character)."""
    decoded = urllib.parse.unquote(text, errors="strict") if _decodable(text) else text
    if decoded == text:
        return
    for secret, kind in scan_text(decoded, entropy):
        if secret in text:
            found.append((secret, kind))
            continue
        m = _encoded_pattern(secret).search(text)
        if m is not None:
            found.append((m.group(0), kind))


def _decodable(text: str) -> bool:
    try:
        urllib.parse.unquote(text, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def _encoded_pattern(secret: str) -> re.Pattern[str]:
    """A pattern for ``secret`` with each character as it is or percent-encoded (its UTF-8
    bytes, hex digits in either case; a space also as ``+``)."""
    parts = []
    for c in secret:
        escaped = "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
        alts = [re.escape(c), "(?i:" + re.escape(escaped) + ")"]
        if c == " ":
            alts.append(r"\+")
        parts.append("(?:" + "|".join(alts) + ")")
    return re.compile("".join(parts))


def _between_placeholders(text: str, entropy: bool) -> tuple[tuple[str, str], ...]:
    """The secrets of a text holding placeholders: those of each piece between them."""
    found: list[tuple[str, str]] = []
    for piece in PLACEHOLDER_RE.split(text):
        found.extend(scan_text(piece, entropy))
    return _longest_first(found)


def _token_hits(text: str, entropy: bool, found: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """The candidate tokens' hits: the patterns that need no context (one combined search
    first) and, with ``entropy``, the entropy test on their base64/hex runs (not the value
    of an id-like key written in the text). Returns the tokens' spans."""
    spans: list[tuple[int, int]] = []
    any_token = _any_token_pattern()
    digit, letter = _DIGIT.search, _LETTER.search
    for m in _CANDIDATE.finditer(text):
        token = m.group(0)
        if len(token) > _TOKEN_MAX:
            # data (a blob, a padded field): no entropy test, no decoding, no context
            # window; but a known-format token glued to it is found all the same
            _long_token_hits(token, found)
            continue
        if len(token) < 20 and not (digit(token) and letter(token)):
            continue
        spans.append(m.span())
        # patterns that need no context, on the token; one combined search first
        if len(token) > _PY_SEARCH_MAX:
            _long_token_hits(token, found)  # Python's search is quadratic on some runs
        elif any_token.search(token) is not None:
            _pattern_hits(token, pattern_groups()[0], found)
        if len(token) <= _PY_SEARCH_MAX and ("-" in token or "_" in token or "AIza" in token):
            for slug, regex in PROVIDERS:
                for hit in regex.findall(token):
                    if not looks_masked(hit):
                        found.append((hit, slug))
        if len(token) >= _HEX_MIN:
            for run_m in _B64_RUN.finditer(token):
                run = run_m.group(0)
                if len(run) >= B64_DECODE_MIN:
                    kind = base64_hit(run)
                    if kind is not None:
                        found.append((run, kind))
                        continue
                if (
                    entropy
                    and len(run) <= _ENTROPY_MAX
                    and not _after_id_key(text, m.start() + run_m.start())
                ):
                    kind = entropy_hit(run)
                    if kind is not None:
                        found.append((run, kind))
    return spans


def _long_token_hits(token: str, found: list[tuple[str, str]]) -> None:
    """The hits of the patterns that need no context (the library's token patterns and
    ``PROVIDERS``) in a token longer than ``_PY_SEARCH_MAX``: the same as on a short one.
    Linear searches first (``_long_token_search``: RE2, 25 ms for 1 MB), as the short
    token's combined search; Python's patterns then run only on a token it matched."""
    if not _long_token_search()(token):
        return
    for slug, regex, starts in _long_token_patterns():
        if starts is None:  # pragma: no cover - RE2 is a dependency
            _pattern_hits(token, [(slug, regex)], found)
            continue
        at_starts = (regex.match(token, at.start()) for at in starts(token))
        _add_plugin_hits(slug, (m for m in at_starts if m is not None), token, found)
    for slug, regex in PROVIDERS:
        for hit in regex.findall(token):
            if not looks_masked(hit):
                found.append((hit, slug))


#: a lookahead of the library's patterns, and what stands for it in RE2 (which has no
#: lookaround): the character after, or the end (a search may consume it)
_NOT_WORD_AFTER = (r"(?!\w)", "(?:[^0-9A-Za-z_]|$)")


def _re2_form(regex: re.Pattern[str]) -> str:
    """A library pattern as RE2 takes it: its lookahead ``(?!\\w)`` as the character after
    or the end (``_NOT_WORD_AFTER``), counts over RE2's limit of 1000 left open (looser:
    the pattern itself then decides), its case folding kept."""
    pattern = regex.pattern.replace(*_NOT_WORD_AFTER)
    pattern = re.sub(r"\{(\d+),(\d{4,})\}", r"{\1,}", pattern)
    return f"(?i:{pattern})" if regex.flags & re.IGNORECASE else pattern


@functools.cache
def _long_token_patterns() -> list[
    tuple[str, re.Pattern[str], Callable[[str], Iterator[Any]] | None]
]:
    """The library's context-free patterns for a token over ``_TOKEN_MAX``, each as
    ``(slug, pattern, starts)``: ``starts`` is RE2's ``finditer`` of its ``_re2_form``
    (linear time), and the pattern is then matched only where a hit of it starts. Python's
    own search of a long token is quadratic on some: ``sk-[A-Za-z0-9-_]*...T3BlbkFJ...``
    backtracks over the whole run from each ``sk-`` (30 s of CPU for 200 KB of
    ``sk-proj-``). ``starts`` is ``None`` for a pattern with other lookaround, or without
    RE2 (Python's search then)."""
    out: list[tuple[str, re.Pattern[str], Callable[[str], Iterator[Any]] | None]] = []
    try:
        import re2

        options = re2.Options()
        options.log_errors = False
    except Exception:  # pragma: no cover - RE2 is a dependency
        re2 = None
    for slug, regex in pattern_groups()[0]:
        form = _re2_form(regex)
        starts = None
        if re2 is not None and not any(look in form for look in ("(?<", "(?=", "(?!")):
            try:
                starts = re2.compile(form, options).finditer
            except Exception:  # pragma: no cover - the library's patterns compile
                starts = None
        out.append((slug, regex, starts))
    return out


@functools.cache
def _long_token_search() -> Callable[[str], bool]:
    """A test true of every token in which a pattern that needs no context (the library's
    token patterns, ``PROVIDERS``) matches: RE2 searches (linear time: 25 ms for 1 MB of
    base64, where Python's combined search took 200 ms), one a pattern, of the patterns
    written without lookaround (a lookbehind as the character before or the start, a
    lookahead as the one after or the end) and with counts over RE2's limit of 1000 left
    open (looser is safe: the patterns then decide). One RE2 search of them all took 450
    ms: its automaton outgrew its memory on the counted runs. Python's combined search and
    ``PROVIDERS`` when RE2 is missing."""
    parts = [_re2_form(regex) for _, regex in pattern_groups()[0]]
    for _, regex in PROVIDERS:
        parts.append(regex.pattern.replace(NOT_IN_WORD, "(?:^|[^A-Za-z])"))
    searches = None
    if not any("(?<" in p or "(?=" in p or "(?!" in p for p in parts):
        try:
            import re2

            options = re2.Options()
            options.log_errors = False
            searches = [re2.compile(p, options).search for p in parts]
        except Exception:  # pragma: no cover - RE2 is a dependency; the patterns compile
            searches = None
    if searches is None:  # pragma: no cover - as above
        any_token = _any_token_pattern()
        searches = [any_token.search] + [regex.search for _, regex in PROVIDERS]
    found = searches
    return lambda token: any(search(token) is not None for search in found)


@functools.lru_cache(maxsize=16384)
def base64_hit(run: str) -> str | None:
    """``"<kind>_in_base64"`` when ``run`` is base64 (standard or URL-safe, padding
    optional) of printable UTF-8 text in which the scan (``scan_string``, JSON included)
    finds a secret of that kind, else ``None``. Runs shorter than ``B64_DECODE_MIN`` or
    longer than 8192 characters are not decoded."""
    text = _b64_text(run)
    if text is None:
        return None
    hits = scan_string(text, None)
    if not hits:
        return None
    kind = hits[0][1]
    return kind if kind.endswith("_in_base64") else f"{kind}_in_base64"


def _b64_text(run: str) -> str | None:
    """The printable UTF-8 text ``run`` is the base64 of, else ``None``."""
    if not B64_DECODE_MIN <= len(run) <= _B64_DECODE_MAX or "\\" in run:
        return None
    body = run.rstrip("=")
    if len(body) % 4 == 1 or "=" in body:
        return None
    if "-" in body or "_" in body:
        if "+" in body or "/" in body:
            return None
        body = body.replace("-", "+").replace("_", "/")
    try:
        text = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if _UNPRINTABLE.search(text) is not None:
        return None
    return text


def _context_hits(text: str, spans: list[tuple[int, int]], found: list[tuple[str, str]]) -> None:
    """Patterns with a keyword before the value (``aws_secret = "..."``): in the windows
    around the candidate tokens ``spans`` where one of their keywords is."""
    for window in _windows(text, spans, 100, 10):
        if _CONTEXT.search(window.lower()):
            _pattern_hits(window, pattern_groups()[1], found)


def _url_hits(text: str, found: list[tuple[str, str]]) -> None:
    """URL patterns (passwords in URLs, webhook and registry URLs), on a text with ``//``.
    npm's (``//.+/:_authToken=``) only on a text holding ``_authToken``, which every match
    holds: it backtracks over the line from each ``//`` (3.3 MB of URLs on one line: 73 s)."""
    patterns = pattern_groups()[2]
    if "_authToken" not in text:
        patterns = [(slug, regex) for slug, regex in patterns if "_authToken" not in regex.pattern]
    _pattern_hits(text, patterns, found)


def _keyword_hits(text: str, lowered: str, found: list[tuple[str, str]]) -> None:
    """The keyword plugin's assignments (``password = "..."``), in windows around its
    keywords; ``lowered``: ``text.lower()``, which holds a keyword stem."""
    # the plugin's keywords are lower case: a case-sensitive search of the lowered text is
    # many times faster than an IGNORECASE one (same offsets unless lower() changed the
    # length, then the slow search)
    if len(lowered) == len(text):
        keyword_spans = [m.span() for m in _KEYWORDS(False).finditer(lowered)]
    else:
        keyword_spans = [m.span() for m in _KEYWORDS(True).finditer(text)]
    if not keyword_spans:
        return
    _, _, templated = _heuristics()
    for window in _windows(text, keyword_spans, 40, 200):
        if '"' not in window and "'" not in window and "`" not in window:
            continue  # each of the plugin's (quotes-required) patterns needs a quote
        for secret in _plugins()[1].analyze_string(window):
            if secret and not looks_masked(secret) and not templated(secret):
                found.append((secret, "password_assignment"))


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
    return m is not None and is_id_key(m.group(1))


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
#: the characters a token is carried through to its end (``_plugin_span``)
_TOKEN_REST = re.compile(r"[A-Za-z0-9\-_.+/=]*")


def _plugin_span(m: re.Match[str], text: str) -> tuple[int, int]:
    """Where the secret is in ``text`` (``(start, end)``, offsets) in a match of one of
    the library's patterns: the group that holds it when the pattern captures one after
    some context (``://user:(pw)@``), else the whole match (``(ghp)_...`` captures only
    the prefix), without the delimiters some patterns include, and carried to the end of
    the token when the pattern stops short (a JWT's lazy signature)."""
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
        rest = _TOKEN_REST.match(text, end)
        end = rest.end() if rest is not None else end
    return start, end


def _longest_first(found: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    if not found:
        return ()
    out: list[tuple[str, str]] = []
    for secret, kind in sorted(set(found), key=lambda p: (-len(p[0]), p[0], p[1])):
        if not any(secret in longer for longer, _ in out):
            out.append((secret, kind))
    return tuple(out)


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
    for slug, regex in PROVIDERS:
        if regex.search(secret):
            return slug
    if _B64_RUN.fullmatch(secret) and len(secret) >= B64_DECODE_MIN:
        kind = base64_hit(secret)
        if kind is not None:
            return kind
    if "%" in secret and PERCENT.search(secret) is not None and _decodable(secret):
        decoded = urllib.parse.unquote(secret)
        if decoded != secret:
            return classify(decoded)
    if _B64_RUN.fullmatch(secret) and len(secret) <= _ENTROPY_MAX:
        kind = entropy_hit(secret)
        if kind is not None:
            return kind
    return "secret"


# -- the strings of a value ------------------------------------------------------------------
def is_envelope(node: Any) -> bool:
    """Whether ``node`` is a binary envelope (``{"_binary": true, ...}``): never scanned."""
    return isinstance(node, dict) and node.get("_binary") is True


def last_key(parts: tuple[Part, ...]) -> str | None:
    """The last object key of a path (a list index is not one), or ``None``."""
    for p in reversed(parts):
        if isinstance(p, str):
            return p
    return None


def scan_string(
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
            for parts, leaf in iter_leaves(inner_value, skip=is_envelope):
                if isinstance(leaf, str):
                    for secret, detector, _ in scan_string(leaf, last_key(parts), depth + 1):
                        out.append((secret, detector, parts))
            for parts, _key, secret, detector in key_secrets(inner_value, ()):
                out.append((secret, detector, parts))
            return out
    entropy = key is None or not is_id_key(key)
    return [(s, d, None) for s, d in scan_text(text, entropy)]


def string_leaf_secrets(
    value: Any, prefix: tuple[Part, ...]
) -> Iterator[tuple[tuple[Part, ...], str, str, tuple[Part, ...] | None]]:
    """``(parts, secret, detector, inner path)`` of every secret in the string leaves of
    ``value`` (found at ``prefix``), in document order, each scanned under its key
    (``scan_string``); binary envelopes are skipped. No config: nothing is allowed."""
    for parts, leaf in iter_leaves(value, prefix, skip=is_envelope, only=(str,)):
        last = parts[-1] if parts else None
        key = last if type(last) is str else last_key(parts)
        for secret, detector, inner in scan_string(leaf, key):
            yield parts, secret, detector, inner


#: a key shorter than this holds no secret the scan finds (its shortest: an 8-character token)
_KEY_MIN = 8


def key_secrets(
    value: Any, prefix: tuple[Part, ...]
) -> Iterator[tuple[tuple[Part, ...], str, str, str]]:
    """``(parts, key, secret, detector)`` of every secret in an object key below ``value``
    (found at ``prefix``): ``parts`` is the path of the object holding the key (never the
    key itself, which would show the secret). Keys are scanned as text (``scan_text``),
    not by the key-name rules; binary envelopes are skipped."""
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[tuple[Part, ...], Any]] = [(prefix, value)]
    while stack:
        parts, node = stack.pop()
        if isinstance(node, dict):
            if is_envelope(node):
                continue
            for key, child in node.items():
                if len(key) >= _KEY_MIN:
                    for secret, detector in scan_text(key):
                        yield parts, key, secret, detector
                if isinstance(child, dict | list) and child:
                    stack.append((parts + (key,), child))
        else:
            for i, child in enumerate(node):
                if isinstance(child, dict | list) and child:
                    stack.append((parts + (i,), child))
