"""Redaction: secrets replaced by stable placeholders, so a redacted cassette still replays.

Each secret the scan finds (``secrets.py``), and each value at a ``redact.paths`` pattern,
becomes ``<redacted:KIND:HASH8>``: ``KIND`` is ``_secret_detectors.classify(secret)`` and ``HASH8``
the first 8 hex digits of SHA-256 over the secret, both functions of the value alone. So
the same secret gives the same placeholder everywhere (equal values stay equal, distinct
ones stay distinct), and redacting is idempotent (a placeholder is never a secret).

Where redaction applies, and why replay still matches:

- ``redact_entry`` (the ``redact`` command, and recording with ``record = true``): the
  args are redacted by what the scan finds in the args alone (``redact_args``); the
  response, error and extra fields also lose every secret found anywhere in the cassette
  (``known``), so a token returned at seq 1 and echoed in a later response goes too. The
  ``args_digest`` is recomputed over the redacted args.
- ``redact_args`` on the live args of a call: ``Replayer`` digests the redacted args when
  the raw ones miss (``keys.replay_key.lookup_key``), ``Recorder`` with ``record = true``
  digests and stores the redacted args. Both use the one function the ``redact`` command used on the
  stored args, so the agent's real call (real token included) finds its redacted entry.
  The config (``redact.paths``, ``allow``, ``allow_hashes``) must be the same when the
  cassette is redacted and when it is replayed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..format.atomic import TargetExists, check_replaceable, write_atomic
from ..format.jobs import CancelToken, Progress
from ..format.jsonpath import Part
from ._secret_detectors import classify
from .masking import hash8
from .redact_config import SecretConfig
from .secrets import SecretHit, entry_parts, scan_value, tool_hits

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.entry import Entry

__all__ = [
    "RedactResult",
    "Redactor",
    "placeholder",
    "record_redactor",
    "redact_job",
]


def placeholder(secret: str) -> str:
    """``<redacted:KIND:HASH8>`` for ``secret`` (see the module docstring)."""
    return f"<redacted:{classify(secret)}:{hash8(secret)}>"


def _json_escaped(secret: str) -> str:
    return json.dumps(secret, ensure_ascii=False)[1:-1]


def _replace_all(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret (as is, and as escaped in JSON text)
    replaced by its placeholder; longest secrets first."""
    for secret in sorted(set(secrets), key=lambda s: (-len(s), s)):
        if not secret:
            continue
        ph = placeholder(secret)
        if secret in text:
            text = text.replace(secret, ph)
        escaped = _json_escaped(secret)
        if escaped != secret and escaped in text:
            text = text.replace(escaped, ph)
    return text


def _set_at(value: Any, parts: tuple[Part, ...], fn: Callable[[Any], Any]) -> Any:
    """A copy of ``value`` with the node at ``parts`` replaced by ``fn(node)``; only the
    containers on the way are copied."""
    if not parts:
        return fn(value)
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = _set_at(value[head], rest, fn)  # type: ignore[index]
        return out
    if isinstance(value, list):
        out_list = list(value)
        out_list[head] = _set_at(value[head], rest, fn)  # type: ignore[index]
        return out_list
    return value


def _apply_hits(value: Any, prefix_len: int, hits: list[SecretHit]) -> Any:
    by_leaf: dict[tuple[Part, ...], list[str]] = {}
    by_object: dict[tuple[Part, ...], list[str]] = {}
    for hit in hits:
        target = by_object if hit.place == "key" else by_leaf
        target.setdefault(hit.parts[prefix_len:], []).append(hit.secret)
    for parts, secrets in by_leaf.items():
        value = _set_at(value, parts, lambda leaf, s=secrets: _redact_leaf(leaf, s))  # type: ignore[misc]
    # keys last: the value hits' paths go through the keys as they were
    for parts, secrets in sorted(by_object.items(), key=lambda kv: -len(kv[0])):
        value = _set_at(value, parts, lambda node, s=secrets: _rename_keys(node, s))  # type: ignore[misc]
    return value


def _rename_keys(node: Any, secrets: Iterable[str]) -> Any:
    """An object with each key holding one of ``secrets`` renamed (the secret replaced by
    its placeholder), in the same order; anything else as it is."""
    if not isinstance(node, dict):
        return node
    secrets = [s for s in secrets if s]
    return {
        (
            _replace_all(k, secrets) if any(s in k or _json_escaped(s) in k for s in secrets) else k
        ): v
        for k, v in node.items()
    }


