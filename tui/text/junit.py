"""A gate as JUnit XML (``gate --junit FILE``), the report format CI systems read (Jenkins,
GitLab, GitHub Actions' test reporters, Azure Pipelines): one ``<testsuite>``, one
``<testcase>`` per gated cassette, so flakiness shows as a failing test instead of hiding
behind retries.

The case's outcome follows the gate's exit status: ``deterministic`` passes (the cassette
replays the same way every time, passed or failed); ``flaky`` is a ``<failure>`` with the
tallies and where the runs part; a verdict that measured nothing (``unclean_replay``,
``infrastructure``, ``no_tool_call``, ``no_replay``, ``incomplete``) is an ``<error>``: the
gate could not run, which is not the agent's fault. The gate's report lines go in
``<system-out>``, secrets masked. Elements and attributes are those of the Jenkins/Ant
JUnit schema (``testsuites > testsuite > testcase > failure|error``, ``properties``,
``system-out``).
"""

from __future__ import annotations

import platform
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cassette_tui.core.scan.masking import mask_text

if TYPE_CHECKING:
    from cassette_tui.core.loop.gate import GateResult

#: what kind of JUnit outcome each verdict is
FAILURE_VERDICTS = frozenset({"flaky"})
PASSING_VERDICTS = frozenset({"deterministic"})


def _xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (C0 controls but tab and line
    ends, lone surrogates), each shown as ``\\uXXXX``."""
    out = []
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF):
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def gate_junit(result: GateResult, name: str, *, duration_s: float | None = None) -> bytes:
    """The JUnit XML document (UTF-8 bytes with an XML declaration) of one gate.

    Args:
        result: the gate.
        name: the cassette as the user named it: the test case's ``name``.
        duration_s: the gate's wall time in seconds (default: the runs' durations summed).

    The suite counts ``tests=1`` and ``failures``/``errors`` by the verdict (see the module
    docstring); ``properties`` carry the verdict, pass rate, runs, clean runs and isolation.
    """
    from .gate import gate_lines, verdict_line

    verdict = result.verdict
    took = duration_s
    if took is None:
        took = sum(r.duration_s or 0.0 for r in result.results)
    failures = 1 if verdict in FAILURE_VERDICTS else 0
    errors = 0 if verdict in PASSING_VERDICTS or failures else 1
    suites = ET.Element("testsuites", tests="1", failures=str(failures), errors=str(errors))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="cassette-tui gate",
        tests="1",
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=f"{took:.3f}",
        timestamp=datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat(),
        hostname=_xml_text(platform.node() or "localhost"),
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("verdict", verdict),
        ("passed", str(result.passed)),
        ("clean", str(result.clean)),
        ("runs", str(result.runs)),
        ("pass_rate", f"{result.pass_rate:.4f}"),
        ("isolation", result.runs_result.isolation),
        ("strict", "true" if result.strict else "false"),
    ):
        ET.SubElement(props, "property", name=key, value=_xml_text(str(value)))
    case = ET.SubElement(
        suite,
        "testcase",
        name=_xml_text(mask_text(name)),
        classname="cassette-tui.gate",
        time=f"{took:.3f}",
    )
    headline = mask_text(verdict_line(result))
    report = "\n".join(mask_text(line.text) for line in gate_lines(result, name))
    if failures or errors:
        detail = [headline]
        if result.divergence is not None:
            detail.append("where the runs part: " + mask_text(result.divergence.message))
        for run, kind, why in result.replays():
            if kind != "clean":
                detail.append(f"run {run.run}: {kind}: {mask_text(why)}")
        outcome = ET.SubElement(
            case, "failure" if failures else "error", message=_xml_text(headline), type=verdict
        )
        outcome.text = _xml_text("\n".join(detail))
    out = ET.SubElement(case, "system-out")
    out.text = _xml_text(report)
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n"
