"""The pytest plugin (entry point ``pytest11``, name ``cassette``): tests replay an agent's
tool calls from a cassette, record them in pytest-recording's record modes, and
``--cassette-gate=N`` gates them.

Mark a test and wrap its dispatcher through the ``cassette`` fixture::

    @pytest.mark.cassette("retry-budget.jsonl")  # default: <module>/<test[params]>.jsonl
    def test_agent_answers(cassette):
        dispatch = cassette.wrap(live_dispatch)         # replay: never calls live_dispatch
        assert run_agent(dispatch) == 0

Names are looked up under the ``cassette_dir`` ini option (default ``cassettes``) beside
the test file, then beside the test file itself, so a pinned fixture
(``cassette-tui pin ... -o tests/cassettes/fixtures``) is ``"fixtures/NAME.jsonl"``; the
default name carries the parametrize id (``naming.py``). Several names in one marker: the
first is the test's cassette (the one recorded), the others are replayed with it
(read-only). A marked test also gets ``CASSETTE_MODE``/``CASSETTE_PATH``/``CASSETTE_REPORT``
in its environment, so code that calls ``wrap_dispatcher()`` itself (even a wrapper made at
import time: it follows the environment) replays and records as well.

``--cassette-record`` (ini ``cassette_record``): ``none`` (default), ``once``,
``new_episodes``, ``all``, as pytest-recording names them; a recording replaces or becomes
the cassette only when its test passed (``recording.py``).

A replayed test (and every gate run) has the network off in its process, as
pytest-recording's ``--block-network`` (``core/replay/network_block.py``: the replay
guard's rules), but for ``--cassette-allowed-hosts`` (ini ``cassette_allowed_hosts``,
marker ``allowed_hosts=[...]``; ``--allowed-hosts`` too, unless another plugin has that
name: pytest-recording's ``--allowed-hosts`` takes regexes for its own blocking, and two
plugins adding one option stop pytest before it starts).

``--cassette-gate=N`` runs every marked test N times as separate items (``test[gate3]``)
in replay mode (``gate.py``): a pass rate that is neither 0 nor 1 fails the session with
the gate's explanation (where the runs part: after the tool layer, or the first call at
which they differ and how many runs took each path), in a "cassette gate" section of the
summary. Only clean replays count (the rule of ``cassette-tui gate``: no miss, no call past
the last recording, at least one tool call; a test that catches a miss and passes is no
clean replay): a test whose runs were not all clean gets the verdict ``unclean_replay`` (or
``no_tool_call`` when no run made a call), its unclean runs are named, and the session's
exit status is 2 (the gate measured nothing), over a 1 of failed tests. Because the runs
are ordinary items, ``pytest -n auto`` spreads them over cores and ``--tx
ssh=host//python=python3 --rsyncdir .`` over machines.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from cassette_tui.core.format.atomic import write_atomic
from cassette_tui.core.format.cassette import dump_line, load
from cassette_tui.core.format.constants import ENV_CONFIG, ENV_MODE, ENV_PATH, ENV_REPORT
from cassette_tui.core.keys.config import load_rules
from cassette_tui.core.replay.network_block import blocked
from cassette_tui.core.replay.report import ReplayReport
from cassette_tui.core.replay.wrap import wrap_dispatcher

from .gate import GATE_PROPERTY, GateCollector, gate_test_id, read_env_report
from .naming import default_name, resolve
from .recording import RECORD_MODES, RecordingNotes, StagedRecording, note

__all__ = ["RECORD_MODES", "CassetteFixture"]
_OUTCOMES = pytest.StashKey[dict[str, pytest.TestReport]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cassette", "cassette-tui: replay tool calls from cassettes")
    group.addoption(
        "--cassette-record",
        choices=RECORD_MODES,
        default=None,
        help="none: replay only (default); once: record missing cassettes, replay the "
        "others; new_episodes: replay, and record the calls a cassette lacks into "
        "NAME.new-episodes.jsonl beside it; all: re-record every cassette-marked test. A "
        "recording replaces a cassette only when its test passed.",
    )
    group.addoption(
        "--cassette-gate",
        type=int,
        default=0,
        metavar="N",
        help="Run every cassette-marked test N times (replay) and fail a test whose pass "
        "rate is neither 0 nor 1, saying where the runs part.",
    )
    group.addoption(
        "--cassette-junit",
        default=None,
        metavar="FILE",
        help="With --cassette-gate: write each gated test's verdict as JUnit XML to FILE "
        "(a flaky test is a failing test case; one that was not measured, an error).",
    )
    group.addoption(
        "--cassette-allowed-hosts",
        default=None,
        metavar="HOSTS",
        help=_ALLOWED_HOSTS_HELP,
    )
    parser.addini(
        "cassette_dir", "Folder of cassettes, beside each test file.", default="cassettes"
    )
    parser.addini("cassette_record", "Default --cassette-record mode.", default="none")
    parser.addini(
        "cassette_allowed_hosts", "Default --allowed-hosts (comma-separated).", default=""
    )


_ALLOWED_HOSTS_HELP = (
    "Comma-separated hosts (names or addresses) a replayed test may still reach; the "
    "network is otherwise off in replayed tests and gate runs."
)
_SHORT_ALLOWED_HOSTS = "--allowed-hosts"


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """``--allowed-hosts`` as another name of ``--cassette-allowed-hosts``, when no plugin
    has it: pytest-recording adds it too, and argparse refuses one option string twice
    (pytest stopped before it started). Called once every installed plugin has added its
    options, before the command line is parsed."""
    taken = {
        name
        for group in [parser._anonymous, *parser._groups]  # noqa: SLF001 - pytest 8's own
        for option in group.options
        for name in option.names()
    }
    if _SHORT_ALLOWED_HOSTS not in taken:
        parser.getgroup("cassette").addoption(
            _SHORT_ALLOWED_HOSTS,
            dest="cassette_allowed_hosts",
            default=None,
            metavar="HOSTS",
            help=_ALLOWED_HOSTS_HELP + " (--cassette-allowed-hosts)",
        )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cassette(*names, repeat='error', allowed_hosts=()): replay the test's tool calls "
        "from the cassette NAME (the first name; the others are replayed with it).",
    )
    mode = config.getoption("cassette_record") or config.getini("cassette_record")
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"cassette_record = {mode!r}; expected one of {RECORD_MODES}")
    if config.getoption("cassette_gate") < 0:
        raise pytest.UsageError("--cassette-gate takes a number of runs (>= 1)")
    junit = config.getoption("cassette_junit")
    if junit:
        from cassette_tui.core.loop.junit import check_junit_target

        try:
            check_junit_target(junit)  # a cassette named by mistake is never replaced
        except FileExistsError as exc:
            raise pytest.UsageError(f"--cassette-junit {exc}") from None
    if hasattr(config, "workerinput"):
        return  # the controller collects and prints
    config.pluginmanager.register(RecordingNotes(), "cassette-recording-notes")
    if config.getoption("cassette_gate"):
        config.pluginmanager.register(GateCollector(config), "cassette-gate-collector")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item: a recording's fate is its test's outcome."""
    report: pytest.TestReport = yield
    item.stash.setdefault(_OUTCOMES, {})[report.when] = report
    return report


