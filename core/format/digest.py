"""The args digest: the article's ``digest()``, byte for byte.

``digest(args)`` is ``"sha256:"`` + the first 16 hex digits of SHA-256 over
``json.dumps(args, sort_keys=True, separators=(",", ":"))`` encoded as UTF-8 (the output
is ASCII: ``ensure_ascii`` stays on). This is the format's canonical JSON (docs/format.md), so cassettes
recorded by the article's reference load and match unchanged. orjson is not used here: its
sorted output differs for non-ASCII text, some floats, DEL and big integers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# One encoder reused: json.dumps builds a new encoder on every call with these options.
_canonical_encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode

DIGEST_PREFIX = "sha256:"


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (sorted keys, no spaces, ASCII escapes).

    Raises ``TypeError`` for values JSON cannot represent and ``ValueError`` for circular
    references.
    """
    return _canonical_encode(value)


def digest(args: Any) -> str:
    """Return the args digest of ``args``: ``"sha256:"`` + 16 lowercase hex digits.

    ``args`` is any JSON-representable value, usually the dict a tool was called with.
    The digest does not normalize: apply normalization rules first (see ``normalize``).
    """
    return DIGEST_PREFIX + hashlib.sha256(_canonical_encode(args).encode()).hexdigest()[:16]
