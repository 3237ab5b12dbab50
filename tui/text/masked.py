"""What ``diff`` prints of a row or a finding with every secret masked (``--json``,
``--format markdown``, the HTML report): the values the secret scan of ``check`` finds,
shown as ``check`` shows them (``«ghp_…(40 chars)»``)."""

from __future__ import annotations

from typing import Any

from cassette_tui.core.scan.masking import key_at, mask_found, mask_text, mask_value
from cassette_tui.core.scan.pair_masking import mask_pieces_in, pair_secrets


def masked_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``--json`` row with every secret in its values masked (``masking.mask_at``): each
    drift item's ``a`` and ``b`` under its path's last key, then every secret found on
    either side of any item masked on both (``core.scan.pair_masking``); an
    ``other_call`` row's args.
    The row itself when nothing is a secret; never changed in place."""
    drift = row.get("drift")
    calls = row.get("calls")
    out = row
    if drift:
        masked: list[tuple[dict[str, Any], Any, Any]] = []
        found_a: list[str] = []
        found_b: list[str] = []
        for item in drift:
            key = key_at(item.get("path"))
            a, in_a = mask_found(item.get("a"), key)
            b, in_b = mask_found(item.get("b"), key)
            masked.append((item, a, b))
            found_a.extend(in_a)
            found_b.extend(in_b)
        # a secret one side's scan found and the other's did not (a JSON text on one
        # side, the same text cut on the other): masked wherever it, or a run of it, shows
        secrets = pair_secrets(found_a, found_b)
        items = []
        for item, a, b in masked:
            a, b = mask_pieces_in(a, secrets), mask_pieces_in(b, secrets)
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
