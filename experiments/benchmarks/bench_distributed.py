"""Many workers, one study: trials per minute with 1, 2 and 4 workers on PostgreSQL + MLflow.

Starts a throw-away PostgreSQL on 127.0.0.1 (Debian's ``postgresql`` package, or the
``pgserver`` wheel's binaries) and ``mlflow server --serve-artifacts`` on a free loopback port,
then for each worker count K runs K ``python -m tuner run`` processes at once (as K hosts
would, each with its own output folder) on a fresh database, with the fast synthesisers
(CART, Gaussian copula) on the embedded Fair data; then the storage alone (processes running
empty trials). Run from the repository root:

    python -m experiments.benchmarks.bench_distributed [--workers 1 2 4] [--trials 24]

Writes its tables to its block of ``experiments/benchmarks/RESULTS.md``. The helpers that
start and stop the servers (every process by its own id) are shared with
``tests/tuner/search/test_distributed.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's ``initdb`` and ``postgres``: on the PATH, Debian's
    ``/usr/lib/postgresql/V/bin``, or inside the ``pgserver`` wheel; ``None`` if none."""
    found = shutil.which("initdb")
    if found and Path(found).resolve().with_name("postgres").exists():
        return Path(found).resolve().parent
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                    key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if debian:
        return debian[-1].parent
    try:
        import pgserver  # type: ignore[import-not-found]
    except ImportError:
        return None
    bundled = Path(pgserver.__file__).parent / "pginstall" / "bin"
    return bundled if (bundled / "initdb").exists() else None


def _stop(proc: subprocess.Popen[bytes], sig: int, *, group: bool = False) -> None:
    """Stop ``proc`` (by its id; with ``group``, the process group it leads) and reap it."""
    if proc.poll() is not None:
        return
    send = os.killpg if group else os.kill
    with contextlib.suppress(ProcessLookupError):
        send(proc.pid, sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            send(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@contextlib.contextmanager
def postgres(*, durable: bool = True) -> Iterator[str]:
    """A new PostgreSQL cluster on 127.0.0.1; yields ``postgresql://tuner@127.0.0.1:PORT``.

    As root, the server runs as the ``postgres`` user (or ``nobody``): PostgreSQL refuses
    root. ``durable=False`` turns fsync off (a test's throw-away data)."""
    import psycopg

    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql, or "
                           "python -m pip install pgserver)")
    user: dict[str, object] = {}
    data = Path(tempfile.mkdtemp(prefix="risk-tuner-pg-"))
    if os.geteuid() == 0:
        names = {u.pw_name for u in pwd.getpwall()}
        entry = pwd.getpwnam("postgres" if "postgres" in names else "nobody")
        user = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        os.chown(data, entry.pw_uid, entry.pw_gid)
    cluster = data / "cluster"
    subprocess.run([str(bindir / "initdb"), "-D", str(cluster), "-U", "tuner", "-A", "trust",
                    "-E", "UTF8", "--no-sync"], check=True, capture_output=True, cwd=data,
                   **user)  # type: ignore[arg-type]
    port = free_port()
    settings = ["listen_addresses=127.0.0.1", f"unix_socket_directories={data}",
                "max_connections=300"]
    if not durable:
        settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
    cmd = [str(bindir / "postgres"), "-D", str(cluster), "-p", str(port)]
    for setting in settings:
        cmd += ["-c", setting]
    log = (data / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=data,
                            **user)  # type: ignore[call-overload]
    url = f"postgresql://tuner@127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(f"{url}/postgres", connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("PostgreSQL did not start: "
                                       + (data / "server.log").read_text()[-2000:]) from None
                time.sleep(0.3)
        yield url
    finally:
        _stop(proc, signal.SIGINT)  # fast shutdown
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def create_database(server: str, name: str) -> str:
    """A new database ``name`` on ``server``; its URL."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


@contextlib.contextmanager
def mlflow_server(backend: str, artifacts: Path, log: Path) -> Iterator[str]:
    """``mlflow server --serve-artifacts`` on a free loopback port; yields its http URI.

    The server starts its own web-server processes, so it is started as the leader of a new
    process group, and that group (whose id is the started process's id) is stopped."""
    port = free_port()
    cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
           "--backend-store-uri", backend.replace("postgresql://", "postgresql+psycopg://", 1),
           "--serve-artifacts", "--artifacts-destination", str(artifacts), "--workers", "1"]
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    handle = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server did not start: {log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield uri
    finally:
        _stop(proc, signal.SIGTERM, group=True)
        handle.close()


def study_config(folder: Path, *, storage: str, mlflow_uri: str, n_trials: int,
                 name: str = "distributed", synthesizers: Sequence[str] = ("cart",
                                                                           "gaussian_copula"),
                 extra: str = "") -> Path:
    """A tiny study on the embedded Fair data, stored in ``storage`` and tracked at
    ``mlflow_uri``."""
    path = folder / "study.toml"
    path.write_text(f"""
[data]
path = "builtin:fair"
population_size = 100000
train_fraction = 0.5

[study]
name = "{name}"
synthesizers = {list(synthesizers)!r}
n_trials = {n_trials}
seed = 7
workers = 1
output = "out"
storage = "{storage}"
mlflow_uri = "{mlflow_uri}"

[risk]
repeats = 20
attribute_keys = ["age", "yrs_married", "children", "religious"]
cap_targets = ["affairs"]
inference_targets = ["affairs"]

[audit]
enabled = false

[utility]
metric = "hellinger"
{extra}""".replace("'", '"'))
    return path


def worker_command(config: Path, output: Path, host: str | None = None) -> list[str]:
    """``python -m tuner run`` for one worker; with ``host``, in a UTS namespace of its own
    whose host name is ``host`` (as root, where ``unshare`` works), so that the workers are
    different hosts to each other."""
    cmd = [sys.executable, "-m", "tuner", "run", str(config), "--output", str(output),
           "--no-progress"]
    if host is None:
        return cmd
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *cmd]


