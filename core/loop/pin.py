"""Pin one recorded call as a fixture (the debug loop, step 5): a one-entry
cassette that replays on its own, with where it came from.

The fixture's entry is the recorded one renumbered ``seq`` 1, plus a ``pinned`` field
(kept verbatim by every reader; never part of a key)::

    "pinned": {"source": "runs/fail.jsonl", "seq": 6,
               "key": {"tool": "read_file", "args_digest": "sha256:..."},
               "date": "2026-11-30T21:02:11Z", "reason": "stale retry policy"}

Its file name is ``<tool>-<16 hex of the args digest>.jsonl`` with the tool name made safe
(:func:`fixture_name`): letters, digits, ``_``, ``-`` and inner dots only, at most 64 of
them, so a tool named ``../../etc/passwd`` or ``a/b`` or holding control characters stays
a plain name inside the output folder. When the safe name is not the tool's own name, 8
hex of the SHA-256 of the tool name follow it (else ``a_b`` could not be told from ``a/b``
or ``a b``): ``a_b-1f0e3dad-<digest>.jsonl``. The file is written atomically and never
replaces an existing one unless ``force``; an existing one is named with the tool and call
it holds.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ..format.atomic import NotReplaceable, TargetExists, file_kind
from ..format.cassette import Cassette, dump_line, save
from ..format.context import OUTCOME_FIELD
from ..format.digest import KeyRules
from ..format.errors import CassetteError
from ..format.outcome import same_outcome
from ..importers.sources import open_cassette
from ..keys.normalize import NormalizationRules

#: the longest tool part of a fixture file name
MAX_TOOL_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class PinError(CassetteError):
    """The fixture cannot be written where it is planned. The message is plain words that
    name the path at fault and what to do (the app and ``pin`` print it as it is)."""


def fixture_name(tool: str, args_digest: str) -> str:
    """The fixture file name for a key: ``read_file-eec0474a17810727.jsonl``.

    The tool part keeps ``[A-Za-z0-9_.-]``, turns every other run of characters into
    ``_``, drops leading and trailing dots, dashes and underscores (no ``..``, no hidden
    file), and is cut to ``MAX_TOOL_CHARS``; ``tool`` when nothing is left. When that is
    not ``tool`` itself, ``-`` and 8 hex of ``sha256(tool)`` follow, so distinct tools get
    distinct names (``a/b``, ``a_b`` and ``a b``: ``a_b-<h1>``, ``a_b``, ``a_b-<h2>``). The
    digest part is the digest's hex (anything else in it is dropped)."""
    name = _UNSAFE.sub("_", tool).strip("._-")
    name = re.sub(r"\.{2,}", ".", name)[:MAX_TOOL_CHARS].rstrip("._-") or "tool"
    if name != tool:
        name += "-" + hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    hexpart = re.sub(r"[^0-9a-f]", "", args_digest.split(":")[-1].lower()) or "nodigest"
    return f"{name}-{hexpart}.jsonl"


@dataclass(frozen=True)
class PinPlan:
    """A fixture about to be written: where (``target``), and what (``fixture``, one entry
    renumbered ``seq`` 1 with its ``pinned`` provenance), under ``rules``. Made by
    :func:`plan_pin`, written by :func:`write_pin`; the app shows it before writing."""

    target: Path
    fixture: Cassette
    rules: KeyRules

    def text(self) -> str:
        """The fixture file's content as it will be written (one JSONL line)."""
        return b"".join(dump_line(entry, self.rules) for entry in self.fixture).decode("utf-8")

    @property
    def exists(self) -> bool:
        """A file is at ``target`` already (writing it needs ``force``)."""
        try:
            return file_kind(self.target) is not None
        except OSError:  # its folder became a file: writing says so (``write_pin``)
            return False


@dataclass(frozen=True)
class ExistingFixture:
    """What the fixture file already at a plan's target holds, so replacing it is a choice
    made knowing what goes: fixtures are named by tool and args digest, so two calls with
    the same key (a 429 and the 200 of its retry) share one file.

    Attributes:
        source, seq, date: its ``pinned`` provenance (``None`` where it does not say).
        tool: the tool of the call it holds (``None`` when it could not be read).
        same_outcome: its response (or error) equals the one about to be written;
            ``None`` when the file could not be read.
        problem: why it could not be read (``None`` when it was).
    """

    source: str | None = None
    seq: int | None = None
    date: str | None = None
    same_outcome: bool | None = None
    problem: str | None = None
    tool: str | None = None


