"""A miss whose args differ as null against left out: ``cassette-tui replay`` says which
side is absent in the words of the app's miss screen (``(absent)``), with the ``nulls``
preset's hint of ``CassetteMiss``, and its --json report keeps absent apart from null."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cassette_tui.core.format.errors import NULLS_HINT
from cassette_tui.core.replay.report import Miss
from cassette_tui.tui.text.replay import difference_line, nearest_lines
from support.loop import DEMO_AGENT, agent_cmd
from support.paths import SAMPLES, SCRIPT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSETTE_")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def _with_null_lang(tmp_path: Path) -> Path:
    """The sample fix.jsonl with ``"lang": null`` added to every entry's args (the demo
    agent leaves ``lang`` out)."""
    records = [
        json.loads(line)
        for line in (SAMPLES / "fix.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for record in records:
        record["args"]["lang"] = None
        record.pop("args_digest", None)
    path = tmp_path / "null-lang.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_replay_text_says_which_side_is_absent(tmp_path: Path) -> None:
    done = cli("replay", str(_with_null_lang(tmp_path)), "--agent", agent_cmd(script=DEMO_AGENT))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert "      $.lang: recorded null, live (absent) [missing]" in lines, done.stdout
    assert "live null" not in done.stdout
    assert f"    {NULLS_HINT}" in lines


def test_replay_json_keeps_absent_apart_from_null(tmp_path: Path) -> None:
    done = cli(
        "replay", str(_with_null_lang(tmp_path)), "--agent", agent_cmd(script=DEMO_AGENT), "--json"
    )
    assert done.returncode == 1, done.stderr
    misses = json.loads(done.stdout)["replay_report"]["misses"]
    (difference,) = misses[0]["nearest"][0]["differences"]
    assert difference == {
        "path": "$.lang",
        "recorded": None,
        "live": None,
        "absent": "live",
        "kind": "missing",
    }


def test_difference_line_words_each_case() -> None:
    def line(recorded: object, live: object, absent: str | None, kind: str = "missing") -> str:
        return difference_line(
            {"path": "$.lang", "recorded": recorded, "live": live, "absent": absent, "kind": kind}
        )

    assert line(None, None, "live") == "$.lang: recorded null, live (absent) [missing]"
    assert line(None, None, "recorded") == "$.lang: recorded (absent), live null [missing]"
    assert line("en", None, "recorded") == "$.lang: recorded (absent), live null [missing]"
    assert line("en", None, None, "other") == '$.lang: recorded "en", live null [other]'
    assert line(None, "en", None, "other") == '$.lang: recorded null, live "en" [other]'
    # a string "(absent)" is a value, quoted: never taken for a left-out path
    assert line("(absent)", None, "live") == '$.lang: recorded "(absent)", live (absent) [missing]'


def test_nulls_hint_only_for_null_against_absent() -> None:
    def miss(recorded: object, live: object, absent: str | None) -> list[str]:
        d = {"path": "$.x", "recorded": recorded, "live": live, "absent": absent, "kind": "k"}
        near = {"seq": 1, "args_digest": "d", "differences": [d]}
        return list(nearest_lines(Miss("t", "sha256:0", None, (near,))))

    assert miss(None, None, "live")[-1].strip() == NULLS_HINT
    assert miss(None, None, "recorded")[-1].strip() == NULLS_HINT
    assert all(NULLS_HINT not in line for line in miss(1, None, "live"))
    assert all(NULLS_HINT not in line for line in miss(None, 2, None))
