"""The ``--cassette-gate=N`` collector: each run's outcome and call log travel with its test
report (pytest-xdist sends them to the controller), and at the end the controller gates
each test (see the package doc)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.loop.call_log import call_log_entries
from cassette_tui.core.loop.divergence import divergence
from cassette_tui.core.loop.gate import VERDICT_EXIT, verdict_of
from cassette_tui.core.loop.junit import JUnitCase, case_outcome, junit_xml
from cassette_tui.core.loop.results import report_replay
from cassette_tui.core.replay.report import ReplayReport
from cassette_tui.core.scan.masking import mask_text

#: the user property that carries one gate run from a worker to the controller
GATE_PROPERTY = "cassette_gate_run"


def read_env_report(path: Path) -> ReplayReport | None:
    """The report a ``wrap_dispatcher()`` inside the test wrote to ``CASSETTE_REPORT``
    (``None`` when there is none, or it cannot be read)."""
    from cassette_tui.core.replay.report_sink import flush_all

    flush_all()
    try:
        return ReplayReport.read_run(path)  # with its journal: every process's calls
    except (OSError, ValueError):  # ReplayReportError is a ValueError
        return None


def gate_test_id(item: pytest.Item) -> str:
    """The node id without the gate's parameter (``test_x[gate3]`` -> ``test_x``; other
    parameters kept: ``test_x[a-gate3]`` -> ``test_x[a]``)."""
    nodeid = item.nodeid
    if "[" not in nodeid:
        return nodeid
    head, _, params = nodeid.partition("[")
    parts = [p for p in params.rstrip("]").split("-") if not p.startswith("gate")]
    return f"{head}[{'-'.join(parts)}]" if parts else head


@dataclass
class _Run:
    run: int
    passed: bool


class GateCollector:
    """Collects each gate run's outcome and call log from the test reports (on the
    controller under xdist) and gates every test at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.runs: dict[str, dict[int, dict[str, Any]]] = {}
        self._outcomes: dict[str, bool] = {}
        self.flaky: list[str] = []
        self.unmeasured: list[str] = []
        self.lines: list[str] = []
        #: one JUnit test case per gated test (``--cassette-junit``)
        self.cases: list[JUnitCase] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when in ("setup", "call"):
            failed = report.failed or (report.when == "setup" and report.skipped)
            if failed or report.when == "call":
                self._outcomes.setdefault(report.nodeid, not failed)
            return
        for name, value in report.user_properties:
            if name != GATE_PROPERTY:
                continue
            run = json.loads(cast(str, value))  # the JSON text the fixture appended
            run["passed"] = self._outcomes.pop(report.nodeid, False) and not report.failed
            self.runs.setdefault(run["test"], {})[run["run"]] = run

    def gate(self) -> None:
        self.lines, self.flaky, self.unmeasured, self.cases = [], [], [], []
        for test, by_run in sorted(self.runs.items()):
            first_line = len(self.lines)
            runs = [by_run[n] for n in sorted(by_run)]
            kinds = [
                report_replay(ReplayReport.from_json(r["report"]) if r.get("report") else None)
                for r in runs
            ]
            verdict = verdict_of(
                [
                    (
                        kind,
                        r["passed"],
                        kind != "no_tool_call",
                        r["passed"] and kind == "no_tool_call",
                    )
                    for r, (kind, _) in zip(runs, kinds, strict=True)
                ]
            )
            clean = [r for r, (kind, _) in zip(runs, kinds, strict=True) if kind == "clean"]
            passed = sum(r["passed"] for r in clean)
            flaky = verdict == "flaky"
            workers = sorted({r["worker"] for r in runs if r.get("worker")})
            where = f" (runs on {', '.join(workers)})" if workers else ""
            label = "FLAKY" if flaky else verdict
            if len(clean) == len(runs):
                self.lines.append(f"{label} {test}: {passed}/{len(runs)} passed{where}")
            else:
                self.lines.append(
                    f"{label} {test}: {len(clean)} of {len(runs)} runs replayed cleanly{where}"
                )
                self.lines.extend(
                    f"    run {r['run']}: {kind}: {why}"
                    for r, (kind, why) in zip(runs, kinds, strict=True)
                    if kind != "clean"
                )
            if VERDICT_EXIT[verdict] == 2:
                self.unmeasured.append(test)
            if not flaky:
                self._case(test, verdict, runs, self.lines[first_line:])
                continue
            self.flaky.append(test)
            logs: list[tuple[Any, Cassette | None]] = []
            cassettes: dict[str, Cassette] = {}
            for r in runs:
                log = None
                if r.get("report"):
                    source = cassettes.get(r["cassette"])
                    if source is None:
                        source = cassettes[r["cassette"]] = load(
                            r["cassette"], rules=load_rules(r.get("config"))
                        )
                    report = ReplayReport.from_json(r["report"])
                    log = Cassette.from_entries(
                        call_log_entries(report, source), rules=source.rules
                    )
                logs.append((_Run(r["run"], r["passed"]), log))
            div = divergence(logs, flaky=True)
            if div is not None:
                self.lines.append(f"    {div.message}")
            self._case(test, verdict, runs, self.lines[first_line:])

    def _case(self, test: str, verdict: str, runs: list[dict[str, Any]], lines: list[str]) -> None:
        """The JUnit test case of one gated test: its verdict's outcome, its summary lines
        (masked) as the failure's text."""
        text = [mask_text(line.strip()) for line in lines]
        classname, _, name = test.rpartition("::")
        self.cases.append(
            JUnitCase(
                name=name or test,
                classname=classname.replace("/", ".").removesuffix(".py") or "cassette-gate",
                outcome=case_outcome(verdict),
                kind=verdict,
                message=text[0] if text else verdict,
                detail="\n".join(text),
                output="\n".join(text),
                properties={"verdict": verdict, "runs": str(len(runs))},
            )
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.gate()
        target = self.config.getoption("cassette_junit")
        if target:
            write_atomic(target, [junit_xml("cassette gate", self.cases)], overwrite=True)
        if self.unmeasured and session.exitstatus in (0, 1):
            session.exitstatus = VERDICT_EXIT["unclean_replay"]  # 2: the gate measured nothing
        elif self.flaky and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.section("cassette gate")
        for line in self.lines:
            terminalreporter.write_line(line)
        if self.flaky:
            terminalreporter.write_line(
                f"{len(self.flaky)} test(s) flaky under --cassette-gate: the pass rate must be "
                "0 or 1 (fix the nondeterminism the lines above point to)"
            )
        if self.unmeasured:
            terminalreporter.write_line(
                f"{len(self.unmeasured)} test(s) not measured under --cassette-gate: not every "
                "replay was clean (a miss, a call past the last recording, no tool call); only "
                "clean replays measure the agent (exit 2)"
            )