def _passed(item: pytest.Item) -> bool:
    """Whether the test's setup and call passed (a skip, an error, Ctrl-C: not passed)."""
    reports = item.stash.get(_OUTCOMES, {})
    return all(when in reports and reports[when].passed for when in ("setup", "call"))


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
        path: the cassette file (the test's own: the first name of the marker).
        mode: ``"replay"``, ``"record"`` or ``"new_episodes"`` (replays, records what the
            cassette lacks).
        gate_run: the gate run number, or ``None``.
        repeat: the replay policy past the last recording of a key.
        extra: the marker's other cassettes, replayed with ``path``.
        served: the file replays read (``path``, or the cassettes joined in a temporary
            file when there are several).
    """

    path: Path
    mode: str
    gate_run: int | None
    repeat: str
    extra: tuple[Path, ...] = ()
    served: Path | None = None
    _wrappers: list[Any] = field(default_factory=list)

    def wrap(self, dispatch: Callable[[str, Any], Any], **kwargs: Any) -> Callable[[str, Any], Any]:
        """``wrap_dispatcher(dispatch)`` in this test's mode against its cassette (sync or
        async, like ``dispatch``); keyword arguments go to ``wrap_dispatcher``. Recording
        (``record``, ``new_episodes``) joins the test's staged recording."""
        kwargs.setdefault("repeat", self.repeat)
        if self.mode == "replay":
            path = self.served or self.path
            wrapped = wrap_dispatcher(dispatch, mode="replay", path=path, report=None, **kwargs)
        else:
            wrapped = wrap_dispatcher(
                dispatch, mode="record", path=self.path, report=None, **kwargs
            )
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


