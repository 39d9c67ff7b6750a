"""MLflow tracking: names MLflow refuses, and tracking servers that are down or are not MLflow.

Names are checked against a real MLflow store (SQLite), not against MLflow's private
validators: what it stores is the ground truth. Servers are real sockets on this machine.
"""

from __future__ import annotations

import http.server
import json
import threading
import time

import optuna
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.examples import examples
from tests.tuner.conftest import TINY_AUDIT
from tuner.cli import main
from tuner.config import ConfigError
from tuner.data import read_builtin
from tuner.search._tracking import NAMES_TAG, Tracker, check_reachable, mlflow_name

AWKWARD = ["cap_v1.income [USD]/yr", "age: years", "âge", "x/../y", "..", "", ".", "a//b",
           "/lead", "trail/", "tab\there", "emoji 😀", "x" * 300, "ok name-1.2", "a[1]", "a(1)",
           "a_1_", "100%", "q?", "semi;colon", "quote'd", 'dq"', "back\\slash"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One real MLflow store for the module (making one takes seconds)."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    tracker = Tracker(uri, "names", folder)
    return uri, folder, tracker


def _logged(tracker: Tracker, run: str):
    return tracker.client.get_run(run).data


def test_every_awkward_name_is_logged_under_a_name_of_its_own(store):
    uri, folder, tracker = store
    run = tracker.start("awkward")
    metrics = {name: float(i) for i, name in enumerate(AWKWARD)}
    tracker.log(run, metrics=metrics, params={f"p.{n}": n for n in AWKWARD[:5]})
    data = _logged(tracker, run)
    keys = {name: tracker.key(name) for name in AWKWARD}
    assert len(set(keys.values())) == len(AWKWARD)  # nothing merged
    for name, value in metrics.items():
        assert data.metrics[keys[name]] == value, name
    for name in ("ok name-1.2", "âge", "a_1_"):  # names MLflow takes are left alone
        assert keys[name] == name
    assert keys["cap_v1.income [USD]/yr"] == "cap_v1.income _USD__yr"
    back = json.loads(data.tags[NAMES_TAG])
    assert back["cap_v1.income _USD__yr"] == "cap_v1.income [USD]/yr"
    assert set(back.values()) == {n for n in [*AWKWARD, *(f"p.{n}" for n in AWKWARD[:5])]
                                  if tracker.key(n) != n}
    assert data.params[tracker.key("p.cap_v1.income [USD]/yr")] == "cap_v1.income [USD]/yr"


def test_a_series_is_one_metric_with_a_value_per_step(store):
    _, _, tracker = store
    run = tracker.start("series")
    curve = (0.9, 0.55, float("nan"), 0.5)
    tracker.log(run, metrics={"m": 0.1}, series={"f1_by_h": curve, "cap [x]": (1.0,)})
    history = tracker.client.get_metric_history(run, "f1_by_h")
    assert [(h.step, h.value) for h in sorted(history, key=lambda h: h.step)] == [
        (0, 0.9), (1, 0.55), (3, 0.5)]  # a NaN step is left out, as NaN metrics are
    assert tracker.client.get_metric_history(run, tracker.key("cap [x]"))[0].value == 1.0
    assert _logged(tracker, run).metrics["m"] == 0.1


def test_colliding_names_are_renamed_alike_in_every_process(store):
    uri, folder, _ = store
    names = ["income (USD)/yr", "income [USD]/yr", "income _USD__yr", "other"]
    first = Tracker(uri, "names", folder)
    second = Tracker(uri, "names", folder)
    run1, run2 = first.start("one"), second.start("two")
    first.log(run1, metrics=dict.fromkeys(names, 1.0))
    second.log(run2, metrics=dict.fromkeys(reversed(names), 1.0))  # another order
    assert first.names == second.names
    assert first.key("income _USD__yr") == "income _USD__yr"  # the valid name keeps its name
    assert {first.key(n) for n in names[:2]} == {"income _USD__yr_2", "income _USD__yr_3"}


def test_a_later_process_logging_to_the_run_keeps_its_map_of_names(store):
    # the release's audit logs to the released trial's run from another process: its batch
    # once replaced the run's map, so the trial's renamed CAP names could no longer be read back
    uri, folder, _ = store
    trial = Tracker(uri, "names", folder)
    run = trial.start("trial")
    trial.log(run, metrics={"cap.income (USD)/yr": 1.0, "cap.income [USD]/yr": 2.0})
    release = Tracker(uri, "names", folder)  # a fresh process
    release.log(run, metrics={"audit.income [USD]/yr": 3.0, "cap.income [USD]/yr": 2.0})
    data = _logged(release, run)
    back = json.loads(data.tags[NAMES_TAG])
    logged = {back.get(k, k): v for k, v in data.metrics.items()}
    assert logged == {"cap.income (USD)/yr": 1.0, "cap.income [USD]/yr": 2.0,
                      "audit.income [USD]/yr": 3.0}
    assert release.key("cap.income [USD]/yr") == trial.key("cap.income [USD]/yr")


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(min_size=0, max_size=40), min_size=1, max_size=6, unique=True))
def test_any_names_are_stored_distinct_and_mapped_back(store, names):
    uri, folder, tracker = store
    run = tracker.start("hypothesis")
    tracker.log(run, metrics={n: float(i) for i, n in enumerate(names)})
    data = _logged(tracker, run)
    keys = [tracker.key(n) for n in names]
    assert len(set(keys)) == len(names)
    back = json.loads(data.tags.get(NAMES_TAG, "{}"))
    for i, (name, key) in enumerate(zip(names, keys, strict=True)):
        assert data.metrics[key] == float(i)
        assert key == name or back[key] == name
        assert mlflow_name(key) == key  # what is logged is a name MLflow takes as it is


