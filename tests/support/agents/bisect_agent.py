"""The bisect tests' agent: asks ``check`` for each of N steps (``{"step": i}``) through
``wrap_dispatcher`` and fails (exit 1) when the answers of every step named in
``--needs`` are ``"bad"`` together, else passes (exit 0). ``--follow`` makes a ``"bad"``
answer at step 1 send the agent down another path: a ``recover`` call that only the
failing run made.

    python bisect_agent.py --steps 12 --needs 3,7
"""

from __future__ import annotations

import argparse
import sys

from cassette_tui.core import wrap_dispatcher


def live(tool: str, args: object) -> object:
    raise SystemExit("the live tool was called in a replay")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--needs", default="3,7")
    parser.add_argument("--follow", action="store_true")
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
    return 1 if needs <= bad else 0


if __name__ == "__main__":
    sys.exit(main())
