"""What ``diff`` prints of a row or a finding with every secret masked (``--json``,
``--format markdown``, the HTML report): the values the secret scan of ``check`` finds,
shown as ``check`` shows them (``«ghp_…(40 chars)»``)."""

from __future__ import annotations

from typing import Any

from cassette_tui.core.scan.masking import mask_at, mask_text, mask_value


def masked_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``--json`` row with every secret in its values masked (``masking.mask_at``): each
    drift item's ``a`` and ``b`` under its path's last key, an ``other_call`` row's args.
    The row itself when nothing is a secret; never changed in place."""
    drift = row.get("drift")
    calls = row.get("calls")
    out = row
    if drift:
        items = []
        for item in drift:
            a, b = (
                mask_at(item.get("a"), item.get("path")),
                mask_at(item.get("b"), item.get("path")),
            )
            path = item.get("path")
            shown = mask_text(path) if isinstance(path, str) else path
            same = a is item.get("a") and b is item.get("b") and shown == path
            items.append(item if same else {**item, "a": a, "b": b, "path": shown})
        out = {**out, "drift": items}
    if isinstance(calls, dict):
        out = {**out, "calls": {side: _masked_call(call) for side, call in calls.items()}}
    for field in ("tool", "tool_b"):  # a token used as a tool name
        tool = row.get(field)
        if isinstance(tool, str) and (shown := mask_value(tool)) is not tool:
            out = {**out, field: shown}
    return out


def masked_finding(doc: dict[str, Any]) -> dict[str, Any]:
    """A ``--json`` finding with every secret in its ``message`` and its ``evidence``
    masked; the digests it names (``sha256:…``) are ids, kept as they are."""
    return {key: _masked_leaves(value) for key, value in doc.items()}


def _masked_leaves(value: Any) -> Any:
    if isinstance(value, str):
        return mask_text(value)  # a digest is never taken for a secret
    if isinstance(value, dict):
        return {k: _masked_leaves(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked_leaves(v) for v in value]
    return value


def _masked_call(call: Any) -> Any:
    if not isinstance(call, dict) or "args" not in call:
        return call
    tool = call.get("tool")
    shown = mask_value(tool) if isinstance(tool, str) else tool
    return {**call, "tool": shown, "args": mask_value(call["args"])}
