"""The secret scan of a cassette: the secrets of each entry (``SecretHit``), their
``secret`` findings, and the scan as a job (``check``; ``redact`` uses the same hits).

What counts as a secret is the detectors' (``_secret_detectors.py``), run on every string
of an entry's ``args``, ``response`` / ``error`` and extra fields; the values at the
config's ``redact.paths`` are hits too (``redact_config.py``). A line whose bytes prove it
holds no secret is not walked (``_secret_prefilter.py``). A finding shows a secret masked
and by its hash only (``masking.py``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..format.batching import batch_full
from ..format.findings import Finding
from ..format.jobs import Progress, run_job
from ..format.jsonpath import Part, format_path, iter_leaves
from ._secret_detectors import (
    is_envelope,
    key_secrets,
    last_key,
    looks_masked,
    scan_string,
    scan_text,
    string_leaf_secrets,
)
from ._secret_prefilter import lines_secret_free
from .masking import hash8, mask
from .redact_config import SecretConfig

if TYPE_CHECKING:
    from ..format.cassette import Cassette
    from ..format.entry import Entry

__all__ = [
    "SecretBatch",
    "SecretHit",
    "check_rows",
    "entry_parts",
    "entry_secret_findings",
    "safe_path",
    "scan_entry",
    "scan_value",
    "secret_findings",
    "secret_scan_job",
    "tool_hits",
]


@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret in an entry.

    Attributes:
        parts: where the string holding it is, from the entry (``("args", "headers",
            "Authorization")``).
        secret: the secret's text (a part of that string, or all of it).
        detector: what found it (``key_name``, ``bearer_token``, ``github_token``,
            ``private_key``, ``high_entropy_base64``, ``redact_path``, ...).
        inner: the path inside JSON text held in that string, or ``None``.
        place: ``"value"`` (a string at ``parts``), ``"key"`` (an object key of the
            object at ``parts``; with ``inner``, of the object at ``inner`` in the JSON
            text) or ``"tool"`` (the entry's tool name; ``parts`` is ``("tool",)``).
    """

    parts: tuple[Part, ...]
    secret: str
    detector: str
    inner: tuple[Part, ...] | None = None
    place: str = "value"

    @property
    def path(self) -> str:
        """``parts`` as a path, each key holding a secret shown as its placeholder (so a
        path never shows a secret)."""
        return safe_path(self.parts)

    @property
    def hash8(self) -> str:
        return hash8(self.secret)

    @property
    def masked(self) -> str:
        return mask(self.secret)


def safe_path(parts: tuple[Part, ...]) -> str:
    """``format_path(parts)`` with each key that holds a secret (``scan_text``) shown with
    the secret as its placeholder, as ``redact`` writes it: ``$.args["<redacted:...>"]``."""
    if all(type(p) is not str or len(p) < 8 or not scan_text(p) for p in parts):
        return format_path(parts)
    from .redact import placeholder

    shown: list[Part] = []
    for p in parts:
        if type(p) is str and len(p) >= 8:
            for secret, _ in scan_text(p):
                p = p.replace(secret, placeholder(secret))
        shown.append(p)
    return format_path(shown)


def _key_hits(
    value: Any, prefix: tuple[Part, ...], config: SecretConfig, hits: list[SecretHit]
) -> None:
    """The secrets in the object keys below ``value`` (``place="key"``), allowed ones
    left out; the string leaves' hits whose JSON text holds a key are ``"key"`` already."""
    if not isinstance(value, dict | list):
        return
    for parts, _key, secret, detector in key_secrets(value, prefix):
        if not config.allowed(parts, secret):
            hits.append(SecretHit(parts, secret, detector, None, "key"))


