"""The args digest: the article's ``digest()``, byte for byte.

``digest(args)`` is ``"sha256:"`` + the first 16 hex digits of SHA-256 over
``json.dumps(args, sort_keys=True, separators=(",", ":"))`` encoded as UTF-8 (the output
is ASCII: ``ensure_ascii`` stays on). This is the format's canonical JSON
(docs/format.md), so cassettes recorded by the article's reference load and match
unchanged. ``digest`` does not use orjson: its sorted output differs for non-ASCII text,
some floats, DEL and big integers; ``fast_digest`` uses it only where it is the canonical
JSON.

The replay key of a call is ``digest`` of its args under normalization rules. The format
knows no rules: it takes any ``KeyRules`` (``keys.normalize.NormalizationRules`` is one)
and ``NO_RULES``, the identity, when none is given.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

import orjson

from .jsonvalue import has_nonfinite

# One encoder reused: json.dumps builds a new encoder on every call with these options.
_canonical_encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_canonical_encode = _canonical_encoder.encode


def _c_canonical_encoder() -> Any:
    """The standard library's C encoder with the canonical options, made once and called
    directly: what ``JSONEncoder.encode`` runs, the same bytes, without the Python frames
    and closures it builds on every call (half the time of a short value). No circular
    check (its ``markers`` dict would be state shared between threads): a circular value
    ends in ``RecursionError``, and ``digest`` then asks the encoder that names it.
    ``None`` where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    enc = _canonical_encoder
    return make(
        None, enc.default, json.encoder.encode_basestring_ascii, enc.indent,
        enc.key_separator, enc.item_separator, enc.sort_keys, enc.skipkeys, enc.allow_nan,
    )  # fmt: skip


_c_encode = _c_canonical_encoder()
_sha256 = hashlib.sha256
_loads = orjson.loads

DIGEST_PREFIX = "sha256:"


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (sorted keys, no spaces, ASCII escapes).

    Raises ``TypeError`` for values JSON cannot represent and ``ValueError`` for circular
    references.
    """
    if _c_encode is not None:
        try:
            return "".join(_c_encode(value, 0))
        except RecursionError:
            pass  # circular (``ValueError`` below) or nested too deep (raised again below)
    return _canonical_encode(value)


def digest(args: Any) -> str:
    """Return the args digest of ``args``: ``"sha256:"`` + 16 lowercase hex digits.

    ``args`` is any JSON-representable value, usually the dict a tool was called with.
    The digest does not normalize: apply normalization rules first (see ``normalize``).
    """
    return DIGEST_PREFIX + _sha256(canonical_json(args).encode()).hexdigest()[:16]


class KeyRules(Protocol):
    """What the format needs of normalization rules: whether they are the identity, and
    the normalized copy of a call's args (never changing ``args``)."""

    @property
    def is_empty(self) -> bool: ...

    def apply(self, tool: str, args: Any) -> Any: ...


class _NoRules:
    """The identity ``KeyRules``: strict matching."""

    __slots__ = ()

    @property
    def is_empty(self) -> bool:
        return True

    def apply(self, tool: str, args: Any) -> Any:
        return args

    def __repr__(self) -> str:
        return "NO_RULES"


#: no normalization: the rules of a cassette loaded or written without any
NO_RULES: KeyRules = _NoRules()


#: digits as ``0`` and ``E`` as ``e``: a digit before an exponent mark reads ``0e``
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")


def _may_not_be_canonical(out: bytes) -> bool:
    """Whether orjson's sorted output ``out`` may not be the canonical JSON: it holds
    non-ASCII text or DEL, a digit before ``e``/``E`` (an exponent; also how orjson
    returns an integer past 64 bits: as a float) or ``0.0000`` (a tiny float). The
    regex ``[\\x7f-\\xff]|\\d[eE]|0\\.0000`` says the same; these byte tests take half its
    time on a line's args (the digest of every entry, ``check``). An int and ``find``: a
    ``bytes in bytes`` test costs twice a ``find`` on short args (every replayed call)."""
    return (
        not out.isascii()
        or 0x7F in out
        or out.find(b"0.0000") >= 0
        or out.translate(_DIGITS_AS_ZERO).find(b"0e") >= 0
    )


def sorted_json(value: Any) -> bytes | None:
    """orjson's sorted output for ``value``, or ``None`` when orjson cannot write it."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def fast_digest(value: Any, out: bytes | None = None) -> str | None:
    """``digest(value)`` from orjson's sorted output (``out``, when already made), or
    ``None`` when that output may not be the canonical JSON (``_may_not_be_canonical``) or
    orjson cannot write the value."""
    if out is None:
        out = sorted_json(value)
        if out is None:
            return None
    if _may_not_be_canonical(out):
        return None
    if out.find(b"null") >= 0 and has_nonfinite(value):
        return None  # orjson writes NaN/Infinity as null; the canonical JSON does not
    return DIGEST_PREFIX + _sha256(out).hexdigest()[:16]


#: orjson writes these as JSON where the standard library refuses them (a ``TypeError``,
#: so ``digest`` raises): left to the exact path (``live_digest``)
_LIVE_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def live_digest(value: Any) -> str:
    """``digest(value)`` for a value as a program passed it (a live call's args, not parsed
    JSON), by orjson where that is exact: its sorted output is taken when it is the
    canonical JSON (``_may_not_be_canonical``) and reads back equal to ``value`` (a
    ``uuid.UUID`` or an ``Enum``, which orjson writes and the standard library refuses,
    does not; nor a tuple, a NaN written as ``null``, an integer past 64 bits); else the
    exact ``digest``, which raises as it does.

    Raises:
        TypeError, ValueError: as ``digest`` (a value JSON cannot represent).
    """
    try:
        out = orjson.dumps(value, option=_LIVE_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError too
        return digest(value)
    # ``_may_not_be_canonical`` inline (a frame less on every replayed call)
    if (
        not out.isascii()
        or 0x7F in out
        or out.find(b"0.0000") >= 0
        or out.translate(_DIGITS_AS_ZERO).find(b"0e") >= 0
        or _loads(out) != value
    ):
        return digest(value)
    return DIGEST_PREFIX + _sha256(out).hexdigest()[:16]
