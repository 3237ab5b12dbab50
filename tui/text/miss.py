"""The detail of one replay miss (enter on a miss of the replay screen): the call the agent
made, each nearest recorded call of the same tool with the argument paths that differ
(from the replay report, which ``core.nearest`` filled), and the nearest recorded entry
itself, its args with the differing paths highlighted. Rich renderables; no Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cassette_tui.core.format.jsonpath import child_path
from cassette_tui.core.scan.masking import mask_value
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from .detail import Limits, single_detail
from .replay import short_json, side_value
from .safe import safe

if TYPE_CHECKING:
    from cassette_tui.core.format.cassette import Cassette

Styles = Mapping[str, Style]


def _scalar(value: Any, limit: int) -> str:
    return short_json(value, limit)


def _under(path: str, marked: Iterable[str]) -> bool:
    return any(path == m or path.startswith((m + ".", m + "[")) for m in marked)


@dataclass(frozen=True)
class _Line:
    """A value to write (``close`` empty) or a closing bracket (``close`` set)."""

    indent: int
    prefix: str = ""
    node: Any = None
    path: str = "$"
    comma: str = ""
    close: str = ""
    hit: bool = False


def highlight_json(value: Any, marked: Iterable[str], style: Style | str, limit: int = 160) -> Text:
    """``value`` as indented JSON (2 spaces), the lines of every path in ``marked`` (and
    what is under it) in ``style`` with a ``▶`` in front, so they show without colour too.
    Walked without recursion (a value may be nested hundreds of levels)."""
    paths = tuple(marked)
    text = Text()
    stack = [_Line(0, node=value)]
    while stack:
        item = stack.pop()
        lead = "▶ " if item.hit else "  "
        line_style = style if item.hit else ""
        pad = " " * item.indent
        if item.close:
            text.append(f"{lead}{pad}{item.close}{item.comma}\n", line_style)
            continue
        node, path = item.node, item.path
        hit = path != "$" and _under(path, paths)
        lead = "▶ " if hit else "  "
        line_style = style if hit else ""
        if isinstance(node, dict) and node:
            text.append(f"{lead}{pad}{item.prefix}{{\n", line_style)
            stack.append(_Line(item.indent, comma=item.comma, close="}", hit=hit))
            keys = list(node)
            for n in reversed(range(len(keys))):
                key = keys[n]
                stack.append(
                    _Line(
                        item.indent + 2,
                        f"{_scalar(str(key), limit)}: ",
                        node[key],
                        child_path(path, str(key)),
                        "," if n < len(keys) - 1 else "",
                    )
                )
        elif isinstance(node, list) and node:
            text.append(f"{lead}{pad}{item.prefix}[\n", line_style)
            stack.append(_Line(item.indent, comma=item.comma, close="]", hit=hit))
            for n in reversed(range(len(node))):
                comma = "," if n < len(node) - 1 else ""
                stack.append(_Line(item.indent + 2, "", node[n], child_path(path, n), comma))
        else:
            scalar = _scalar(node, limit)
            text.append(f"{lead}{pad}{item.prefix}{scalar}{item.comma}\n", line_style)
    text.rstrip()
    return text


def miss_title(miss: Mapping[str, Any]) -> Text:
    """``miss · search_docs · sha256:…``."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("miss", style="bold")
    text.append(f" · {safe(miss.get('tool'))} · ")
    text.append(safe(miss.get("digest")), style="dim")
    return text


def miss_detail(
    miss: Mapping[str, Any],
    cassette: Cassette | None,
    styles: Styles,
    limits: Limits | None = None,
) -> RenderableType:
    """The miss, its nearest recorded calls and the first one's entry.

    ``miss`` is one entry of the replay report's ``misses`` (``{"tool", "digest", "args",
    "nearest": [{"seq", "args_digest", "differences": [{"path", "recorded", "live",
    "absent", "kind"}]}]}``); ``cassette`` is the cassette replayed (``None``: the entry is
    not shown)."""
    limits = limits or Limits()
    old = styles.get("detail--old", "")
    new = styles.get("detail--new", "")
    nearest = list(miss.get("nearest") or [])
    first_paths = (
        [str(d.get("path")) for d in (nearest[0].get("differences") or [])] if nearest else []
    )
    parts: list[RenderableType] = [miss_title(miss)]
    parts.append(Text("the agent called it with (▶ differs from the nearest recorded call)",
                      style="bold underline"))  # fmt: skip
    parts.append(highlight_json(_shown(miss.get("args"), limits), first_paths, new))
    if not nearest:
        parts.append(Text(f"no call of {safe(miss.get('tool'))} was recorded", style="bold"))
        return Group(*parts)
    for rank, cand in enumerate(nearest, 1):
        parts.extend(_candidate_lines(rank, cand, old, new))
    seq = nearest[0].get("seq")
    index = (
        cassette.index_of_seq(int(seq)) if cassette is not None and isinstance(seq, int) else None
    )
    if cassette is not None and index is not None:
        entry = cassette[index]
        parts.append(Text(f"recorded seq {seq} (▶ the paths that differ)", style="bold underline"))
        parts.append(highlight_json(_shown(entry.args, limits), first_paths, old))
        parts.append(Text("the whole recorded entry", style="bold underline"))
        parts.append(single_detail(cassette, index, [], limits, styles))
    return Group(*parts)


def _shown(args: Any, limits: Limits) -> Any:
    """``args`` with each secret masked (``mask_value``), unless revealed (``v``)."""
    return args if limits.reveal_secrets else mask_value(args)


def _candidate_lines(
    rank: int, cand: Mapping[str, Any], old: Style | str, new: Style | str
) -> list[Text]:
    """Nearest recorded call number ``rank``: its seq and digest, then each path whose
    value differs, recorded (``old`` style) -> live (``new`` style)."""
    title = Text()
    title.append(f"nearest {rank}: seq {cand.get('seq')}", style="bold underline")
    title.append(f"  {safe(cand.get('args_digest'))}", style="dim")
    lines = [title]
    diffs = list(cand.get("differences") or [])
    if not diffs:
        lines.append(Text("same args once normalized", style="dim"))
    for d in diffs:
        line = Text()
        line.append(safe(d.get("path")), style="bold")
        line.append("  recorded ")
        line.append(side_value(d, "recorded", 40), old)
        line.append(" -> live ")
        line.append(side_value(d, "live", 40), new)
        line.append(f"  [{safe(d.get('kind'))}]", style="dim")
        lines.append(line)
    return lines