def scan_value(
    value: Any, prefix: tuple[Part, ...], config: SecretConfig | None = None
) -> list[SecretHit]:
    """Every secret below ``value`` (found at ``prefix`` in the entry): in its strings, in
    document order, then in its object keys (``place="key"``), allowed ones left out.
    Values at ``config.paths`` are hits of kind ``redact_path``."""
    config = config or _DEFAULT
    hits: list[SecretHit] = []
    if not config._paths:  # the common case: only strings matter, a path only for a hit
        for parts, secret, detector, inner in string_leaf_secrets(value, prefix):
            if not config.allowed(parts, secret):
                hits.append(SecretHit(parts, secret, detector, inner))
        _key_hits(value, prefix, config, hits)
        return hits
    for parts, leaf in iter_leaves(value, prefix, skip=is_envelope):
        if config._paths and config.redact_path(parts):
            if isinstance(leaf, str) and not looks_masked(leaf) and not config.allowed(parts, leaf):
                hits.append(SecretHit(parts, leaf, "redact_path"))
            continue
        if not isinstance(leaf, str):
            continue
        for secret, detector, inner in scan_string(leaf, last_key(parts)):
            if not config.allowed(parts, secret):
                hits.append(SecretHit(parts, secret, detector, inner))
    _key_hits(value, prefix, config, hits)
    return hits


_DEFAULT = SecretConfig()


def entry_parts(entry: Entry) -> list[tuple[str, Any]]:
    """The parts of an entry a secret can be in: ``args``, ``response`` or ``error``, and
    every extra field, as ``(name, value)``."""
    out: list[tuple[str, Any]] = [("args", entry.args)]
    out.append(("error", entry.error) if entry.is_error else ("response", entry.response))
    out.extend(entry.extra.items())
    return out


def tool_hits(tool: str, config: SecretConfig | None = None) -> list[SecretHit]:
    """The secrets in a tool name (``place="tool"``, ``parts`` ``("tool",)``)."""
    config = config or _DEFAULT
    if not isinstance(tool, str) or len(tool) < 8:
        return []
    return [
        SecretHit(("tool",), secret, detector, None, "tool")
        for secret, detector in scan_text(tool)
        if not config.allowed(("tool",), secret)
    ]


def scan_entry(entry: Entry, config: SecretConfig | None = None) -> list[SecretHit]:
    """Every secret in ``entry``: its tool name, args, response or error, extra fields
    (values and object keys)."""
    hits: list[SecretHit] = tool_hits(entry.tool, config)
    for name, value in entry_parts(entry):
        hits.extend(scan_value(value, (name,), config))
    return hits


_LABELS = {
    "key_name": "a value under a secret-named key",
    "bearer_token": "a bearer token",
    "password_assignment": "a password assignment",
    "private_key": "a private key",
    "basic_auth_credentials": "a password in a URL",
    "basic_auth": "basic auth credentials",
    "high_entropy_base64": "a high-entropy string",
    "high_entropy_hex": "a high-entropy hex string",
    "redact_path": "a value at a redact path",
}


def _with_article(kind: str) -> str:
    """``kind`` after "a", or "an" before a vowel (an aws access key, an openai token)."""
    return f"an {kind}" if kind[:1] in ("a", "e", "i", "o", "u") else f"a {kind}"


def hit_finding(seq: int, hit: SecretHit) -> Finding:
    """The ``secret`` finding of one hit; the message shows the value masked only."""
    label = _LABELS.get(hit.detector) or _with_article(hit.detector.replace("_", " "))
    where = hit.path
    if hit.place == "tool":
        where = "the tool name"
    elif hit.place == "key":
        where = f"an object key of {where}"
    if hit.inner is not None:
        where += f" (in the JSON text, at {safe_path(hit.inner)})"
    return Finding(
        kind="secret",
        seq=seq,
        path=hit.path,
        seqs=(seq,),
        message=f"{label} at {where}: {hit.masked}, hash {hit.hash8}; redact it "
        f"(cassette-tui redact), or mark it as not a secret "
        f'(allow_hashes = ["{hit.hash8}"] under [tool.cassette.redact])',
        action="cassette-tui redact FILE -o OUT",
        evidence={
            "detector": hit.detector,
            "masked": hit.masked,
            "hash": hit.hash8,
            "inner_path": safe_path(hit.inner) if hit.inner is not None else None,
            "place": hit.place,
        },
    )


