"""Many machines, one study: a real PostgreSQL and a real ``mlflow server --serve-artifacts``.

Three ``python -m tuner run`` processes start at the same instant on a fresh database (each
with its own output folder and, where ``unshare`` works, a host name of its own: three hosts as
far as the code can tell); one is killed with SIGKILL in the middle of a trial. The survivors
must fail its trial through Optuna's heartbeat (short periods here), complete the budget
exactly, mark the dead worker's MLflow runs FAILED and export exactly one release, whose files
are downloadable through the MLflow server. Everything listens on 127.0.0.1 only, and every
process started here is stopped by its id.

The kill does not depend on polling luck: the victim holds its first trial open (its MLflow run
RUNNING) until it is killed, and the survivors start their first trial only once it does, so
the budget cannot be used up before the victim has a trial (CI once saw a victim with none).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from experiments.benchmarks.bench_distributed import (
    can_fake_hosts,
    create_database,
    mlflow_server,
    postgres,
    postgres_bin,
    study_config,
    worker_command,
)
from tests.cores import every_core
from tests.data import unavailable
from tuner.search._budget import FINISHED, interrupted_numbers, uncounted_numbers

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
BUDGET = 9
WORKERS = 3


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(PostgreSQL server URL, MLflow server URI), both new, on loopback ports."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable('psycopg 3 is not installed: python -m pip install -e ".[distributed]"')
    if postgres_bin() is None:
        unavailable("no PostgreSQL server binaries: apt-get install postgresql (.ci/run does "
                    "this when it is missing), or python -m pip install pgserver")
    folder = tmp_path_factory.mktemp("mlflow-server")
    with contextlib.ExitStack() as stack:
        with every_core():  # other machines, as far as the workers go: not on a test's core
            server = stack.enter_context(postgres(durable=False))
            backend = create_database(server, "mlflow")
            uri = stack.enter_context(mlflow_server(backend, folder / "artifacts",
                                                    folder / "server.log"))
        yield server, uri


RACE = """
import sys, time
from pathlib import Path
from tuner.search._storage import storage
from tuner.search._tracking import Tracker
url, uri, folder, me, n = sys.argv[1:]
Path(folder, f"ready.{me}").touch()  # imports done: go when every process is ready
while len(list(Path(folder).glob("ready.*"))) < int(n):
    time.sleep(0.02)
storage(url)
print(Tracker(uri, "race", Path(folder)).experiment_id)
"""


def test_processes_creating_the_stores_at_once(servers, tmp_path):
    """Optuna's schema on a new database and one MLflow experiment, by 4 processes at once
    (each about 10 s of CPU on 2 busy cores, half of it importing the stores)."""
    import sqlalchemy

    server, uri = servers
    url = create_database(server, "race")
    n = 4
    procs = [subprocess.Popen([sys.executable, "-c", RACE, url, uri,
                               str(tmp_path), str(i), str(n)], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i in range(n)]
    try:
        results = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
    assert [p.returncode for p in procs] == [0] * n, [err[-2000:] for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1  # one experiment, found by all
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        assert "trials" in sqlalchemy.inspect(conn).get_table_names()
    engine.dispose()


WORKER = """
import sys, time
from pathlib import Path
from tuner.scoring import _evaluation as evaluation
role, flag, argv = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
real = evaluation.evaluate

def evaluate(*args, **kwargs):
    if role == "victim":  # in the middle of a trial, its MLflow run open: wait for SIGKILL
        flag.touch()
        while True:
            time.sleep(1)
    deadline = time.monotonic() + 240
    while not flag.exists() and time.monotonic() < deadline:  # the victim has its trial first
        time.sleep(0.1)
    return real(*args, **kwargs)

