"""A big tools/call's recording prepared while the server works on it: its args digest
under the normalization rules and their compact JSON text as ``dump_record`` writes it,
in pieces (``_PreparedArgs``, ``_prepare_args``). With ``_spans``, the args are a
skeleton whose long strings stay in the line's bytes: their texts are spliced and hashed
in place, never copied (``_spans_texts``, ``_spans_digest``). Kept apart from the proxy:
the cassette writer and the guesses of an entry's start read the same texts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from cassette_tui.core.format.digest import DIGEST_PREFIX, digest
from cassette_tui.core.keys.normalize import NormalizationRules

from ._fast_json import _canonical_ascii, _scan, fast_canonical, fast_compact
from ._spans import Spans

Pieces = list[bytes | memoryview]


@dataclass
class _PreparedArgs:
    """A big call's args digest under the rules, and their compact JSON text as
    ``dump_record`` writes it, UTF-8, in pieces (``None`` when orjson's text would differ:
    a float, say; the writer then writes them its own way)."""

    digest: str
    text: Pieces | None


def _prepare_args(
    rules: NormalizationRules, tool: str, args: Any, spans: Spans | None = None
) -> _PreparedArgs:
    """The digest and text of a call's args. With ``spans``, ``args`` is a skeleton
    (``_spans``): both texts are orjson's of it with the long strings' bytes spliced in,
    hashed piece by piece (no copy of a long string is made); where they cannot be (a
    normalization rule for the tool, a float, a non-ASCII key), its real value's."""
    if spans is not None and spans.holds(args):
        fast = _prepare_spans(rules, tool, args, spans)
        if fast is not None:
            return fast
        args = spans.real(args)
    keyed = rules.apply(tool, args)
    has_float, in_order = _scan(args)
    text = None if has_float else fast_compact(args, has_float=False)
    canonical: bytes | None
    if keyed is args and in_order and text is not None and _canonical_ascii(text):
        canonical = text  # keys in order, ASCII: the compact text is the canonical one
    else:
        canonical = fast_canonical(keyed, has_float=has_float if keyed is args else None)
    if canonical is not None:
        dig = DIGEST_PREFIX + hashlib.sha256(canonical).hexdigest()[:16]
    else:
        dig = digest(keyed)
    return _PreparedArgs(dig, None if text is None else [text])


def _prepare_spans(
    rules: NormalizationRules, tool: str, args: Any, spans: Spans
) -> _PreparedArgs | None:
    texts = _spans_texts(rules, tool, args, spans)
    if texts is None:
        return None
    text, canonical = texts
    return _PreparedArgs(_spans_digest(spans, canonical), spans.splice(text))


def _spans_texts(
    rules: NormalizationRules, tool: str, args: Any, spans: Spans | None
) -> tuple[bytes, bytes] | None:
    """A skeleton's ``(compact, canonical)`` texts (orjson's, placeholders in them), or
    ``None`` when the args are not read from ``spans`` so (see ``_prepare_args``)."""
    if spans is None or not spans.holds(args):
        return None
    if rules.apply(tool, args) is not args:  # a rule may read the long strings
        return None
    has_float, in_order = _scan(args)
    if has_float:
        return None
    text = fast_compact(args, has_float=False)
    if text is None:
        return None
    # the long strings are printable ASCII (``read_spans``): the skeleton's text decides
    canonical = (
        text if in_order and _canonical_ascii(text) else fast_canonical(args, has_float=False)
    )
    if canonical is None:
        return None
    return text, canonical


def _spans_digest(spans: Spans, canonical: bytes) -> str:
    """The args digest of a skeleton's canonical text, the long strings hashed in place."""
    sha = hashlib.sha256()
    for piece in spans.splice(canonical):
        sha.update(piece)
    return DIGEST_PREFIX + sha.hexdigest()[:16]