def entry_secret_findings(
    entry: Entry, config: SecretConfig | None = None, raw: bytes | None = None
) -> list[Finding]:
    """The ``secret`` findings of one entry, in document order. ``raw``: the entry's line
    as stored, when known; a line whose bytes prove it holds no secret
    (``line_secret_free``) is not walked (without ``paths`` in the config)."""
    return entries_secret_findings([entry], config, [raw])


def entries_secret_findings(
    entries: Sequence[Entry], config: SecretConfig | None, raws: Sequence[bytes | None]
) -> list[Finding]:
    """``entry_secret_findings`` of each entry (``raws``: its line, or ``None``), in
    order, with the lines' prefilter run over them as one batch (``lines_secret_free``)."""
    free = [False] * len(entries)
    if (config or _DEFAULT)._paths:
        pass  # a value at a redact path is a hit whatever the line holds
    elif None not in raws:  # a file's lines, all known (``check``)
        free = lines_secret_free(cast("list[bytes]", list(raws)))
    else:
        known = [(k, raw) for k, raw in enumerate(raws) if raw is not None]
        answers = lines_secret_free([raw for _, raw in known])
        for (k, _), answer in zip(known, answers, strict=True):
            free[k] = answer
    findings: list[Finding] = []
    for entry, skip in zip(entries, free, strict=True):
        if not skip:
            findings.extend(hit_finding(entry.seq, hit) for hit in scan_entry(entry, config))
    return findings


class SecretBatch:
    """The ``secret`` findings of entries met one at a time in a pass (``check``), scanned
    in batches (``entries_secret_findings``) as ``batching.batch_full`` bounds them (a
    count of entries, or bytes of lines); ``findings`` holds those of the batches
    done, in order: call ``flush()`` after the last entry. The entries are kept until
    their batch is scanned: do not change them meanwhile."""

    def __init__(self, config: SecretConfig | None) -> None:
        self.config = config
        self.findings: list[Finding] = []
        self._entries: list[Entry] = []
        self._raws: list[bytes | None] = []
        self._bytes = 0

    def add(self, entry: Entry, raw: bytes | None) -> None:
        self._entries.append(entry)
        self._raws.append(raw)
        self._bytes += len(raw or b"")
        if batch_full(len(self._entries), self._bytes):
            self.flush()

    def add_batch(self, _first: int, entries: list[Entry], raws: list[bytes | None]) -> None:
        """``add`` of each entry of a batch a pass has already bounded
        (``batching.batch_full``), scanned at once (``lint.pass_columns``' ``each_batch``;
        ``_first``: the position of its first entry, not needed here)."""
        self.flush()  # entries added one at a time before it come first
        self.findings.extend(entries_secret_findings(entries, self.config, raws))

    def flush(self) -> list[Finding]:
        """Scan the entries added since the last batch; returns ``findings``."""
        if self._entries:
            self.findings.extend(entries_secret_findings(self._entries, self.config, self._raws))
            self._entries, self._raws, self._bytes = [], [], 0
        return self.findings


def secret_scan_job(
    cassette: Cassette, config: SecretConfig | None = None
) -> Generator[Progress, None, list[Finding]]:
    """Scan every entry: yields ``Progress(stage="secrets", unit="entries")`` every 1000
    entries; returns the ``secret`` findings in entry order."""
    batch = SecretBatch(config)
    total = len(cassette)
    # one sequential read, the entries as parsed (no defensive copy: only read here), with
    # their lines' bytes when the cassette is file-backed (the line prefilter)
    for i, entry, raw in cassette.entries_read():
        if i % 1000 == 0:
            yield Progress("secrets", i, total, "entries")
        batch.add(entry, raw)
    yield Progress("secrets", total, total, "entries")
    return batch.flush()


def check_rows(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """``check --json`` rows of ``secret`` findings: the usual fields plus ``"secret":
    {"detector", "masked", "hash", "inner_path"}`` (the value itself never)."""
    rows = []
    for f in findings:
        row = f.to_check_json()
        row["secret"] = dict(f.evidence)
        rows.append(row)
    return rows


def secret_findings(cassette: Cassette, config: SecretConfig | None = None) -> list[Finding]:
    """``secret_scan_job`` run to its end."""
    return run_job(secret_scan_job(cassette, config))
