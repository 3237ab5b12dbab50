"""How the loop's jobs run the agent: one frozen ``LoopOptions`` that the replay, gate and
record jobs take, built once by the commands' ``loop_options`` click decorator
(``tui/commands/_loop.py``) or by the app's loop screens."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: seconds an agent run may take by default before its process group is killed
DEFAULT_TIMEOUT = 120.0
#: bytes of stdout, and of stderr, an agent run may write to the runs folder; the rest is
#: read and dropped, and the run's result says how much (``RunResult.stdout_dropped``)
OUTPUT_CAP = 64 * 1024 * 1024


#: the cgroup v2 file that caps the CPU time of this process's group (``QUOTA PERIOD``)
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def default_jobs(cpu_max: Path = CPU_MAX) -> int:
    """The default number of runs at once: the CPUs this process may use (its affinity),
    no more than a cgroup's CPU quota allows (``cpu_max``: ``"200000 100000"`` is 2 CPUs,
    ``"max ..."`` no cap; an absent or unreadable file, no cap). More runs than CPUs make
    runs wait for a CPU, and a run that waits can time out: the machine, not the agent."""
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = max(1, os.cpu_count() or 1)
    try:
        quota, period = cpu_max.read_text("ascii").split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError, ZeroDivisionError):
        pass  # no cgroup cap to read: the affinity is the limit
    return cpus


@dataclass(frozen=True)
class LoopOptions:
    """How a loop job runs the agent.

    Attributes:
        timeout: seconds a run may take before its process group is killed (``None``: no
            limit).
        isolation: ``"netns"``, ``"guard"``, or ``None`` (netns where the system allows
            one, else guard; ``isolation.choose``). A recording always runs live.
        runs_dir: the folder for the run files (``--runs-dir``), or ``None``: a temporary
            one (see ``_runs_folder.py``).
        keep: whether the run files outlive the job: ``None`` keeps a named ``runs_dir``
            and removes a temporary one; ``True`` keeps either, ``False`` removes either.
        jobs: runs at once (a gate's), ``None``: the CPUs (``default_jobs``).
        config: the project config as the caller holds it (``--config``: a path, or
            ``None`` for the default lookup), handed to the agent (``CASSETTE_CONFIG``)
            and to the rules that read the cassette.
        new_calls: replays: what a call the cassette never recorded gets
            (``CASSETTE_NEW_CALLS``: ``"error"``, ``"report"``, ``"record"``;
            ``replay.new_calls``). Other than ``"error"``, new calls go live: the run
            has the network (no isolation).
        new_cassette: where ``"record"`` writes the new calls (``CASSETTE_NEW_PATH``),
            ``None``: ``NAME.new-<UTC>.jsonl`` beside the cassette.
        fixtures: pinned fixtures that answer their keys first (``CASSETTE_FIXTURES``;
            ``replay.fixtures``), in a replay and a recording alike.
    """

    timeout: float | None = DEFAULT_TIMEOUT
    isolation: str | None = None
    runs_dir: str | Path | None = None
    keep: bool | None = None
    jobs: int | None = None
    config: Any = None
    new_calls: str = "error"
    new_cassette: str | Path | None = None
    fixtures: tuple[str | Path, ...] = ()

    def policy_env(self) -> dict[str, str]:
        """The ``CASSETTE_*`` variables of ``new_calls``, ``new_cassette`` and
        ``fixtures`` (paths absolute); the ones not set are left out."""
        from ..format.constants import ENV_FIXTURES, ENV_NEW_CALLS, ENV_NEW_PATH

        env: dict[str, str] = {}
        if self.new_calls != "error":
            env[ENV_NEW_CALLS] = self.new_calls
        if self.new_cassette is not None:
            env[ENV_NEW_PATH] = str(Path(self.new_cassette).absolute())
        if self.fixtures:
            env[ENV_FIXTURES] = os.pathsep.join(str(Path(f).absolute()) for f in self.fixtures)
        return env

    @property
    def workers(self) -> int:
        """Runs at once: ``jobs``, else ``default_jobs()``."""
        return self.jobs or default_jobs()
