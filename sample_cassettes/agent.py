"""A tiny offline agent for the article's ``retry-budget`` task, for the demo and tests.

It answers "what is our retry budget?" by calling two tools through a dispatcher wrapped
with ``wrap_dispatcher``, so the environment contract
(README, "Recording and replaying an agent") drives it:

    CASSETTE_MODE=replay CASSETTE_PATH=sample_cassettes/fail.jsonl python sample_cassettes/agent.py
    # -> exit 1: the stale top document says "up to 10 times"
    CASSETTE_MODE=replay CASSETTE_PATH=sample_cassettes/fix.jsonl python sample_cassettes/agent.py
    # -> exit 0
    CASSETTE_MODE=record CASSETTE_PATH=/tmp/new.jsonl python sample_cassettes/agent.py
    python sample_cassettes/agent.py --flaky      # the "model" samples: passes about half the time
    python sample_cassettes/agent.py --flaky --seed 2   # a reproducible draw ({run} in a gate)
    python sample_cassettes/agent.py --fixed     # the fix: a stale policy is checked again

``--fixed`` is a newcomer's fix: when the top document is a dated copy of the policy
(``retry-budget-2022.md``), the agent reads the current ``docs/retry-budget.md`` too. That
is one call ``fail.jsonl`` never recorded: replaying it misses there, unless the replay
answers new calls live (``cassette-tui replay --new-calls report|record``).

The "live" tools are a small in-process document index (no network): today's index ranks
the current ``docs/retry-budget.md`` first and rate-limits the first search once. Exit
status 0 is a pass (the answer cites the 10% budget), 1 a fail.

``--flaky`` adds nondeterminism above the tool layer, as a sampled model would: the tool
calls stay the same, but a random draw (``random.random() < 0.5``) decides whether the
answer trusts the documents or the model's own stale belief, so a gate of this agent is
flaky and says the nondeterminism is after the tool layer.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

from cassette_tui.core import wrap_dispatcher

DOCS = {
    "docs/retry-budget.md": (
        "Retry budget: retries may add at most 10% to the request rate; honour Retry-After."
    ),
    "docs/retry-budget-2022.md": (
        "Retry budget: retry each failed request up to 10 times, immediately."
    ),
    "docs/backoff.md": "Back off exponentially from 200 ms, with full jitter, capped at 10 s.",
}
RANKING = [
    ("docs/retry-budget.md", 0.93),
    ("docs/retry-budget-2022.md", 0.71),
    ("docs/backoff.md", 0.61),
]
_searches = 0


def live_dispatch(tool: str, args: dict[str, Any]) -> Any:
    """The live tools: a rate-limited search and a file reader over ``DOCS``."""
    global _searches
    if tool == "search_docs":
        _searches += 1
        if _searches == 1:
            return {"error": "rate_limited", "retry_after_s": 2, "status": 429}
        results = [{"path": p, "score": s} for p, s in RANKING[: args.get("top_k", 5)]]
        return {"hits": len(results), "results": results, "status": 200, "top": results[0]["path"]}
    if tool == "read_file":
        text = DOCS.get(args["path"])
        if text is None:
            raise FileNotFoundError(args["path"])
        return {"bytes": len(text), "text": text}
    raise ValueError(f"unknown tool {tool!r}")


#: what the "model" believes without reading the documents (stale: the 2022 policy)
PRIOR = "Retry budget: retry each failed request up to 10 times, immediately."


#: the current policy, read again by ``--fixed`` when the top document is a dated copy
CURRENT = "docs/retry-budget.md"


def run(flaky: bool = False, seed: int | None = None, fixed: bool = False) -> int:
    if seed is not None:
        random.seed(seed)
    dispatch = wrap_dispatcher(live_dispatch)
    for _attempt in range(10):
        found = dispatch("search_docs", {"q": "retry budget", "top_k": 5})
        if found.get("status") == 200:
            break
    else:
        print("search kept failing")
        return 1
    policy = dispatch("read_file", {"path": found["top"]})["text"]
    if fixed and found["top"] != CURRENT and "-20" in found["top"]:
        policy = dispatch("read_file", {"path": CURRENT})["text"]  # the fix: a new call
    backoff = dispatch("read_file", {"path": "docs/backoff.md"})["text"]
    answer = f"{policy} {backoff}"
    if flaky and random.random() < 0.5:
        answer = f"{PRIOR} {backoff}"  # sampled: the model ignored what it read
    print(answer)
    return 0 if "10%" in answer else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The retry-budget demo agent.")
    parser.add_argument(
        "--flaky", action="store_true", help="sample the answer (passes about half the time)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed the sampling, for a reproducible draw (a gate's --agent '... --seed {run}' "
        "gives each run its own)",
    )
    parser.add_argument(
        "--fixed",
        action="store_true",
        help="the fix: read the current policy when the top document is a dated copy",
    )
    args = parser.parse_args(argv)
    return run(flaky=args.flaky, seed=args.seed, fixed=args.fixed)


if __name__ == "__main__":
    sys.exit(main())
