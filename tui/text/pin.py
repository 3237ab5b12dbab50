"""The pin preview's text: where the fixture goes and what it holds, before it is written.

Built from a ``core.pin.PinPlan``; no Textual here (the screen is ``tui/screens/pin.py``).
"""

from __future__ import annotations

import json

from cassette_tui.core.loop.pin import ExistingFixture, PinPlan, existing_fixture
from rich.text import Text

from .safe import printable, printable_block, safe


def pin_heading(plan: PinPlan) -> Text:
    """Two lines: which entry is pinned (source, seq, tool) and the fixture's path."""
    provenance = plan.fixture[0].extra.get("pinned", {})
    key = provenance.get("key", {}) if isinstance(provenance, dict) else {}
    text = Text(no_wrap=False, end="")
    text.append("Pin ", style="bold")
    text.append(
        printable(
            f"seq {provenance.get('seq')} of {provenance.get('source')} "
            f"({key.get('tool', plan.fixture[0].tool)})"
        )
    )
    text.append("\nfile ", style="bold")
    text.append(safe(plan.target))
    return text


def pin_content(plan: PinPlan) -> Text:
    """The fixture's one line, indented for reading (written as one JSONL line)."""
    line = plan.text()
    try:
        shown = json.dumps(json.loads(line), indent=2, sort_keys=True, ensure_ascii=False)
    except ValueError:
        shown = line
    text = Text(end="")
    text.append("content (one JSONL line, shown indented)\n", style="dim")
    text.append(printable_block(shown))
    return text


def pin_prompt(plan: PinPlan, armed: bool, error: str | None = None) -> Text:
    """What enter will do: write, or (the file exists) ask again before replacing it."""
    text = Text(end="")
    if error:
        text.append(printable(f"not written: {error}"), style="bold")
        text.append("\n")
    if armed:
        text.append("! ", style="bold")
        old = existing_fixture(plan)
        if old is not None:
            # the file name and the old fixture's words are data; the line break is ours
            text.append(printable(f"{plan.target.name}: {existing_words(old, _tool(plan))}."))
            text.append("\n")
        text.append(
            printable(f"{plan.target.name} exists: enter again REPLACES it, escape keeps it"),
            style="bold",
        )
    elif plan.exists:
        text.append("! ", style="bold")
        text.append(printable(f"{plan.target.name} exists already"))
        old = existing_fixture(plan)
        if old is not None:
            text.append(printable(f": {existing_words(old, _tool(plan))}"))
        text.append(".\nenter: replace (asks again) · escape: cancel")
    else:
        text.append("enter: write the fixture · escape: cancel")
    return text


def _tool(plan: PinPlan) -> str | None:
    return plan.fixture[0].tool if len(plan.fixture) else None


def existing_words(old: ExistingFixture, tool: str | None = None) -> str:
    """What replacing the fixture loses, in a line: ``it holds seq 2 of runs/fail.jsonl,
    pinned 2026-11-30T21:02:11Z, with another response than this one`` (the same key:
    fixtures are named by tool and args digest); ``it holds tool 'a/b' seq 2 ...`` when
    its tool is not ``tool`` (the one about to be pinned)."""
    if old.problem is not None:
        return f"it cannot be read ({old.problem})"
    what = f"seq {old.seq}" if old.seq is not None else "a call"
    if tool is not None and old.tool is not None and old.tool != tool:
        what = f"tool {old.tool!r} {what}"
    where = f" of {old.source}" if old.source is not None else ""
    when = f", pinned {old.date}" if old.date is not None else ", not pinned by cassette-tui"
    if old.same_outcome:
        answer = "with the same response as this one"
    else:
        answer = "with ANOTHER response than this one (same key: replacing loses it)"
    return f"it holds {what}{where}{when}, {answer}"