class _Handler(http.server.BaseHTTPRequestHandler):
    health = 200
    api = 404
    delay = 0.0  # seconds before each API answer

    def do_GET(self):  # noqa: N802
        code = self.health if self.path.startswith("/health") else self.api
        if not self.path.startswith("/health"):
            time.sleep(self.delay)
        self.send_response(code)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>not MLflow</html>")

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    """An HTTP server on this machine answering with the codes set on its handler class."""
    made = []

    def start(health: int, api: int, delay: float = 0.0) -> str:
        handler = type("H", (_Handler,), {"health": health, "api": api, "delay": delay})
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        made.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in made:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("uri,why", [("http://127.0.0.1:9", "refused"),
                                     ("http://no-such-host.invalid:5000", "no-such-host")])
def test_an_unreachable_server_is_said_within_seconds(tmp_path, uri, why):
    started = time.monotonic()
    with pytest.raises(ConfigError, match="study.mlflow_uri") as raised:
        Tracker(uri, "x", tmp_path)
    assert time.monotonic() - started < 10
    assert uri in str(raised.value) and why in str(raised.value).lower()


@pytest.mark.parametrize("health,api,said", [(503, 503, "HTTP 503"),
                                             (200, 404, "does not work as an MLflow"),
                                             (200, 500, "does not work as an MLflow")])
def test_a_server_that_is_not_a_working_mlflow_is_said_within_seconds(tmp_path, server, health,
                                                                       api, said):
    # MLflow itself retries a 5xx answer with backoff for minutes; the first request is tried once
    uri = server(health, api)
    started = time.monotonic()
    with pytest.raises(ConfigError, match=said) as raised:
        Tracker(uri, "x", tmp_path)
    assert time.monotonic() - started < 20
    assert uri in str(raised.value)


@pytest.mark.slow  # waits 12 s for the answer
def test_a_server_slow_to_answer_its_first_request_is_waited_for(tmp_path, server):
    # CI: 6 workers starting at once on a server with one web worker; 3 gave up after 10 s
    uri = server(200, 404, delay=12.0)
    with pytest.raises(ConfigError, match="does not work as an MLflow") as raised:
        Tracker(uri, "x", tmp_path)
    assert "404" in str(raised.value) and "timed out" not in str(raised.value).lower()


def test_a_local_store_is_not_probed(tmp_path):
    check_reachable(f"sqlite:///{tmp_path / 'nothing-here.db'}")  # no network, no error
    assert not (tmp_path / "nothing-here.db").exists()


