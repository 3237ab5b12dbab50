"""One URL, several spellings: the ``url`` normalization preset and its difference kind.

Two args that name the same resource often differ only in how the URL is written: query
parameters in another order, a space as ``+`` or ``%20``, percent-escapes in lower or
upper case (``%2f``/``%2F``), an escaped character that needs none (``%7E`` for ``~``),
the scheme or host in capitals, or the default port written out (``:443`` on https).
``canonical_url`` writes every such spelling the same way (RFC 3986 section 6.2.2
syntax-based normalization, plus a sorted query with ``+`` read as a space);
``is_url_spelling`` says two strings are two spellings of one URL.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s]+\Z")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
#: characters left unescaped in a path (RFC 3986 unreserved + sub-delims + ":@/")
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def looks_like_url(value: object) -> bool:
    """A string that is an absolute URL (``scheme://...``, no whitespace)."""
    return isinstance(value, str) and len(value) < 8192 and _URL.match(value) is not None


def canonical_url(url: str) -> str:
    """``url`` in one spelling: scheme and host lower case, the default port dropped,
    percent-escapes decoded and re-encoded one way (upper-case hex), query parameters
    sorted with ``+`` read as a space, an empty path as ``/``. A string that is not an
    absolute URL comes back unchanged."""
    if not looks_like_url(url):
        return url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host
    if parts.username is not None:
        user = quote(unquote(parts.username), safe="")
        if parts.password is not None:
            user += ":" + quote(unquote(parts.password), safe="")
        netloc = f"{user}@{netloc}"
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        netloc += f":{port}"
    path = _escapes(parts.path) or "/"
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)), quote_via=quote)
    fragment = _escapes(parts.fragment)
    return urlunsplit((scheme, netloc, path, query, fragment))


_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _escape_one(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _escapes(text: str) -> str:
    """RFC 3986 6.2.2.1-2: an escaped unreserved character decoded, other escapes in
    upper case (``%2f`` -> ``%2F``, never ``/``), characters that need escaping escaped."""
    return quote(_ESCAPE.sub(_escape_one, text), safe=_PATH_SAFE + "%?")


def is_url_spelling(a: object, b: object) -> bool:
    """Two different strings that are two spellings of one URL."""
    return (
        isinstance(a, str)
        and isinstance(b, str)
        and a != b
        and looks_like_url(a)
        and looks_like_url(b)
        and canonical_url(a) == canonical_url(b)
    )
