"""The user's normalization rules checked against the recorded data (``check``).

A rule is a bet that two spellings of a call ask the same thing. The recording can prove
it wrong in two ways, and ``check`` reports both (each a finding, so ``check`` exits 1):

``over_normalization``
    Under the configured rules, recorded calls whose args differ (strictly) share one
    key although their outcomes differ too: replay would serve one call another's answer.
    The finding names the tool, the seqs and the rules that changed those args.
``unused_rule``
    A configured rule that changes no recorded call's args, or an ``ignore_response``
    rule that matches no recorded response: a typo in a path, a tool name that does not
    exist, or a rule that is no longer needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..format.digest import digest
from ..format.findings import Finding
from .normalize import rules_of

if TYPE_CHECKING:
    from ..format.cassette import Cassette


def rule_findings(cassette: Cassette) -> list[Finding]:
    """``over_normalization`` and ``unused_rule`` findings for the cassette's own rules
    (``load(path, rules=...)``); ``[]`` without rules."""
    rules = rules_of(cassette)
    if rules.is_empty and not rules.ignore_response:
        return []
    groups: dict[tuple[str, str], list[int]] = {}
    strict: list[str] = []
    used = [False] * len(rules.rules)
    used_response = [False] * len(rules.ignore_response)
    changed_by: dict[int, set[int]] = {}
    for i in range(len(cassette)):
        entry = cassette._entry(i)
        if not entry.is_error:
            for r, ignore in enumerate(rules.ignore_response):
                if (
                    not used_response[r]
                    and ignore.applies_to(entry.tool)
                    and ignore.apply(entry.response) != entry.response
                ):
                    used_response[r] = True
        if rules.is_empty:
            continue
        strict.append(digest(entry.args))
        groups.setdefault(cassette.key(i), []).append(i)
        for r, rule in enumerate(rules.rules):
            if rule.applies_to(entry.tool) and rule.apply(entry.args) != entry.args:
                used[r] = True
                changed_by.setdefault(i, set()).add(r)
    findings: list[Finding] = []
    for (tool, dig), idxs in groups.items():
        if len({strict[i] for i in idxs}) < 2:
            continue
        if len({cassette.fingerprint(i) for i in idxs}) < 2:
            continue
        seqs = tuple(cassette.seq(i) for i in idxs)
        culprits = sorted({r for i in idxs for r in changed_by.get(i, ())})
        named = ", ".join(str(rules.rules[r]) for r in culprits) or "the rules"
        findings.append(
            Finding(
                kind="over_normalization",
                seq=seqs[0],
                seqs=seqs,
                message=f"{tool} calls with different args and different outcomes (seq "
                f"{', '.join(map(str, seqs))}) share one key {dig} under {named}: replay "
                "would serve one call another call's answer; scope or drop the rule",
                evidence={
                    "tool": tool,
                    "digest": dig,
                    "rules": [str(rules.rules[r]) for r in culprits],
                },
            )
        )
    for r, rule in enumerate(rules.rules):
        if not used[r]:
            findings.append(
                Finding(
                    kind="unused_rule",
                    message=f"normalization rule {rule} changes no recorded call's args: a "
                    "typo in its path or tool, or a rule no longer needed",
                    evidence={"rule": str(rule)},
                )
            )
    for r, ignore in enumerate(rules.ignore_response):
        if not used_response[r]:
            findings.append(
                Finding(
                    kind="unused_rule",
                    message=f"normalization rule {ignore} matches no recorded response: a "
                    "typo in its path or tool, or a rule no longer needed",
                    evidence={"rule": str(ignore)},
                )
            )
    return findings