def _redact_leaf(leaf: Any, secrets: list[str]) -> Any:
    if isinstance(leaf, str):
        return _replace_all(leaf, secrets)
    return leaf


class Redactor:
    """Redacts values under one config (``SecretConfig``; default: none allowed, no paths).

    ``redact_args(tool, args)`` returns ``args`` itself (the same object) when nothing in
    it is a secret, else a redacted copy; nothing is ever changed in place.
    """

    def __init__(self, config: SecretConfig | None = None) -> None:
        self.config = config or SecretConfig()

    def redact_value(self, value: Any, prefix: tuple[Part, ...]) -> tuple[Any, list[SecretHit]]:
        """``value`` (found at ``prefix`` in an entry) with its secrets replaced, and the hits."""
        hits = scan_value(value, prefix, self.config)
        if not hits:
            return value, hits
        return _apply_hits(value, len(prefix), hits), hits

    def redact_args(self, tool: str, args: Any) -> Any:
        """The args of a call with their secrets replaced, object keys included (see the
        module docstring)."""
        return self.redact_value(args, ("args",))[0]

    def redact_tool(self, tool: str) -> str:
        """A tool name with its secrets replaced (``tool`` itself when it holds none): the
        name a redacted cassette stores, and the one replay looks a live call up by."""
        hits = tool_hits(tool, self.config)
        return _replace_all(tool, [h.secret for h in hits]) if hits else tool

    def redact_entry(self, entry: Entry, known: Iterable[str] = ()) -> tuple[Entry, int]:
        """``entry`` redacted, and how many secrets were replaced. ``known``: secrets found
        elsewhere in the cassette, also replaced outside the args."""
        known_set = known if isinstance(known, frozenset) else frozenset(known)
        count = 0
        changes: dict[str, Any] = {}
        tool_found = tool_hits(entry.tool, self.config)
        if tool_found:
            count += len(tool_found)
            changes["tool"] = _replace_all(entry.tool, [h.secret for h in tool_found])
        extra = dict(entry.extra)
        for name, value in entry_parts(entry):
            new, hits = self.redact_value(value, (name,))
            count += len(hits)
            if name != "args" and known_set:
                new = _replace_known(new, known_set)
            if new is value:
                continue
            if name in ("args", "response", "error"):
                changes[name] = new
            else:
                extra[name] = new
        if extra != entry.extra:
            changes["extra"] = extra
        return (replace(entry, **changes) if changes else entry), count


@functools.lru_cache(maxsize=4)
def _known_pattern(known: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(s) for s in sorted(known, key=len, reverse=True)))


def _replace_known(value: Any, known: frozenset[str]) -> Any:
    """Every string below ``value`` with the ``known`` secrets in it replaced."""
    from ..format.jsonpath import iter_leaves

    pattern = _known_pattern(known)
    for parts, leaf in iter_leaves(value):
        if isinstance(leaf, str) and pattern.search(leaf):
            value = _set_at(value, parts, lambda s: _replace_all(s, known))
    return _replace_known_keys(value, pattern, known)


