"""The key of one cassette line: its args digest under the cassette's rules and a hash of
its response's bytes, from the line's raw parts.

One definition for the two places that compute them: the key pass of a loaded cassette
(``Cassette.keys_job``, a second read of the file) and the load itself when asked for the
keys (``load(keys=True)``: the app's one read of a file, where the loader's index already
holds each line's args and response as raw bytes, so nothing is decoded twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .columns import NO_RESPONSE_HASH
from .digest import KeyRules, digest, fast_digest, sorted_json
from .errors import CassetteFormatError
from .jsontext import DuplicateKey, may_have_duplicates, parse_json
from .jsonvalue import decode_nonfinite
from .lines import error_field, json_reason, parse_header

_DECODE_ERRORS = (msgspec.DecodeError, RecursionError)
#: args bytes whose digest is remembered (cleared when full): a recording repeats calls
#: (retries, the same lookup again), and the same bytes under the same rules and tool
#: give the same digest, so a repeat costs one dict lookup instead of a parse, a sort and
#: a SHA-256
_MEMO_SIZE = 1 << 16
#: args longer than this are not remembered (their bytes would be held)
_MEMO_MAX_BYTES = 512


class LineKeys:
    """Computes ``(args digest, response hash)`` per line for one file under ``rules``.

    ``path`` names the file in errors. Thread-compatible (no shared state but the rules).
    """

    __slots__ = ("_apply", "_identity", "_memo", "path", "rules")

    def __init__(self, path: Path | None, rules: KeyRules) -> None:
        self.path = path
        self.rules = rules
        self._identity = rules.is_empty
        self._apply = rules.apply
        self._memo: dict[tuple[str, bytes], str] = {}

    def of_line(
        self,
        tool: str,
        line: int,
        args_raw: bytes | None,
        response: Any,
        nonfinite: bool,
        raw: bytes | memoryview,
    ) -> tuple[str, int]:
        """The digest of the args and the hash of the response bytes of one line.

        Args:
            tool: the entry's tool (the rules may depend on it).
            line: the line's number, for errors.
            args_raw: the args' JSON bytes as stored, or ``None`` when the line is read by
                the general parser (``parse_header``: NaN, a lone surrogate...).
            response: the response's bytes as stored (``msgspec.Raw`` or bytes), or
                ``None``/empty (an error entry, or a line read by the general parser).
            nonfinite: the args (or, read by the general parser, the line) hold
                ``{"$numberDouble": ...}`` (read back as a float).
            raw: the whole line, read again only by the general parser.

        Returns:
            ``(digest, hash)``: the digest as ``digest.digest`` gives it for the normalized
            args; ``hash(bytes(response))``, or ``columns.NO_RESPONSE_HASH`` (-1) without
            response bytes.

        Raises:
            CassetteFormatError: the args repeat a key in one object, or the line does not
                parse (file, line, field), as the entry parse would say.
        """
        hashed = hash(bytes(response)) if response else NO_RESPONSE_HASH
        memo_key = None
        if args_raw is not None and not nonfinite and len(args_raw) <= _MEMO_MAX_BYTES:
            memo_key = (tool, args_raw)
            known = self._memo.get(memo_key)
            if known is not None:
                return known, hashed
        finite = True
        args: Any = None
        if args_raw is not None:
            try:
                args = msgspec.json.decode(args_raw)
            except _DECODE_ERRORS:
                args_raw = None
        if args_raw is None:
            args, finite = self._args_as_loaded(bytes(raw), line)
            args_raw, hashed = b"", NO_RESPONSE_HASH  # the general parser checked for repeated keys
            memo_key = None
        if nonfinite:
            args, finite = decode_nonfinite(args), False
        if self._identity:
            # the sorted JSON that gives the digest also tells whether msgspec dropped a
            # repeated key (one colon less: see jsontext.may_have_duplicates)
            out = sorted_json(args) if finite else None
            if args_raw and may_have_duplicates(args_raw, args, out):
                self._refuse_repeated_args(args_raw, bytes(raw), line)
            made = (fast_digest(args, out) if out is not None else None) or digest(args)
        else:
            if args_raw and b":" in args_raw and may_have_duplicates(args_raw, args):
                self._refuse_repeated_args(args_raw, bytes(raw), line)
            value = self._apply(tool, args)
            made = (fast_digest(value) if finite else None) or digest(value)
        if memo_key is not None:
            memo = self._memo
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[memo_key] = made
        return made, hashed

    def _args_as_loaded(self, raw: bytes, line: int) -> tuple[Any, bool]:
        """``(args, finite)`` of the line ``raw`` as the load read it (``parse_header``).

        Raises:
            CassetteFormatError: the line does not parse (file, line, field).
        """
        try:
            record, finite = parse_header(raw)
            return record["args"], finite
        except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
            raise CassetteFormatError(
                self.path, line, error_field(exc, raw), json_reason(exc, raw)
            ) from None

    def _refuse_repeated_args(self, args_raw: bytes, raw: bytes, line: int) -> None:
        """Raise ``CassetteFormatError`` (field ``args``) when ``args_raw`` holds a key
        twice in one object, as the entry parse would."""
        try:
            parse_json(args_raw)
        except DuplicateKey as exc:
            # the path from the entry, as the entry parse names it (``$.args``, not the top)
            within = DuplicateKey(exc.key, ("args", *exc.parts))
            raise CassetteFormatError(self.path, line, "args", json_reason(within, raw)) from None
