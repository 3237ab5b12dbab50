"""A subset of a cassette's entries as a cassette of its own that replays as the recording
did for the calls it keeps: the candidates of ``minimise`` and its result.

Kept consistent:

- ``seq``: each kept entry keeps its seq, so the result names the entries of the recording
  (``seq 4 search_docs``); gaps are allowed by the format (docs/format.md).
- repeated keys: a key recorded several times answers in recorded order, so dropping its
  first recording would hand the first call the second recording's answer. A subset
  therefore always keeps a key's recordings as a prefix
  (``closure``): dropping a repeated key's recordings drops its last ones, and the calls
  left get the answers they got in the recording; the next call is past the last
  recording (``ReplayExhausted``), as any removed entry's call is a miss.
- ``batch`` (calls that ran at the same time, marked with the seq of the first call of
  their batch): the mark becomes the first kept seq of the batch, and a batch left with
  one kept call loses the mark (a call that ran alone has none).
- an MCP server-facts sidecar (``RUN.mcp.json``, docs/mcp.md): written beside the subset
  (``sidecar_for``), its ``cassette`` naming the subset's file, and each recorded server
  message anchored to a removed entry moved to the nearest kept one on the same side
  (``before`` the next kept seq, ``after`` the previous one; ``null`` when none is left),
  so every message is still sent, in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..format.atomic import write_atomic
from ..format.cassette import Cassette, save
from ..format.constants import BATCH_FIELD
from ..format.entry import Entry
from ..scan.sidecar import SIDECAR_SUFFIX, read_sidecar


class Subsets:
    """The entries of ``cassette`` by index, and what a consistent subset of them is.

    Args:
        cassette: the recording; ``cassette.key(i)`` (under its rules) says which entries
            are recordings of one key.
    """

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self._earlier: dict[int, list[int]] = {}
        by_key: dict[tuple[str, str], list[int]] = {}
        for i in range(len(cassette)):
            seen = by_key.setdefault(cassette.key(i), [])
            self._earlier[i] = list(seen)
            seen.append(i)

    def closure(self, indices: Iterable[int]) -> frozenset[int]:
        """``indices`` with, for each, the earlier recordings of its key (the module doc)."""
        out = set(indices)
        for i in list(out):
            out.update(self._earlier[i])
        return frozenset(out)

    def entries(
        self, indices: Iterable[int], responses: Mapping[int, Any] | None = None
    ) -> list[Entry]:
        """The entries at ``closure(indices)``, in recorded order, their ``batch`` marks
        rewritten for the calls kept (the module doc); ``responses`` answers the entries
        at its indices with another response (a shrunk one)."""
        kept = sorted(self.closure(indices))
        responses = responses or {}
        entries = [
            replace(self.cassette[i], response=responses[i]) if i in responses
            else self.cassette[i]
            for i in kept
        ]  # fmt: skip
        batches: dict[Any, list[int]] = {}
        for entry in entries:
            mark = entry.extra.get(BATCH_FIELD)
            if mark is not None:
                batches.setdefault(mark, []).append(entry.seq)
        out = []
        for entry in entries:
            mark = entry.extra.get(BATCH_FIELD)
            if mark is not None:
                extra = dict(entry.extra)
                together = batches[mark]
                if len(together) > 1:
                    extra[BATCH_FIELD] = min(together)
                else:
                    del extra[BATCH_FIELD]
                entry = replace(entry, extra=extra)
            out.append(entry)
        return out

    def write(
        self,
        indices: Iterable[int],
        path: Path,
        *,
        overwrite: bool = False,
        responses: Mapping[int, Any] | None = None,
    ) -> Path:
        """The subset (``entries``) written as a cassette at ``path`` (atomically; under
        the cassette's rules), with its sidecar beside it when the cassette has one
        (``sidecar_for``).

        Raises:
            FileExistsError: ``path`` (or its sidecar) exists and ``overwrite`` is false.
        """
        entries = self.entries(indices, responses)
        source = self.sidecar()
        if source is not None:
            doc = trimmed_sidecar(read_sidecar(source), {e.seq for e in entries}, path.name)
            write_atomic(sidecar_for(path), _json_bytes(doc), overwrite=overwrite)
        return save(entries, path, rules=self.cassette.rules, overwrite=overwrite)

    def sidecar(self) -> Path | None:
        """The recording's MCP sidecar when there is one, else ``None``."""
        path = self.cassette.path
        if path is None:
            return None
        side = sidecar_for(Path(str(path)))
        return side if side.is_file() else None


def sidecar_for(cassette: Path) -> Path:
    """Where a cassette's MCP sidecar is: its name with the last suffix replaced
    (``fail.min.jsonl`` -> ``fail.min.mcp.json``; docs/mcp.md)."""
    return cassette.with_name(cassette.stem + SIDECAR_SUFFIX)


def trimmed_sidecar(doc: dict[str, Any], kept: set[int], cassette_name: str) -> dict[str, Any]:
    """The sidecar ``doc`` for a subset keeping the seqs ``kept``: ``cassette`` names
    ``cassette_name``; a server message anchored to a removed seq is anchored to the
    nearest kept one on its side (the module doc). The rest is unchanged."""
    out = dict(doc)
    out["cassette"] = cassette_name
    ordered = sorted(kept)
    messages = doc.get("server_messages")
    if isinstance(messages, list):
        out["server_messages"] = [_moved(m, ordered) for m in messages]
    return out


def _moved(message: Any, kept: list[int]) -> Any:
    if not isinstance(message, dict):
        return message
    out = dict(message)
    for side in ("before", "after"):
        anchor = message.get(side)
        if not isinstance(anchor, dict) or not isinstance(anchor.get("seq"), int):
            continue
        seq = anchor["seq"]
        if seq in kept:
            continue
        if side == "before":
            later = [s for s in kept if s > seq]
            out[side] = {"seq": later[0]} if later else None
        else:
            earlier = [s for s in kept if s < seq]
            out[side] = {"seq": earlier[-1]} if earlier else None
    return out


def _json_bytes(doc: dict[str, Any]) -> list[bytes]:
    return [(json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")]
