"""The pytest plugin (entry point ``pytest11``, name ``cassette``): tests replay an agent's
tool calls from a cassette, and ``--cassette-gate=N`` gates them.

Mark a test and wrap its dispatcher through the ``cassette`` fixture::

    @pytest.mark.cassette("retry-budget.jsonl")        # default: <module>/<test>.jsonl
    def test_agent_answers(cassette):
        dispatch = cassette.wrap(live_dispatch)         # replay: never calls live_dispatch
        assert run_agent(dispatch) == 0

Names are looked up under the ``cassette_dir`` ini option (default ``cassettes``) beside
the test file, then beside the test file itself, so a pinned fixture
(``cassette-tui pin ... -o tests/cassettes/fixtures``) is ``"fixtures/NAME.jsonl"``. A marked
test also gets ``CASSETTE_MODE``/``CASSETTE_PATH``/``CASSETTE_REPORT`` in its environment,
so code that calls ``wrap_dispatcher()`` itself replays as well.

``--cassette-record`` (ini ``cassette_record``), in the style of pytest-recording:
``none`` (default: replay; a missing cassette fails the test), ``once`` (record a missing
cassette live, replay an existing one), ``all`` (record every marked test live, replacing
its cassette: the explicit flag that allows it).

``--cassette-gate=N`` runs every marked test N times as separate items (``test[gate3]``)
in replay mode. Each run's outcome and call log travel with its test report (pytest-xdist
sends them to the controller), and at the end the controller gates each test: a pass rate
that is neither 0 nor 1 fails the session with the gate's explanation (where the runs
part: after the tool layer, or the first call at which they differ and how many runs took
each path), in a "cassette gate" section of the summary. Only clean replays count (the
rule of ``cassette-tui gate``: no miss, no call past the last recording, at least one tool
call; a test that catches a miss and passes is no clean replay): a test whose runs were
not all clean gets the verdict ``unclean_replay`` (or ``no_tool_call`` when no run made a
call), its unclean runs are named, and the session's exit status is 2 (the gate measured
nothing), over a 1 of failed tests. Because the runs are ordinary
items, ``pytest -n auto`` spreads them over cores and ``--tx ssh=host//python=python3
--rsyncdir .`` over machines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from cassette_tui.core.format.cassette import Cassette, load
from cassette_tui.core.format.constants import ENV_CONFIG, ENV_MODE, ENV_PATH, ENV_REPORT
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.loop.call_log import call_log_entries
from cassette_tui.core.loop.divergence import divergence
from cassette_tui.core.loop.gate import VERDICT_EXIT, verdict_of
from cassette_tui.core.loop.results import report_replay
from cassette_tui.core.replay.report import ReplayReport
from cassette_tui.core.replay.wrap import wrap_dispatcher

RECORD_MODES = ("none", "once", "all")
#: the user property that carries one gate run from a worker to the controller
GATE_PROPERTY = "cassette_gate_run"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cassette", "cassette-tui: replay tool calls from cassettes")
    group.addoption(
        "--cassette-record",
        choices=RECORD_MODES,
        default=None,
        help="none: replay only (default); once: record missing cassettes live; all: "
        "record every cassette-marked test live, replacing its cassette.",
    )
    group.addoption(
        "--cassette-gate",
        type=int,
        default=0,
        metavar="N",
        help="Run every cassette-marked test N times (replay) and fail a test whose pass "
        "rate is neither 0 nor 1, saying where the runs part.",
    )
    parser.addini(
        "cassette_dir", "Folder of cassettes, beside each test file.", default="cassettes"
    )
    parser.addini("cassette_record", "Default --cassette-record mode.", default="none")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cassette(name=None, *, repeat='error'): replay the test's tool calls from the "
        "cassette NAME (see the cassette fixture).",
    )
    mode = config.getoption("cassette_record") or config.getini("cassette_record")
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"cassette_record = {mode!r}; expected one of {RECORD_MODES}")
    if config.getoption("cassette_gate") < 0:
        raise pytest.UsageError("--cassette-gate takes a number of runs (>= 1)")
    if config.getoption("cassette_gate") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(GateCollector(config), "cassette-gate-collector")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    runs = metafunc.config.getoption("cassette_gate")
    if runs and metafunc.definition.get_closest_marker("cassette") is not None:
        metafunc.parametrize(
            "_cassette_gate_run", range(1, runs + 1), indirect=True, ids=lambda n: f"gate{n}"
        )


@pytest.fixture
def _cassette_gate_run(request: pytest.FixtureRequest) -> int | None:
    """The 1-based gate run of this item, or ``None`` outside a gate."""
    return getattr(request, "param", None)


@pytest.fixture(autouse=True)
def _cassette_marked(request: pytest.FixtureRequest, _cassette_gate_run: int | None) -> None:
    """A marked test gets the ``cassette`` fixture (and its environment) even when it does
    not ask for it."""
    if request.node.get_closest_marker("cassette") is not None:
        request.getfixturevalue("cassette")


@dataclass
class CassetteFixture:
    """What the ``cassette`` fixture gives a test.

    Attributes:
        path: the cassette file.
        mode: ``"replay"`` or ``"record"``.
        gate_run: the gate run number, or ``None``.
        repeat: the replay policy past the last recording of a key.
    """

    path: Path
    mode: str
    gate_run: int | None
    repeat: str
    _wrappers: list[Any]
    _overwrite: bool

    def wrap(self, dispatch: Callable[[str, Any], Any], **kwargs: Any) -> Callable[[str, Any], Any]:
        """``wrap_dispatcher(dispatch)`` in this test's mode against its cassette (sync or
        async, like ``dispatch``); keyword arguments go to ``wrap_dispatcher``."""
        kwargs.setdefault("repeat", self.repeat)
        if self.mode == "record":
            kwargs.setdefault("overwrite", self._overwrite and not self._wrappers)
        wrapped = wrap_dispatcher(dispatch, mode=self.mode, path=self.path, report=None, **kwargs)
        self._wrappers.append(wrapped)
        return wrapped

    def report(self) -> ReplayReport:
        """The replay report of every dispatcher wrapped so far (one wrapper: its report;
        several: joined as ``ReplayReport.from_json`` joins them).

        Raises:
            ReplayReportError: a wrapper's report does not follow the schema.
        """
        reports = [w.report() for w in self._wrappers]
        if len(reports) == 1:
            return ReplayReport.from_json(reports[0])
        return ReplayReport.from_json({"mode": self.mode, "wrappers": reports})


def _resolve(request: pytest.FixtureRequest, name: str | None) -> Path:
    test_dir = Path(str(request.node.path)).parent
    base = test_dir / request.config.getini("cassette_dir")
    if name is None:
        module = Path(str(request.node.path)).stem
        name = f"{module}/{request.node.originalname}.jsonl"
    candidate = Path(name)
    if not candidate.suffix:
        candidate = candidate.with_suffix(".jsonl")
    if candidate.is_absolute():
        return candidate
    for folder in (base, test_dir):
        if (folder / candidate).exists():
            return folder / candidate
    return base / candidate


@pytest.fixture
def cassette(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    _cassette_gate_run: int | None,
) -> Iterator[CassetteFixture]:
    """The test's cassette, from its ``cassette`` marker (see the module docstring)."""
    marker = request.node.get_closest_marker("cassette")
    args = marker.args if marker is not None else ()
    kwargs = marker.kwargs if marker is not None else {}
    path = _resolve(request, kwargs.get("name", args[0] if args else None))
    record = request.config.getoption("cassette_record") or request.config.getini("cassette_record")
    if _cassette_gate_run is not None:
        record = "none"  # a gate replays
    exists = path.is_file()
    if record == "all" or (record == "once" and not exists):
        mode = "record"
    elif exists:
        mode = "replay"
    else:
        pytest.fail(
            f"cassette {path} not found: record it with --cassette-record=once",
            pytrace=False,
        )
    report_file = tmp_path_factory.mktemp("cassette-report") / "report.json"
    monkeypatch.setenv(ENV_MODE, mode)
    monkeypatch.setenv(ENV_PATH, str(path))
    monkeypatch.setenv(ENV_REPORT, str(report_file))
    fixture = CassetteFixture(
        path, mode, _cassette_gate_run, kwargs.get("repeat", "error"), [], record == "all"
    )
    try:
        yield fixture
    finally:
        for wrapped in fixture._wrappers:
            wrapped.close()
        if _cassette_gate_run is not None:
            report = fixture.report() if fixture._wrappers else _read_env_report(report_file)
            run = {
                "test": _test_id(request.node),
                "run": _cassette_gate_run,
                "cassette": str(path),
                "config": os.environ.get(ENV_CONFIG),
                "worker": os.environ.get("PYTEST_XDIST_WORKER"),
                "report": report.to_json() if report is not None else None,
            }
            request.node.user_properties.append((GATE_PROPERTY, json.dumps(run, default=repr)))


def _read_env_report(path: Path) -> ReplayReport | None:
    """The report a ``wrap_dispatcher()`` inside the test wrote to ``CASSETTE_REPORT``
    (``None`` when there is none, or it cannot be read)."""
    from cassette_tui.core.replay.report_sink import flush_all

    flush_all()
    try:
        return ReplayReport.read_run(path)  # with its journal: every process's calls
    except (OSError, ValueError):  # ReplayReportError is a ValueError
        return None


def _test_id(item: pytest.Item) -> str:
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
        self.lines, self.flaky, self.unmeasured = [], [], []
        for test, by_run in sorted(self.runs.items()):
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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.gate()
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
