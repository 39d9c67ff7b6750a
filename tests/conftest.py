"""Settings for the whole test session, read before any test module imports a library.

JAX (under the differentially private families MST and AIM, through private-pgm) compiles every
operation it meets, per shape, in each process: on 2 cores that was half of an AIM fit (73 of
135 s profiled). The session shares a persistent compilation cache between its processes (the
xdist workers, the CLI runs and audit processes they start), so each program is compiled once
per run; cold, as in CI's first DP fit, nothing changes but the time. Results are the same: a
cached program is the program compiled. A cache the person running the tests set is kept.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path

from tests.cores import pin_worker

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = Path(tempfile.gettempdir()) / f"risk-tuner-tests-jax-{getpass.getuser()}"
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(_cache)
    # JAX caches only compilations over 1 s by default; here most take 0.1 to 0.2 s
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

# the empty MLflow store new studies start from (tuner/search/_empty_store.py): one per test
# session's machine, away from the user's own cache
os.environ.setdefault("RISK_TUNER_CACHE",
                      str(Path(tempfile.gettempdir()) / f"risk-tuner-tests-{getpass.getuser()}"))


def pytest_configure(config) -> None:  # noqa: ANN001
    """Each xdist worker on its own share of the cores (tests/cores.py says why)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        pin_worker(int(workerinput["workercount"]),
                   int(workerinput["workerid"].removeprefix("gw")))
