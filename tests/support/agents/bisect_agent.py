"""The bisect tests' agent: asks ``check`` for each of N steps (``{"step": i}``) through
``wrap_dispatcher`` and fails (exit 1) when the answers of every step named in
``--needs`` are ``"bad"`` together, else passes (exit 0). ``--follow`` makes a ``"bad"``
answer at step 1 send the agent down another path: a ``recover`` call that only the
failing run made. ``--when S --then hang|flaky|lost``: when the steps answered ``"bad"``
are exactly S, the agent hangs (a run to cancel), passes only in odd runs (``--run
{run}``: a flaky candidate), or asks ``lost``, a call no run made (it leaves the recording).

    python bisect_agent.py --steps 12 --needs 3,7
    python bisect_agent.py --steps 4 --needs 1,2 --when 1 --then flaky --run {run}
"""

from __future__ import annotations

import argparse
import sys
import time

from cassette_tui.core import wrap_dispatcher


def live(tool: str, args: object) -> object:
    raise SystemExit("the live tool was called in a replay")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--needs", default="3,7")
    parser.add_argument("--follow", action="store_true")
    parser.add_argument("--when", default=None)
    parser.add_argument("--then", choices=["hang", "flaky", "lost"], default=None)
    parser.add_argument("--run", type=int, default=1)
    opts = parser.parse_args()
    dispatch = wrap_dispatcher(live)
    needs = {int(x) for x in opts.needs.split(",") if x}
    bad = set()
    for step in range(1, opts.steps + 1):
        answer = dispatch("check", {"step": step})
        if answer["state"] == "bad":
            bad.add(step)
            if step == 1 and opts.follow:
                dispatch("recover", {"from": step})
    if opts.when is not None and bad == {int(x) for x in opts.when.split(",") if x}:
        if opts.then == "hang":
            while True:
                time.sleep(1)
        if opts.then == "flaky":
            return 1 if opts.run % 2 == 0 else 0  # odd runs pass
        if opts.then == "lost":
            dispatch("lost", {"after": max(bad)})
    return 1 if needs <= bad else 0


if __name__ == "__main__":
    sys.exit(main())
