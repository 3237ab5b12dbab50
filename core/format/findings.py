"""One finding type for everything the engine reports about cassettes.

Lint (``check``, one cassette), the diagnosis of a diff (two cassettes), and the coming
secret and gate findings are all a ``Finding``: a kind, one plain sentence, where it is,
the seqs concerned, a first action and machine-readable evidence. The ``--json`` shapes
are views of it:

- ``check --json``: ``{"kind", "seq", "path", "message", "seqs"}`` (``to_check_json``),
  ``seqs`` a list of the one cassette's seqs;
- ``diff --json``: ``{"kind", "seqs", "message", "action", "evidence"}``
  (``to_diff_json``), ``seqs`` ``{"a": [...], "b": [...]}``.

Paths are written in the one JSON-path syntax (``jsonpath.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: ``seqs`` of a finding about two runs: the seqs on each side (``"a"``, ``"b"``)
SideSeqs = dict[str, list[int]]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One finding.

    Attributes:
        kind: what was found (``stale_digest``, ``repeated_key``, ``first_divergence``,
            ``args_miss``, ``secret``, ...; see ``lint.KINDS`` and ``diagnose.KINDS``).
        message: one or two plain sentences naming the evidence.
        seq: the entry the finding is about, in a one-cassette finding, or ``None``.
        path: the JSON path inside that entry (``$.args.since``), or ``None``.
        seqs: every seq concerned: a tuple for one cassette (``repeated_key``: every
            recording of the key), ``{"a": [...], "b": [...]}`` for two.
        action: the first thing to do about it ("" when the message says it).
        evidence: machine-readable details (keys, paths, values, counts, a proposed rule).
    """

    kind: str
    message: str
    seq: int | None = None
    path: str | None = None
    seqs: tuple[int, ...] | SideSeqs = ()
    action: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)

    def side_seqs(self, side: str) -> list[int]:
        """The seqs on ``side`` (``"a"``/``"b"``) of a two-run finding; for a one-cassette
        finding, its seqs (and ``seq``) whatever the side."""
        if isinstance(self.seqs, dict):
            return list(self.seqs.get(side, []))
        seqs = list(self.seqs)
        if self.seq is not None and self.seq not in seqs:
            seqs.insert(0, self.seq)
        return seqs

    def to_check_json(self) -> dict[str, Any]:
        """``{"kind", "seq", "path", "message", "seqs"}`` (``check --json``)."""
        seqs = self.seqs
        if isinstance(seqs, dict):
            seqs = tuple(sorted({s for side in seqs.values() for s in side}))
        return {
            "kind": self.kind,
            "seq": self.seq,
            "path": self.path,
            "message": self.message,
            "seqs": list(seqs),
        }

    #: the name lint's findings always had
    to_dict = to_check_json

    def to_diff_json(self) -> dict[str, Any]:
        """``{"kind", "seqs", "message", "action", "evidence"}`` (``diff --json``)."""
        seqs = self.seqs
        if not isinstance(seqs, dict):
            seqs = {"a": list(seqs)}
        return {
            "kind": self.kind,
            "seqs": seqs,
            "message": self.message,
            "action": self.action,
            "evidence": self.evidence,
        }
