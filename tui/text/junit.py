"""A gate as JUnit XML (``gate --junit FILE``): one ``<testcase>`` for the gated cassette,
its outcome by the verdict (``core/loop/junit.case_outcome``: ``deterministic`` passes,
``flaky`` fails with the tallies and where the runs part, a verdict that measured nothing
is an error), the gate's report lines in ``<system-out>``, secrets masked; the verdict,
pass rate, runs, clean runs and isolation as the suite's properties."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cassette_tui.core.loop.junit import JUnitCase, case_outcome, junit_xml
from cassette_tui.core.scan.masking import mask_text

if TYPE_CHECKING:
    from cassette_tui.core.loop.gate import GateResult


def gate_junit(result: GateResult, name: str, *, duration_s: float | None = None) -> bytes:
    """The JUnit XML document (UTF-8 bytes with an XML declaration) of one gate.

    Args:
        result: the gate.
        name: the cassette as the user named it: the test case's ``name``.
        duration_s: the gate's wall time in seconds (default: the runs' durations summed).
    """
    from .gate import gate_lines, verdict_line

    took = (
        duration_s if duration_s is not None else sum(r.duration_s or 0.0 for r in result.results)
    )
    headline = mask_text(verdict_line(result))
    detail = [headline]
    if result.divergence is not None:
        detail.append("where the runs part: " + mask_text(result.divergence.message))
    detail += [f"run {run.run}: {kind}: {mask_text(why)}" for run, kind, why in result.replays()
               if kind != "clean"]  # fmt: skip
    case = JUnitCase(
        name=mask_text(name),
        classname="cassette-tui.gate",
        outcome=case_outcome(result.verdict),
        time=took,
        kind=result.verdict,
        message=headline,
        detail="\n".join(detail),
        output="\n".join(mask_text(line.text) for line in gate_lines(result, name)),
    )
    properties = {
        "verdict": result.verdict,
        "passed": str(result.passed),
        "clean": str(result.clean),
        "runs": str(result.runs),
        "pass_rate": f"{result.pass_rate:.4f}",
        "isolation": result.runs_result.isolation,
        "strict": "true" if result.strict else "false",
    }
    return junit_xml("cassette-tui gate", [case], properties)