class FixtureExists(TargetExists):
    """The fixture's file exists: the message says which tool and call it holds
    (``fixtures/a_b-....jsonl: exists, holding tool 'a_b' seq 2 of runs/x.jsonl; pass
    overwrite=True to replace it``). Attributes: ``path``, ``how``, ``existing`` (the
    ``ExistingFixture``, or ``None``)."""

    def __init__(self, path: Path, existing: ExistingFixture | None, how: str) -> None:
        super().__init__(path, how)
        self.existing = existing
        self.args = (f"{path}: exists, {_holding(existing)}; {how} to replace it",)

    def for_flag(self, flag: str = "--force") -> TargetExists:
        return FixtureExists(self.path, self.existing, f"use {flag}")


def _holding(old: ExistingFixture | None) -> str:
    if old is None or old.tool is None:
        why = old.problem if old is not None and old.problem else "unknown content"
        return f"holding no fixture that can be read ({why})"
    what = f"holding tool {old.tool!r}"
    if old.seq is not None:
        what += f" seq {old.seq}"
    if old.source is not None:
        what += f" of {old.source}"
    return what


def existing_fixture(plan: PinPlan) -> ExistingFixture | None:
    """The fixture already at ``plan.target`` (``None`` when there is none)."""
    if not plan.exists:
        return None
    from ..format.cassette import load

    try:
        old = load(plan.target, rules=plan.rules)
        if len(old) == 0:
            return ExistingFixture(problem="it holds no call")
        entry = old[0]
        same = same_outcome(old, 0, plan.fixture, 0)
    except (CassetteError, OSError, ValueError) as exc:
        return ExistingFixture(problem=str(exc))
    pinned = entry.extra.get("pinned")
    pinned = pinned if isinstance(pinned, dict) else {}
    source, seq, date = pinned.get("source"), pinned.get("seq"), pinned.get("date")
    return ExistingFixture(
        source=source if isinstance(source, str) else None,
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        date=date if isinstance(date, str) else None,
        same_outcome=same,
        tool=entry.tool,
    )


def plan_pin(
    cassette: Cassette,
    seq: int,
    out_dir: str | Path,
    *,
    source: str | Path | None = None,
    reason: str | None = None,
    now: datetime | None = None,
) -> PinPlan:
    """The fixture of the entry of ``cassette`` with ``seq`` in ``out_dir``, not written
    yet. ``source`` is the provenance's source (default: the cassette's path).

    Raises:
        LookupError: no entry has ``seq`` (the message lists the range there is).
        PinError: the fixture cannot be written there: ``out_dir`` (or a folder above
            it) is a file, or the fixture's path is a symlink or anything else than a
            regular file (a symlink is never written through, wherever it points).
    """
    where = source if source is not None else (cassette.path or "<memory>")
    index = cassette.index_of_seq(seq)
    if index is None:
        seqs = cassette.seqs
        have = f"seqs {min(seqs)}..{max(seqs)}" if seqs else "no entries"
        raise LookupError(f"{where}: no entry with seq {seq} ({have})")
    entry = cassette[index]
    tool, args_digest = cassette.key(index)
    stamp = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    provenance: dict[str, object] = {
        "source": str(where),
        "seq": seq,
        "key": {"tool": tool, "args_digest": args_digest},
        "date": stamp.isoformat().replace("+00:00", "Z"),
    }
    if reason:
        provenance["reason"] = reason
    # the run's outcome (on a run's last entry) tells how that run ended, not what this one
    # call returned: a fixture opened alone must not claim the run's reward or step limit
    extra = {k: v for k, v in entry.extra.items() if k != OUTCOME_FIELD}
    pinned = replace(entry, seq=1, extra={**extra, "pinned": provenance}, line=None)
    folder = Path(out_dir)
    name = fixture_name(tool, args_digest)
    # the name has no separator and no "..": it cannot leave the folder; checked anyway
    if Path(name).name != name or name in (".", ".."):  # pragma: no cover - by construction
        raise PinError(f"fixture name {name!r} would leave {folder}")
    target = folder / name
    problem = _folder_problem(folder) or _target_problem(target)
    if problem is not None:
        raise PinError(problem)
    fixture = Cassette.from_entries([pinned], rules=cassette.rules)
    return PinPlan(target, fixture, cassette.rules)


