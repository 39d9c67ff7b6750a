"""The test session's core pinning (tests/cores.py): a worker pinned, a server not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import cores

AFFINITY = hasattr(os, "sched_setaffinity")
ALL = (cores._SESSION_CORES or os.sched_getaffinity(0)) if AFFINITY else set()


def child_cores() -> set[int]:
    """The cores a process started now runs on."""
    out = subprocess.run([sys.executable, "-c", "import os; print(sorted("
                          "os.sched_getaffinity(0)))"], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out))


@pytest.mark.skipif(len(ALL) < 2, reason="needs CPU affinity and 2 cores")
def test_a_pinned_worker_starts_its_servers_on_every_core():
    mine, session = os.sched_getaffinity(0), cores._SESSION_CORES
    try:
        os.sched_setaffinity(0, ALL)
        cores._SESSION_CORES = None
        cores.pin_worker(2, 1)
        pinned = os.sched_getaffinity(0)
        assert pinned == set(sorted(ALL)[1::2]) and child_cores() == pinned
        with cores.every_core():
            assert child_cores() == ALL
        assert os.sched_getaffinity(0) == pinned
    finally:
        os.sched_setaffinity(0, mine)
        cores._SESSION_CORES = session