evaluation.evaluate = evaluate  # the objective's scoring.evaluate reads it (never cached)
from tuner.cli import main
raise SystemExit(main(argv))
"""


def _worker(config: Path, output: Path, host: str | None, role: str, flag: Path) -> list[str]:
    """``python -m tuner run`` (bench_distributed's worker command), its trials' evaluation
    wrapped as WORKER says for ``role``."""
    cmd = worker_command(config, output, host)
    at = cmd.index("-m")
    assert cmd[at + 1] == "tuner", cmd
    cmd[at:at + 2] = ["-c", WORKER, role, str(flag)]
    return cmd


def _trial_in_progress(client, pid: int) -> int | None:
    """The Optuna number of a trial that process ``pid`` is evaluating now: its MLflow run is
    RUNNING (it is ended before Optuna is told, so the trial is RUNNING too)."""
    experiment = client.get_experiment_by_name("distributed")
    if experiment is None:
        return None
    runs = client.search_runs([experiment.experiment_id],
                              f"tags.`risk_tuner.pid` = '{pid}' and attributes.status = 'RUNNING'")
    trials = [r.data.tags["optuna_trial"] for r in runs if "optuna_trial" in r.data.tags]
    return int(trials[0]) if trials else None


def test_three_workers_on_postgres_and_mlflow_server_one_killed(servers, tmp_path, capsys):
    from mlflow.tracking import MlflowClient

    from tuner.cli import main
    from tuner.search._storage import storage

    server, uri = servers
    url = create_database(server, "study")
    config = study_config(tmp_path, storage=url, mlflow_uri=uri, n_trials=BUDGET)
    hosts = can_fake_hosts()
    env = {**os.environ, "RISK_TUNER_HEARTBEAT_SECONDS": "1", "RISK_TUNER_GRACE_SECONDS": "5"}
    outputs = [tmp_path / f"w{i}" for i in range(WORKERS)]
    logs = [(tmp_path / f"w{i}.log").open("w") for i in range(WORKERS)]
    procs: list[subprocess.Popen] = []
    start = time.monotonic()
    flag = tmp_path / "victim-in-trial"
    try:
        for i in range(WORKERS):  # started together, on a database without Optuna's schema
            role = "victim" if i == WORKERS - 1 else "survivor"
            procs.append(subprocess.Popen(
                _worker(config, outputs[i], f"worker-{i}" if hosts else None, role, flag),
                cwd=ROOT, env=env, stdout=logs[i], stderr=subprocess.STDOUT))
        victim = procs[-1]
        client = MlflowClient(tracking_uri=uri)
        killed = None
        while killed is None and time.monotonic() - start < 240 and victim.poll() is None:
            if flag.exists():
                killed = _trial_in_progress(client, victim.pid)
            time.sleep(0.2)
        assert killed is not None, (
            f"the victim never ran a trial (exit code {victim.poll()}, in-trial flag "
            f"{flag.exists()}): {(tmp_path / f'w{WORKERS - 1}.log').read_text()[-3000:]}")
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        codes = [p.wait(timeout=400) for p in procs[:-1]]
    finally:
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
        for log in logs:
            log.close()
    texts = [(tmp_path / f"w{i}.log").read_text() for i in range(WORKERS)]
    # each survivor's own words, whole (a list's repr would be cut short)
    said = [f"--- worker {i} exited {c}:\n{t[-4000:]}"
            for i, (c, t) in enumerate(zip(codes, texts[:-1], strict=True))]
    assert codes == [0, 0], "\n".join(said)

    study = optuna.load_study(study_name="distributed", storage=storage(url))
    trials = study.get_trials()
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    # the killed trial was failed (by heartbeat, as for another host) and did not use the budget
    assert killed in interrupted_numbers(study)
    assert trials[killed].state == TrialState.FAIL
    if hosts:
        assert "no heartbeat" in study.user_attrs[f"interrupted.{killed}"]
    counted = [t for t in trials if t.number not in uncounted_numbers(study)]
    assert len(counted) == BUDGET and all(t.state in FINISHED for t in counted)
    assert sum(t.state == TrialState.COMPLETE for t in counted) == BUDGET
    # each worker had its own sampler slot (seed)
    slots = {k: v for k, v in study.user_attrs.items() if k.startswith("worker.")}
    assert len(slots) == WORKERS and len(set(slots.values())) == WORKERS

    # exactly one worker exported the release; the other says where it is
    released = [o for o in outputs[:-1] if (o / "release" / "manifest.json").exists()]
    assert len(released) == 1, texts
    assert sum("exported by another worker" in t for t in texts[:-1]) == 1, texts
    manifest = json.loads((released[0] / "release" / "manifest.json").read_text())
    assert study.user_attrs["released_trial"] == manifest["trial"]

    experiment = client.get_experiment_by_name("distributed")
    assert experiment.artifact_location.startswith("mlflow-artifacts:")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    assert not [r for r in runs if r.info.status == "RUNNING"]
    assert len([r for r in runs if "mlflow.parentRunId" not in r.data.tags]) == WORKERS
    # the dead worker's runs (its invocation's and its trial's) were marked FAILED
    dead = [r for r in runs if r.data.tags.get("risk_tuner.pid") == str(victim.pid)]
    assert len(dead) == 2 and all(r.info.status == "FAILED" for r in dead), dead
    tagged = [r for r in runs if r.data.tags.get("released") == "true"]
    assert len(tagged) == 1
    # the release and a trial's artifacts, downloaded through the server (as from any host)
    got = Path(client.download_artifacts(tagged[0].info.run_id, "release",
                                         str(tmp_path / "download")))
    assert json.loads((got / "manifest.json").read_text()) == manifest
    digest = hashlib.sha256((got / "synthetic.csv").read_bytes()).hexdigest()
    assert digest == manifest["synthetic_sha256"]
    assert not (got / "split.json").exists()
    trial_run = [r for r in runs if r.data.tags.get("state") == "COMPLETE"][0]
    assert trial_run.info.artifact_uri.startswith("mlflow-artifacts:")
    risk_results = client.download_artifacts(trial_run.info.run_id, "risk_results.json",
                                             str(tmp_path / "download"))
    assert json.loads(Path(risk_results).read_text())

    # the trials, read from the storage URL alone
    capsys.readouterr()
    assert main(["report", "--storage", url, "--study", "distributed"]) == 0
    table = capsys.readouterr().out
    assert "<== released" in table and table.count("COMPLETE") == BUDGET
    print(f"distributed test: {time.monotonic() - start:.0f} s from the workers' start, "
          f"{'one host name per worker' if hosts else 'one host'}")


def test_release_claim_and_worker_slots_on_the_local_default(tmp_path):
    """The same rules without servers: one export per best trial (again if its folder was
    removed), and a worker slot, hence a sampler seed, of its own for every worker."""
    import shutil

    from tests.tuner.conftest import write_config
    from tuner import config
    from tuner.release._export import export, release_note
    from tuner.search._context import prepare
    from tuner.search._storage import open_stores
    from tuner.search._study import run_study

    cfg = config.load(write_config(tmp_path, n_trials=2, synthesizers=("cart",)))
    ctx = prepare(cfg)
    study = run_study(ctx, progress=False)
    folder = export(ctx, study, once=True)
    assert folder is not None and (folder / "manifest.json").exists()
    assert export(ctx, study, once=True) is None  # claimed and written: not again
    assert "written by worker" in release_note(study)
    shutil.rmtree(folder)
    assert export(ctx, study, once=True) == folder  # removed here: written again
    for _ in range(2):  # two more workers join: slots 1 and 2 (the study's run had 0)
        open_stores(ctx, optimizing=True)
    slots = {k: v for k, v in study.user_attrs.items() if k.startswith("worker.")}
    assert sorted(slots) == ["worker.0", "worker.1", "worker.2"]
    assert all(v.endswith(f":{os.getpid()}") for v in slots.values())
