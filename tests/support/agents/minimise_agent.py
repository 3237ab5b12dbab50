"""The minimise tests' agent: asks ``check`` for each of N steps (``{"step": i}``) through
``wrap_dispatcher`` and fails when the answers of every step named in ``--needs`` are
``"bad"``: with an ``AssertionError`` (a traceback, exit 1), or with ``--exit CODE`` quietly
(no traceback). Otherwise it passes (exit 0).

``--tolerant`` catches a miss (``CassetteMiss``: an entry minimise removed) and goes on as
if that step had answered ``"good"``; without it a miss is an uncaught exception, another
failure than the one recorded. ``--flaky-run RUN`` (pass ``{run}``) passes on even runs:
a flaky agent. ``--flaky-without STEP``: flaky only when STEP's entry is missing.
``--need-hit``: a step counts as bad only when its answer also holds a ``results`` list
with an item ``{"hit": true}`` (what ``--shrink-responses`` must keep).
``--twice STEP`` asks for STEP twice and takes the second answer (a key recorded twice).
``--hang-without STEP --hang-with STEP2 --mark FILE``: when STEP misses and STEP2 is
answered, write its pid to FILE and sleep (a test cancels the command then).

    python minimise_agent.py --steps 20 --needs 4,9 --tolerant
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cassette_tui.core import CassetteMiss, wrap_dispatcher


def live(tool: str, args: object) -> object:
    raise SystemExit("the live tool was called in a replay")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--needs", default="3,7")
    parser.add_argument("--tolerant", action="store_true")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--flaky-run", type=int, default=0)
    parser.add_argument("--flaky-without", type=int, default=0)
    parser.add_argument("--hang-without", type=int, default=0)
    parser.add_argument("--hang-with", type=int, default=0)
    parser.add_argument("--mark", default="")
    parser.add_argument("--twice", type=int, default=0)
    parser.add_argument("--need-hit", action="store_true")
    opts = parser.parse_args()
    dispatch = wrap_dispatcher(live)
    needs = {int(x) for x in opts.needs.split(",") if x}
    bad, missed = set(), set()
    for step in range(1, opts.steps + 1):
        try:
            answer = dispatch("check", {"step": step})
            if step == opts.twice:
                answer = dispatch("check", {"step": step})
        except CassetteMiss:
            if not opts.tolerant:
                raise
            missed.add(step)
            continue
        hit = any(r.get("hit") for r in answer.get("results", [])) or not opts.need_hit
        if answer["state"] == "bad" and hit:
            bad.add(step)
    if opts.hang_without in missed and opts.hang_with in bad and opts.hang_with:
        Path(opts.mark).write_text(f"{os.getpid()}\n")
        time.sleep(3600)
    flaky = opts.flaky_run and (not opts.flaky_without or opts.flaky_without in missed)
    if needs <= bad and not (flaky and opts.flaky_run % 2 == 0):
        if opts.exit:
            return opts.exit
        raise AssertionError(f"steps {sorted(needs)} all answered bad")
    return 0


if __name__ == "__main__":
    sys.exit(main())
