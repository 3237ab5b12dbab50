"""The user's normalization rules checked against the recorded data (``check``), and
what a proposed set of rules would merge or fix before anyone adopts it.

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

For rules not adopted yet: ``over_normalization`` (the recorded calls they would merge
although their responses differ) and ``misses_turned_hits`` (the live calls that miss
today and would hit under them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..format.digest import digest
from ..format.findings import Finding
from .normalize import NormalizationRules, rules_of
from .replay_key import KeyIndex, args_digest, call_key

if TYPE_CHECKING:
    from ..format.cassette import Cassette


def rule_findings(cassette: Cassette) -> list[Finding]:
    """``over_normalization`` and ``unused_rule`` findings for the cassette's own rules
    (``load(path, rules=...)``); ``[]`` without rules."""
    rules = rules_of(cassette)
    if rules.is_empty and not rules.ignore_response:
        return []
    use = _RuleUse.of(cassette)
    findings = [] if rules.is_empty else _merged_calls(cassette, use)
    return findings + _unused_rules(rules, use)


@dataclass
class _RuleUse:
    """What the cassette's rules do to its entries (one pass over them).

    Attributes:
        used: per rule (``rules.rules``), whether it changes some entry's args.
        used_response: per ``ignore_response`` rule, whether it matches some response.
        strict: each entry's args digest without the rules (``[]`` without args rules).
        changed_by: entry index -> the rules (their indexes) that change its args.
    """

    used: list[bool]
    used_response: list[bool]
    strict: list[str]
    changed_by: dict[int, set[int]]

    @classmethod
    def of(cls, cassette: Cassette) -> _RuleUse:
        rules = rules_of(cassette)
        use = cls([False] * len(rules.rules), [False] * len(rules.ignore_response), [], {})
        for i in range(len(cassette)):
            entry = cassette._entry(i)
            if not entry.is_error:
                for r, ignore in enumerate(rules.ignore_response):
                    if (
                        not use.used_response[r]
                        and ignore.applies_to(entry.tool)
                        and ignore.apply(entry.response) != entry.response
                    ):
                        use.used_response[r] = True
            if rules.is_empty:
                continue
            use.strict.append(digest(entry.args))
            for r, rule in enumerate(rules.rules):
                if rule.applies_to(entry.tool) and rule.apply(entry.args) != entry.args:
                    use.used[r] = True
                    use.changed_by.setdefault(i, set()).add(r)
        return use


def _merged_calls(cassette: Cassette, use: _RuleUse) -> list[Finding]:
    """``over_normalization``: keys whose entries differ strictly and in outcome."""
    rules = rules_of(cassette)
    findings: list[Finding] = []
    for (tool, dig), idxs in KeyIndex.of(cassette).items():
        if len({use.strict[i] for i in idxs}) < 2:
            continue
        if len({cassette.fingerprint(i) for i in idxs}) < 2:
            continue
        seqs = tuple(cassette.seq(i) for i in idxs)
        culprits = sorted({r for i in idxs for r in use.changed_by.get(i, ())})
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
    return findings


def _unused_rules(rules: NormalizationRules, use: _RuleUse) -> list[Finding]:
    """``unused_rule``: args rules that change nothing, response rules that match nothing."""
    unused = [
        (rule, "changes no recorded call's args")
        for r, rule in enumerate(rules.rules)
        if not use.used[r]
    ] + [
        (ignore, "matches no recorded response")
        for r, ignore in enumerate(rules.ignore_response)
        if not use.used_response[r]
    ]
    return [
        Finding(
            kind="unused_rule",
            message=f"normalization rule {rule} {what}: a typo in its path or tool, or a "
            "rule no longer needed",
            evidence={"rule": str(rule)},
        )
        for rule, what in unused
    ]


@dataclass(frozen=True)
class OverNormalization:
    """Distinct recorded calls that ``rules`` would merge into one key although their
    responses differ: replay would serve one call another call's response.

    Attributes:
        tool: the tool of the merged calls.
        digest: the merged args digest under the rules.
        seqs: the seqs of every recorded entry under that key, in file order.
        distinct_calls: how many different keys (before the rules) were merged.
        distinct_responses: how many different outcomes those entries hold.
    """

    tool: str
    digest: str
    seqs: tuple[int, ...]
    distinct_calls: int
    distinct_responses: int


@dataclass(frozen=True)
class TurnedHit:
    """A live call that misses under the cassette's own rules but hits under the new ones.

    Attributes:
        n: 1-based position of the call among the live calls.
        tool: its tool.
        strict_digest: its args digest under the cassette's rules (the miss).
        digest: its args digest under the new rules (the hit).
        seqs: the recorded entries that would serve it.
    """

    n: int
    tool: str
    strict_digest: str
    digest: str
    seqs: tuple[int, ...]


def over_normalization(cassette: Cassette, rules: NormalizationRules) -> list[OverNormalization]:
    """Groups of recorded entries whose keys merge under ``rules`` although their
    responses differ (compared by ``cassette.fingerprint``). A key recorded several times
    with the same args (a retry) is not a merge: it was already one key."""
    groups = KeyIndex.from_keys(call_key(rules, e.tool, e.args) for e in cassette)
    found = []
    for (tool, dig), idxs in groups.items():
        before = {cassette.digest(i) for i in idxs}
        if len(before) < 2:
            continue
        outcomes = {cassette.fingerprint(i) for i in idxs}
        if len(outcomes) < 2:
            continue
        found.append(
            OverNormalization(
                tool, dig, tuple(cassette.seq(i) for i in idxs), len(before), len(outcomes)
            )
        )
    return found


def _call_parts(call: Any) -> tuple[str, Any]:
    if isinstance(call, Mapping):
        return call["tool"], call.get("args")
    if isinstance(call, tuple) and len(call) == 2:
        return call[0], call[1]
    return call.tool, call.args


def misses_turned_hits(
    cassette: Cassette, live_calls: Iterable[Any], rules: NormalizationRules
) -> list[TurnedHit]:
    """The live calls that miss under the cassette's own rules but would hit under
    ``rules``. ``live_calls``: ``(tool, args)`` pairs, ``{"tool", "args"}`` dicts or
    entries (``live_calls.jsonl`` rows load as dicts)."""
    strict_keys = {cassette.key(i) for i in range(len(cassette))}
    loose = KeyIndex.from_keys(call_key(rules, e.tool, e.args) for e in cassette)
    found = []
    for n, call in enumerate(live_calls, 1):
        tool, args = _call_parts(call)
        strict = args_digest(cassette.rules, tool, args)
        if (tool, strict) in strict_keys:
            continue
        dig = args_digest(rules, tool, args)
        if (tool, dig) in loose:
            seqs = tuple(cassette.seq(i) for i in loose[(tool, dig)])
            found.append(TurnedHit(n, tool, strict, dig, seqs))
    return found