@pytest.mark.slow  # a study
def test_a_study_on_columns_named_as_mlflow_refuses(tmp_path, capsys):
    # "income [USD]/yr": brackets and a slash, refused by MLflow as a metric name; made every
    # trial fail with "(no reason recorded)". Two targets that clean up to the same name.
    frame = read_builtin("builtin:fair").head(300)
    frame = frame.rename(columns={"affairs": "income [USD]/yr", "age": "âge: years"})
    frame["income (USD)/yr"] = (frame["income [USD]/yr"] > 0).astype(int)
    frame.to_csv(tmp_path / "data.csv", index=False)
    targets = ["income [USD]/yr", "income (USD)/yr"]
    (tmp_path / "study.toml").write_text(f"""
[data]
path = "data.csv"
population_size = 100000
[study]
name = "names"
synthesizers = ["gaussian_copula"]
n_trials = 1
output = "out"
[risk]
repeats = 5
attribute_keys = ["âge: years", "yrs_married"]
cap_targets = {json.dumps(targets)}
inference_targets = {json.dumps(targets)}
[utility]
metric = "hellinger"
{TINY_AUDIT}""")
    code = main(["run", str(tmp_path / "study.toml"), "--no-progress"])
    out, err = capsys.readouterr()
    assert code in (0, 3), err[-3000:]
    study = optuna.load_study(study_name="names",
                              storage=f"sqlite:///{tmp_path / 'out' / 'study.db'}")
    trial = study.trials[0]
    assert trial.state == optuna.trial.TrialState.COMPLETE, trial.user_attrs.get("fail_reason")
    tracker = Tracker(f"sqlite:///{tmp_path / 'out' / 'mlflow.db'}", "names", tmp_path / "out")
    run = tracker.client.get_run(trial.user_attrs["mlflow_run_id"])
    assert run.info.status == "FINISHED"
    back = json.loads(run.data.tags[NAMES_TAG])
    logged = {back.get(k, k): v for k, v in run.data.metrics.items()}
    for target in targets:
        for metric in ("cap_v1", "inference_risk"):
            name = f"{metric}.{target}"
            assert logged[name] == pytest.approx(trial.user_attrs["metrics"][name]), name
    assert len({k for k in run.data.metrics if k.startswith("cap_v1.")}) == 2
    if code == 0:
        assert (tmp_path / "out" / "release" / "report.html").exists()


class _RacingClient:
    """An MLflow client whose set_tag meets another worker marking the same run first, as two
    surviving workers reaping a dead one's runs do on an MLflow server (its second INSERT of the
    tag violates the primary key: ``RestException: BAD_REQUEST ... UniqueViolation``)."""

    def __init__(self, real, other_worker_wins: bool):
        self.real, self.other_worker_wins = real, other_worker_wins

    def __getattr__(self, name):
        return getattr(self.real, name)

    def set_tag(self, run_id, key, value):
        from mlflow.exceptions import MlflowException

        if self.other_worker_wins:
            self.real.set_tag(run_id, key, value)
            self.real.set_terminated(run_id, "FAILED")
        raise MlflowException("duplicate key value violates unique constraint \"tag_pk\"")


@pytest.mark.parametrize("other_worker_wins", [True, False])
def test_two_workers_failing_the_same_dead_run_do_not_crash(store, other_worker_wins):
    from mlflow.exceptions import MlflowException

    from tuner.search._tracking import HOST_TAG, PID_TAG

    _, _, tracker = store
    run = tracker.client.create_run(tracker.experiment_id,
                                    tags={HOST_TAG: "far-host", PID_TAG: "4242"})
    real = tracker.client
    tracker.client = _RacingClient(real, other_worker_wins)
    try:
        if other_worker_wins:  # the run is already FAILED with the note: nothing to raise
            assert tracker.fail_runs_of({("far-host", "4242")}, "died") == 1
        else:  # an error that did not come from a concurrent marker is not swallowed
            with pytest.raises(MlflowException):
                tracker.fail_runs_of({("far-host", "4242")}, "died")
    finally:
        tracker.client = real
    got = real.get_run(run.info.run_id)
    if other_worker_wins:
        assert got.info.status == "FAILED" and got.data.tags["risk_tuner.note"] == "died"
    else:
        assert got.info.status == "RUNNING"
        real.set_terminated(run.info.run_id, "KILLED")


