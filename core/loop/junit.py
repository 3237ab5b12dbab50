"""JUnit XML, the report format CI systems read (Jenkins, GitLab, GitHub Actions' test
reporters, Azure Pipelines), for gates: one ``<testcase>`` per gated cassette or pytest
test, so flakiness shows as a failing test instead of hiding behind retries. Elements and
attributes are those of the Jenkins/Ant JUnit schema (``testsuites > testsuite >
properties, testcase > failure | error, system-out``).

``gate --junit`` (the CLI) and ``--cassette-junit`` (the pytest plugin) both write through
``junit_xml``; how a verdict maps to an outcome is ``case_outcome``.
"""

from __future__ import annotations

import platform
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path


def case_outcome(verdict: str) -> str:
    """``"passed"`` for ``deterministic`` (the cassette replays the same way every time,
    passed or failed), ``"failure"`` for ``flaky``, ``"error"`` for a verdict that measured
    nothing (``unclean_replay``, ``infrastructure``, ``no_tool_call``, ``no_replay``,
    ``incomplete``): the gate could not run, which is not the agent's fault."""
    if verdict == "deterministic":
        return "passed"
    return "failure" if verdict == "flaky" else "error"


@dataclass
class JUnitCase:
    """One test case: ``outcome`` is ``case_outcome``'s; ``kind`` (the failure's
    ``type``: the verdict), ``message`` (one line) and ``detail`` (its text) apply to a
    failure or an error; ``output`` goes in ``<system-out>``; ``time`` in seconds."""

    name: str
    classname: str
    outcome: str
    time: float = 0.0
    kind: str = ""
    message: str = ""
    detail: str = ""
    output: str = ""
    properties: dict[str, str] = field(default_factory=dict)


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (C0 controls but tab and line
    ends, lone surrogates, U+FFFE/U+FFFF), each shown as ``\\uXXXX``."""
    out = []
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF):
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def junit_xml(
    suite: str, cases: list[JUnitCase], properties: dict[str, str] | None = None
) -> bytes:
    """The JUnit XML document (UTF-8 with an XML declaration) of one suite of ``cases``,
    counts and time summed from them; ``properties`` on the suite."""
    failures = sum(c.outcome == "failure" for c in cases)
    errors = sum(c.outcome == "error" for c in cases)
    took = sum(c.time for c in cases)
    root = ET.Element(
        "testsuites", tests=str(len(cases)), failures=str(failures), errors=str(errors)
    )
    node = ET.SubElement(
        root, "testsuite", name=xml_text(suite), tests=str(len(cases)), failures=str(failures),
        errors=str(errors), skipped="0", time=f"{took:.3f}",
        timestamp=datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat(),
        hostname=xml_text(platform.node() or "localhost"),
    )  # fmt: skip
    if properties:
        props = ET.SubElement(node, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=xml_text(key), value=xml_text(value))
    for case in cases:
        element = ET.SubElement(
            node, "testcase", name=xml_text(case.name), classname=xml_text(case.classname),
            time=f"{case.time:.3f}",
        )  # fmt: skip
        if case.properties:
            props = ET.SubElement(element, "properties")
            for key, value in case.properties.items():
                ET.SubElement(props, "property", name=xml_text(key), value=xml_text(value))
        if case.outcome in ("failure", "error"):
            outcome = ET.SubElement(element, case.outcome, message=xml_text(case.message),
                                    type=xml_text(case.kind))  # fmt: skip
            outcome.text = xml_text(case.detail)
        if case.output:
            out = ET.SubElement(element, "system-out")
            out.text = xml_text(case.output)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def check_junit_target(path: str | Path) -> None:
    """Refuse a JUnit output path that holds something other than a JUnit report (a
    cassette named by mistake is never replaced): ``gate --junit`` and pytest's
    ``--cassette-junit`` alike.

    Raises:
        FileExistsError: the file exists and does not start as XML.
    """
    p = Path(path)
    if not p.is_file():
        return
    with open(p, "rb") as fh:
        head = fh.read(256).lstrip()
    if not (head.startswith(b"<?xml") or head.startswith(b"<testsuite")):
        raise FileExistsError(
            f"{path}: exists and is not a JUnit XML report; not replaced "
            "(name another --junit file)"
        )