def can_fake_hosts() -> bool:
    """Whether :func:`worker_command` can give each worker a host name of its own."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode == 0


def _measure(server: str, mlflow_uri: str, workers: int, trials: int, work: Path) -> dict:
    import optuna

    from tuner.search import open_storage as storage

    name = f"bench-{workers}"
    url = create_database(server, f"bench_{workers}")
    folder = work / name
    folder.mkdir()
    config = study_config(folder, storage=url, mlflow_uri=mlflow_uri, n_trials=trials,
                          name=name)
    start = time.monotonic()
    procs = [subprocess.Popen(worker_command(config, folder / f"w{i}"), cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for i in range(workers)]
    peak = 0
    try:
        while any(p.poll() is None for p in procs) and time.monotonic() - start < 1800:
            peak = max(peak, _connections(server, f"bench_{workers}"))
            time.sleep(1.0)
        codes = [p.wait(timeout=60) for p in procs]
    finally:
        for p in procs:
            _stop(p, signal.SIGTERM)
    wall = time.monotonic() - start
    trials_run = [t for t in optuna.load_study(study_name=name, storage=storage(url)).trials
                  if t.datetime_complete is not None and "metrics" in t.user_attrs]
    first = min(t.datetime_start for t in trials_run)
    last = max(t.datetime_complete for t in trials_run)
    busy = (last - first).total_seconds()
    mean = sum((t.datetime_complete - t.datetime_start).total_seconds()
               for t in trials_run) / len(trials_run)
    return {"workers": workers, "codes": codes, "trials": len(trials_run), "wall": wall,
            "busy": busy, "per_minute": 60 * len(trials_run) / busy, "mean_trial": mean,
            "connections": peak}


def _connections(server: str, database: str) -> int:
    """Connections open now to ``database`` (the workers' Optuna storage)."""
    import psycopg

    with psycopg.connect(f"{server}/postgres") as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                           (database,)).fetchone()
    return int(row[0]) if row else 0