def _record_mode(request: pytest.FixtureRequest, gate_run: int | None) -> str:
    if gate_run is not None:
        return "none"  # a gate replays
    config = request.config
    return str(config.getoption("cassette_record") or config.getini("cassette_record"))


def _allowed_hosts(request: pytest.FixtureRequest, marker_hosts: Any) -> list[str]:
    config = request.config
    text = config.getoption("cassette_allowed_hosts") or config.getini("cassette_allowed_hosts")
    hosts = [h.strip() for h in str(text or "").split(",") if h.strip()]
    if isinstance(marker_hosts, str):
        marker_hosts = marker_hosts.split(",")
    return hosts + [str(h).strip() for h in marker_hosts or () if str(h).strip()]


def _joined(paths: list[Path], folder: Path) -> Path:
    """The cassettes ``paths`` as one file in ``folder``: their entries in order, seqs
    numbered on (a test's several cassettes replay as one)."""
    rules = load_rules(os.environ.get(ENV_CONFIG))

    def lines() -> Iterator[bytes]:
        seq = 0
        for path in paths:
            for _, entry, _ in load(path, rules=rules).entries_read():
                seq += 1
                yield dump_line(_renumbered(entry, seq), rules)

    return write_atomic(folder / "joined.jsonl", lines())


def _renumbered(entry: Any, seq: int) -> Any:
    return replace(entry, seq=seq, line=None)


@pytest.fixture
def cassette(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    _cassette_gate_run: int | None,
) -> Iterator[CassetteFixture]:
    """The test's cassette, from its ``cassette`` marker (see the module docstring)."""
    item = request.node
    marker = item.get_closest_marker("cassette")
    args = marker.args if marker is not None else ()
    kwargs = marker.kwargs if marker is not None else {}
    names = [str(a) for a in args] or [kwargs.get("name") or default_name(item, _cassette_gate_run)]
    cassette_dir = str(request.config.getini("cassette_dir"))
    path, *extra = [resolve(item, cassette_dir, n) for n in names]
    missing = [str(p) for p in extra if not p.is_file()]
    if missing:
        pytest.fail(f"cassette {', '.join(missing)} not found (named in the marker)", pytrace=False)
    record = _record_mode(request, _cassette_gate_run)
    repeat = kwargs.get("repeat", "error")
    exists = path.is_file()
    if record == "all" or (record != "none" and not exists):
        mode = "record"
    elif record == "new_episodes":
        mode = "new_episodes"
    elif exists:
        mode = "replay"
    else:
        pytest.fail(
            f"cassette {path} not found: record it with --cassette-record=once",
            pytrace=False,
        )
    folder = tmp_path_factory.mktemp("cassette")
    report_file = folder / "report.json"
    served = _joined([path, *extra], folder) if extra and mode == "replay" else None
    staged = StagedRecording.start(path, record, repeat) if mode != "replay" else None
    monkeypatch.setenv(ENV_MODE, "replay" if mode == "replay" else "record")
    monkeypatch.setenv(ENV_PATH, str(served or path))
    monkeypatch.setenv(ENV_REPORT, str(report_file))
    fixture = CassetteFixture(path, mode, _cassette_gate_run, repeat, tuple(extra), served)
    with contextlib.ExitStack() as network:
        if mode == "replay":
            allowed = _allowed_hosts(request, kwargs.get("allowed_hosts"))
            network.enter_context(blocked(allowed, "allow a host with --cassette-allowed-hosts"))
        try:
            yield fixture
        finally:
            network.close()
            for wrapped in fixture._wrappers:
                wrapped.close()
            if staged is not None:
                line = staged.finish(_passed(item))
                if line is not None:
                    note(item, line)
            if _cassette_gate_run is not None:
                _gate_run(request, fixture, report_file, _cassette_gate_run)


def _gate_run(
    request: pytest.FixtureRequest, fixture: CassetteFixture, report_file: Path, run: int
) -> None:
    """Put the run's outcome and call log on the test's report, for the gate."""
    report = fixture.report() if fixture._wrappers else read_env_report(report_file)
    document = {
        "test": gate_test_id(request.node),
        "run": run,
        "cassette": str(fixture.served or fixture.path),
        "config": os.environ.get(ENV_CONFIG),
        "worker": os.environ.get("PYTEST_XDIST_WORKER"),
        "report": report.to_json() if report is not None else None,
    }
    request.node.user_properties.append((GATE_PROPERTY, json.dumps(document, default=repr)))