def test_a_ctrl_c_inside_a_tracking_write_takes_effect_after_it(store):
    # a KeyboardInterrupt inside SQLAlchemy's session left SQLite's write lock held, so the run
    # of the interrupted trial could not be ended (CI: "database is locked", MLflow tracebacks)
    import os
    import signal

    _, _, tracker = store
    run = tracker.start("interrupted")
    client = tracker.client._target
    original = client.log_batch

    def struck(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the write begins
        time.sleep(0.05)
        return original(*args, **kwargs)

    # Python's own Ctrl-C handler, as in a command typed at a terminal: pytest started in the
    # background of a non-interactive shell (`cmd &`, as a CI runner may) inherits SIGINT
    # ignored, Python then keeps it so, and an ignored Ctrl-C rightly raises nothing
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    client.log_batch = struck
    try:
        with pytest.raises(KeyboardInterrupt):
            tracker.log(run, params={"whole": "yes"}, metrics={"m": 1.0})
        # Ctrl-C's handler is given back
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        del client.log_batch
        signal.signal(signal.SIGINT, outer)
    start = time.monotonic()
    tracker.end(run, "KILLED")  # at once: no lock left behind
    assert time.monotonic() - start < 2
    data = _logged(tracker, run)
    assert data.params["whole"] == "yes" and data.metrics["m"] == 1.0  # the write was whole
    assert tracker.client.get_run(run).info.status == "KILLED"


def _schema(db) -> tuple[set, list]:
    """The tables and indexes of an SQLite store (by name), and its schema revision. Not their
    SQL: two stores MLflow builds itself differ in the order of the CHECK constraints of
    ``runs`` (its batch migrations reflect them as a set; the order follows the hash seed)."""
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return (set(con.execute("SELECT type, name, tbl_name FROM sqlite_master")),
                con.execute("SELECT version_num FROM alembic_version").fetchall())
    finally:
        con.close()


@pytest.mark.slow  # MLflow builds a store of its own (7 s)
def test_a_new_store_is_the_empty_store_mlflow_makes_with_its_own_artifacts(tmp_path,
                                                                            monkeypatch):
    from mlflow.tracking import MlflowClient

    from tuner.search import _empty_store

    monkeypatch.setenv(_empty_store.CACHE_ENV, str(tmp_path / "cache"))
    by_mlflow = tmp_path / "mlflow-made.db"
    MlflowClient(tracking_uri=f"sqlite:///{by_mlflow}").search_experiments()
    out = tmp_path / "out"
    out.mkdir()
    tracker = Tracker(f"sqlite:///{(out / 'mlflow.db').resolve()}", "study", out)
    import mlflow

    assert (tmp_path / "cache" / f"mlflow-{mlflow.__version__}-empty.db").is_file()
    (copied, revision), (made, made_revision) = _schema(out / "mlflow.db"), _schema(by_mlflow)
    assert copied == made, (copied - made, made - copied)  # every table and index
    assert revision == made_revision
    default = tracker.client.get_experiment("0")
    assert default.artifact_location == str(out.resolve() / "mlartifacts" / "0")
    assert default.lifecycle_stage == "deleted"  # empty, so deleted as before
    run = tracker.client.create_run(tracker.experiment_id).info.run_id
    tracker.client.log_metric(run, "m", 0.1)
    assert tracker.client.get_run(run).data.metrics == {"m": 0.1}
    assert sorted(p.name for p in out.iterdir()) == ["mlartifacts", "mlflow.db"]  # no part left


@pytest.mark.slow  # MLflow builds a store of its own (7 s)
def test_an_existing_store_is_never_replaced_and_a_cache_that_fails_leaves_it_to_mlflow(
        tmp_path, monkeypatch):
    from tuner.search import _empty_store

    db = tmp_path / "mlflow.db"
    db.write_bytes(b"someone's store")
    assert not _empty_store.start_from_empty(db, tmp_path / "mlartifacts")
    assert db.read_bytes() == b"someone's store"
    (tmp_path / "file").write_text("")  # a cache folder that cannot be made: a file is there
    monkeypatch.setenv(_empty_store.CACHE_ENV, str(tmp_path / "file" / "cache"))
    out = tmp_path / "out"
    out.mkdir()
    assert not _empty_store.start_from_empty(out / "mlflow.db", out / "mlartifacts")
    assert not (out / "mlflow.db").exists()
    tracker = Tracker(f"sqlite:///{(out / 'mlflow.db').resolve()}", "study", out)  # MLflow's own
    assert tracker.client.get_experiment(tracker.experiment_id).name == "study"