def _empty_trials(url: str, name: str, n: int, budget: int) -> None:
    """One process running ``n`` trials that do no work but talk to the storage as the
    tuner's trials do (heartbeat, budget slot, parameters, attributes, constraints)."""
    import optuna

    from tuner.search import Budget, claim_slot
    from tuner.search import open_storage as storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=name, storage=storage(url))

    def objective(trial: optuna.Trial) -> float:
        claim_slot(trial.study, trial.number, budget)
        for key in ("pid", "host", "seed", "threads"):
            trial.set_user_attr(key, 1)
        x = trial.suggest_float("x", 0, 1)
        trial.suggest_categorical("synthesizer", ["cart", "gaussian_copula"])
        for key in ("m", "copies", "dcr", "cap", "inference"):
            trial.set_user_attr(f"c.{key}", -x)
        trial.set_user_attr("metrics", {f"metric{i}": x for i in range(30)})
        return x

    study.optimize(objective, n_trials=n, callbacks=[Budget(budget)])


def _storage_rate(server: str, processes: int, per_process: int) -> dict:
    """Trials per second that one PostgreSQL coordinates for ``processes`` clients."""
    import multiprocessing

    import optuna

    from tuner.search import open_storage as storage

    name = f"empty-{processes}"
    url = create_database(server, f"empty_{processes}")
    optuna.create_study(study_name=name, storage=storage(url))
    budget = processes * per_process
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_empty_trials, args=(url, name, per_process, budget))
             for _ in range(processes)]
    for proc in procs:
        proc.start()
    try:
        for proc in procs:
            proc.join(timeout=900)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=30)
    trials = [t for t in optuna.load_study(study_name=name, storage=storage(url)).trials
              if t.datetime_complete is not None]
    span = (max(t.datetime_complete for t in trials)
            - min(t.datetime_start for t in trials)).total_seconds()
    return {"processes": processes, "trials": len(trials), "per_second": len(trials) / span}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--empty", type=int, nargs="+", default=[1, 4, 8],
                        help="client processes running empty trials (storage load only)")
    parser.add_argument("--output", type=Path, default=Path(__file__).with_name("RESULTS.md"))
    args = parser.parse_args(argv)
    from experiments.reporting import write_section

    # stopped with SIGTERM (or started in the background, where SIGINT is ignored): still
    # stop the servers and workers it started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp, \
            postgres() as server:
        work = Path(tmp)
        mlflow_db = create_database(server, "mlflow")
        with mlflow_server(mlflow_db, work / "artifacts", work / "mlflow.log") as uri:
            for k in args.workers:
                row = _measure(server, uri, k, args.trials, work)
                print(row, flush=True)
                rows.append(row)
        empty = []
        for k in args.empty:
            empty.append(_storage_rate(server, k, 100))
            print(empty[-1], flush=True)
    cores = os.cpu_count()
    lines = [
        f"## Many workers, one study: PostgreSQL + MLflow server ({cores} cores)", "",
        f"Command: `python -m experiments.benchmarks.bench_distributed --trials {args.trials}`"
        f". Machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}; "
        "PostgreSQL and `mlflow server --serve-artifacts` (its backend in the same PostgreSQL) "
        "on this machine; K `python -m tuner run` processes started at once on a fresh "
        "database, each with its own output folder (as K hosts); CART and Gaussian copula on "
        "Fair's 6,366 rows (utility 1 - Hellinger, 20 membership repeats). Trials per minute "
        "from the first trial's start to the last one's end; wall time includes start-up "
        "(imports, reading the data) and the export of the one release. The machine is "
        f"shared: load average {load_before:.1f} before the run and {os.getloadavg()[0]:.1f} "
        "after it.", "",
        "| workers | trials | trials/minute | mean trial s | wall s | peak PostgreSQL "
        "connections | exit codes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['trials']} | {r['per_minute']:.1f} | "
                     f"{r['mean_trial']:.1f} | {r['wall']:.0f} | {r['connections']} | "
                     f"{r['codes']} |")
    lines += [
        "", "The storage alone: K processes on the same cores running trials that do no work "
        "but make the tuner's storage calls (heartbeat, budget slot, two parameters, ten "
        "attributes), 100 each; what one PostgreSQL coordinated (the clients' CPU is the "
        "limit here, so the server's capacity is at least this):", "",
        "| client processes | trials | trials/second |", "|---|---|---|",
    ]
    lines += [f"| {e['processes']} | {e['trials']} | {e['per_second']:.1f} |" for e in empty]
    write_section(args.output, "bench_distributed", "\n".join(lines))
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