def _replace_known_keys(value: Any, pattern: re.Pattern[str], known: frozenset[str]) -> Any:
    """``value`` with every object key holding a ``known`` secret renamed (copies only
    where a key changes)."""
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for k, v in value.items():
            new_v = _replace_known_keys(v, pattern, known)
            new_k = _replace_all(k, known) if pattern.search(k) else k
            changed = changed or new_v is not v or new_k != k
            out[new_k] = new_v
        return out if changed else value
    if isinstance(value, list):
        items = [_replace_known_keys(v, pattern, known) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def record_redactor(config: SecretConfig) -> Redactor | None:
    """The redactor a recording uses under ``config``: one when ``record = true``, else
    ``None`` (calls are written as they are)."""
    return Redactor(config) if config.record else None


# -- the redact command ----------------------------------------------------------------------
@dataclass(frozen=True)
class RedactResult:
    """What ``redact_job`` did.

    Attributes:
        out: the file written.
        entries: entries written.
        replaced: secrets replaced (findings and ``redact.paths`` values).
        changed_entries: entries that changed.
        backup: the backup of the original (``--in-place``), else ``None``.
    """

    out: Path
    entries: int
    replaced: int
    changed_entries: int
    backup: Path | None = None


def redact_job(
    cassette: Cassette,
    out: str | Path,
    *,
    config: SecretConfig | None = None,
    overwrite: bool = False,
    backup: str | Path | None = None,
    cancel: CancelToken | None = None,
) -> Generator[Progress, None, RedactResult]:
    """Write ``cassette`` redacted to ``out``: yields ``Progress`` (stage ``"scan"`` then
    ``"redact"``, unit ``"entries"``). Two passes: the first collects every secret (so one
    found late is replaced in earlier responses too), the second writes. The lines go to an
    anonymous temporary file, then to ``out`` atomically (``atomic.write_atomic``): a
    crash or a cancel never leaves a half-written ``out``. With ``backup``, the original
    file is copied there first (never over an existing file).

    Raises:
        TargetExists: (a ``FileExistsError``) ``out`` exists and ``overwrite`` is false.
        FileExistsError: ``backup`` exists.
        Cancelled: ``cancel`` was set; nothing was written.
    """
    redactor = Redactor(config)
    out = Path(out)
    _check_targets(out, overwrite, backup)
    entry_at = getattr(cassette, "_entry", cassette.__getitem__)
    known = yield from _known_secrets_job(cassette, entry_at, redactor, cancel)
    with tempfile.TemporaryFile() as spool:
        replaced, changed = yield from _redact_into_job(
            cassette, entry_at, redactor, known, spool, cancel
        )
        spool.seek(0)
        backup_path = None
        if backup is not None and cassette.path is not None:
            backup_path = Path(backup)
            with open(cassette.path, "rb") as original:
                write_atomic(backup_path, iter(lambda: original.read(1 << 20), b""))
        write_atomic(out, iter(lambda: spool.read(1 << 20), b""), overwrite=overwrite)
    return RedactResult(out, len(cassette), replaced, changed, backup_path)


def _check_targets(out: Path, overwrite: bool, backup: str | Path | None) -> None:
    """Refuse to write over ``out`` (unless ``overwrite``, and never over a symlink, FIFO
    or device) or over an existing ``backup``; see ``redact_job``."""
    if not overwrite and os.path.lexists(out):
        raise TargetExists(out)
    if overwrite:
        check_replaceable(out)  # a symlink, FIFO or device is never replaced
    if backup is not None and os.path.lexists(backup):
        raise FileExistsError(f"{backup}: a backup exists already; move it away first")


def _known_secrets_job(
    cassette: Cassette,
    entry_at: Callable[[int], Entry],
    redactor: Redactor,
    cancel: CancelToken | None,
) -> Generator[Progress, None, frozenset[str]]:
    """The first pass: every secret of every entry (progress ``"scan"``)."""
    total = len(cassette)
    known: set[str] = set()
    for i in range(total):
        if i % 1000 == 0:
            yield Progress("scan", i, total, "entries")
            if cancel is not None:
                cancel.raise_if_cancelled()
        entry = entry_at(i)
        known.update(h.secret for h in tool_hits(entry.tool, redactor.config))
        for name, value in entry_parts(entry):
            known.update(h.secret for h in scan_value(value, (name,), redactor.config))
    yield Progress("scan", total, total, "entries")
    return frozenset(s for s in known if s)


def _redact_into_job(
    cassette: Cassette,
    entry_at: Callable[[int], Entry],
    redactor: Redactor,
    known: frozenset[str],
    spool: IO[bytes],
    cancel: CancelToken | None,
) -> Generator[Progress, None, tuple[int, int]]:
    """The second pass: each entry redacted (``known``: the first pass's secrets) and
    written to ``spool`` as a line (progress ``"redact"``); returns ``(secrets replaced,
    entries changed)``."""
    from ..format.cassette import dump_line

    total = len(cassette)
    replaced = changed = 0
    for i in range(total):
        if i % 1000 == 0:
            yield Progress("redact", i, total, "entries")
            if cancel is not None:
                cancel.raise_if_cancelled()
        entry = entry_at(i)
        new, count = redactor.redact_entry(entry, known)
        replaced += count
        if new is not entry:
            changed += 1
        spool.write(dump_line(new, cassette.rules))
    yield Progress("redact", total, total, "entries")
    return replaced, changed