def write_pin(plan: PinPlan, *, force: bool = False) -> Path:
    """Write ``plan``'s fixture atomically (its folder created if needed); return its path.

    The fixture's path is checked once, by the write itself, right before it
    (``atomic.write_atomic``: anything but a regular file there, a symlink say, is never
    written through, and is looked at again just before the rename); ``plan_pin``'s check
    is for the preview, and the path may change between the two. The folder is checked
    again here: if it became a file since, the write's own error would read as "the
    fixture exists".

    Raises:
        FixtureExists: (a ``TargetExists``, ``FileExistsError``) the fixture exists and
            ``force`` is false; the message names the tool and call the file holds.
        PinError: it cannot be written (what ``plan_pin`` checks, if it changed since; the
            folder cannot be created or written), in plain words naming the path.
    """
    problem = _folder_problem(plan.target.parent)
    if problem is not None:
        raise PinError(problem)
    try:
        return save(plan.fixture, plan.target, overwrite=force, rules=plan.rules)
    except NotReplaceable as exc:  # not a regular file (since the plan, or meanwhile)
        raise PinError(_not_regular(plan.target, exc.kind)) from None
    except TargetExists as exc:
        raise FixtureExists(exc.path, existing_fixture(plan), exc.how) from None
    except OSError as exc:
        raise PinError(_cannot_write(plan.target, exc)) from None


def _folder_problem(folder: Path) -> str | None:
    """Why fixtures cannot go in ``folder``: it, or the nearest folder above it that
    exists, is a file (or a broken symlink); ``None`` when it is or can be a folder."""
    for place in (folder, *folder.parents):
        if not os.path.lexists(place):
            continue
        if os.path.isdir(place):
            return None
        what = "a file" if os.path.exists(place) else "a symlink to nothing"
        return (
            f"{place}: is {what}, not a folder; fixtures are written in {folder}/: move or "
            "rename it, or pin into another folder"
        )
    return None


def _target_problem(target: Path) -> str | None:
    kind = file_kind(target)
    if kind is None or kind == "regular file":
        return None
    return _not_regular(target, kind)


def _not_regular(target: Path, kind: str) -> str:
    return (
        f"{target}: is a {kind}, not a regular file; refusing to write through it, even "
        "with --force: remove it, or pin into another folder"
    )


def _cannot_write(target: Path, exc: OSError) -> str:
    """An ``OSError`` of the write in words: ``fixtures/x.jsonl: cannot write (permission
    denied): ...``, naming the file (or the folder the error names)."""
    where = exc.filename or target
    why = (exc.strerror or str(exc)).lower()
    hint = ""
    if isinstance(exc, PermissionError):
        hint = ": check the folder's permissions, or pin into another folder"
    elif exc.errno == 28:  # ENOSPC
        hint = ": free some space and pin again"
    return f"{where}: cannot write {target.name} ({why}){hint}"


def pin(
    source: str | Path,
    seq: int,
    out_dir: str | Path,
    *,
    reason: str | None = None,
    force: bool = False,
    rules: NormalizationRules | None = None,
    fmt: str | None = None,
    now: datetime | None = None,
) -> Path:
    """Write the entry of ``source`` with ``seq`` as a fixture in ``out_dir`` (created if
    needed); return the fixture's path.

    Raises:
        CassetteFormatError: ``source`` cannot be read.
        LookupError: no entry has ``seq`` (the message lists the range there is).
        FileExistsError: the fixture exists and ``force`` is false.
    """
    cassette: Cassette = open_cassette(source, fmt=fmt, rules=rules)
    plan = plan_pin(cassette, seq, out_dir, source=source, reason=reason, now=now)
    return write_pin(plan, force=force)
