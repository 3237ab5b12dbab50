"""The two new files of an ``mcp record`` session, claimed before the server starts
(``_claim``): the cassette, created exclusively (or the empty one ``cassette-tui record``
made for its agent, ``CASSETTE_CLAIM``), and its server-facts sidecar journal; with ``{n}``
in ``-o`` (``NUMBER``), the first number whose two files are both free. Nothing a user
has is overwritten. Kept apart from the proxy: it runs once, before the relay."""

from __future__ import annotations

import os
from pathlib import Path

from cassette_tui.core.format.constants import ENV_CLAIM
from cassette_tui.core.keys.normalize import NormalizationRules
from cassette_tui.core.scan.redact import Redactor
from cassette_tui.core.scan.sidecar import sidecar_hits

from ._facts import FactsJournal, ServerFacts, sidecar_path
from ._summary import RecordSummary
from ._writer import CassetteWriter

#: in ``-o``, replaced by the first number whose cassette and sidecar are both free
NUMBER = "{n}"


def _claim(
    template: str, command: list[str], rules: NormalizationRules, redactor: Redactor | None
) -> tuple[CassetteWriter, FactsJournal, RecordSummary]:
    """Create the cassette (exclusively) and its sidecar for a new recording. With ``{n}``
    in ``template`` (``runs/git-{n}.jsonl``), the first n from 1 whose two files are both
    free; without, the one path, or ``FileExistsError``. A half-claimed pair (the sidecar
    appeared meanwhile) is undone. The empty cassette ``cassette-tui record`` made for its
    agent is written into (``CASSETTE_CLAIM``, as the library's ``Recorder`` does)."""
    claim = os.environ.get(ENV_CLAIM) or None
    known: frozenset[str] = frozenset()
    if redactor is not None:  # the command line's secrets, by their flags (--api-key VALUE)
        hits = sidecar_hits({"server": {"command": command}}, redactor.config)
        known = frozenset(h.secret for h in hits if h.secret)
    numbered = NUMBER in template
    for n in range(1, 1_000_000 if numbered else 2):
        cassette = Path(template.replace(NUMBER, str(n)))
        sidecar = sidecar_path(cassette)
        try:
            if sidecar.exists():
                raise FileExistsError(
                    f"{sidecar}: a server-facts file exists already; record to a new file"
                )
            writer = CassetteWriter(cassette, rules, redactor, claim=claim, known=known)
            facts = ServerFacts(command=command, cassette=cassette.name)
            try:
                journal = FactsJournal(facts, sidecar, redactor)
            except BaseException:
                writer.close()
                if not writer.claimed:
                    cassette.unlink()
                raise
        except FileExistsError:
            if numbered:
                continue
            raise
        return writer, journal, RecordSummary(cassette, sidecar)
    raise FileExistsError(f"{template}: no free number for {NUMBER}")
