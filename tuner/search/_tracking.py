"""MLflow tracking: one experiment per study, a parent run per invocation, a child per trial.

Stores default to the output folder: ``sqlite:///OUT/mlflow.db`` with artifacts in
``OUT/mlartifacts`` (MLflow 3's defaults would put both in the current directory). Telemetry is
turned off (there is no network) when a tracker is made, not at import. Only numbers,
parameters, tags and plots are logged: never real records, SDV metadata or model pickles.

Runs are tagged with the host and process id that own them, so a later invocation can mark the
runs of a killed process as FAILED instead of leaving them "running" forever, and a worker on
another host can do the same for a worker whose trial Optuna's heartbeat failed.

With an MLflow tracking server (``http://``), the experiment is created without an artifact
location, so that the server's own store (``mlflow server --serve-artifacts``: ``mlflow-artifacts:``
URIs, uploaded and downloaded through the server) holds every artifact and any host reads them.
Two workers creating the experiment at once: the second is answered RESOURCE_ALREADY_EXISTS and
looks it up again. A server is probed before anything else (:func:`check_reachable`): a URI
that does not answer fails within seconds, naming it, instead of MLflow's retries for minutes.

Names: MLflow accepts metric, parameter and tag names of letters, digits, ``_ - . /``, spaces
and (not on Windows) colons, and no path tricks (``a//b``, ``..``), 250 characters at most. The
tuner's own names are such; a column name (``cap_v1.COLUMN``) may not be. Every name goes
through :meth:`Tracker.key`: one that MLflow might refuse is logged with each other character
(and ``/`` and ``:``) replaced by ``_``, a suffix ``_2``, ``_3``, ... when two names of one run
would become one, and the run's tag ``risk_tuner.names`` maps the logged names back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from tuner._common.faults import Uninterrupted
from tuner.config import ConfigError
from tuner.search._budget import pid_alive
from tuner.search._empty_store import start_from_empty

RELEASED_TAG = "released"
# MLflow 3 opens an experiment in its GenAI view unless told it holds model development runs
EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development"}
HOST_TAG = "risk_tuner.host"
PID_TAG = "risk_tuner.pid"
NAMES_TAG = "risk_tuner.names"  # JSON {logged name: name given} of the run's renamed keys
MAX_KEY = 250  # MLflow's limit on a metric, parameter or tag name
MAX_TAG_VALUE = 8000
_NOT_PORTABLE = re.compile(r"[^\w.\- ]")  # besides "/" and ":", which MLflow takes on Linux
PROBE_SECONDS = 5.0


def mlflow_name(name: str) -> str:
    """``name`` as MLflow accepts it on every platform: itself when it is such a name, else
    each other character replaced by ``_`` (a name over 250 characters cut, with a hash)."""
    clean = _NOT_PORTABLE.sub("_", name)
    if clean in ("", ".") or clean.startswith(".."):
        clean = "_" + clean
    if len(clean) > MAX_KEY:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        clean = f"{clean[:MAX_KEY - 9]}-{digest}"
    return clean


def _why(exc: BaseException) -> str:
    """The root cause of a failed request in a few words ("Connection refused")."""
    text = str(exc)
    found = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
    if found:
        return found.group(1).strip()
    return text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__


def check_reachable(uri: str, timeout: float = PROBE_SECONDS) -> None:
    """Raise :class:`ConfigError` within ``timeout`` seconds when the MLflow server at ``uri``
    cannot be reached (MLflow itself retries for minutes); nothing for a local store."""
    if not is_remote(uri):
        return
    import requests

    try:
        answer = requests.get(uri.rstrip("/") + "/health", timeout=timeout)
    except requests.RequestException as exc:
        why = "no answer" if isinstance(exc, requests.Timeout) else _why(exc)
        raise ConfigError(f"study.mlflow_uri = {uri!r} cannot be reached ({why}; "
                          f"waited up to {timeout:g} s): start the MLflow server there (mlflow "
                          "server --host ... --port ...), or fix study.mlflow_uri") from None
    if answer.status_code >= 500:
        raise ConfigError(f"study.mlflow_uri = {uri!r} answered HTTP {answer.status_code} to "
                          "/health: is the MLflow server there up and healthy?")


@contextlib.contextmanager
def _one_try(remote: bool) -> Iterator[None]:
    """MLflow's HTTP requests without retries for the block: the first request to a server
    that answers an error (a 5xx MLflow would retry for minutes) fails at once; later ones keep
    MLflow's retries (a server restarting mid-study is waited for).

    The wait for an answer stays MLflow's (``MLFLOW_HTTP_REQUEST_TIMEOUT``, 120 s unless the user
    set it): :func:`check_reachable` has seen the server answer, so a slow first answer is a busy
    server (many workers starting at once on its one web worker), not a missing one. A 10 s
    limit here failed 3 of 6 workers started together in CI."""
    if not remote:
        yield
        return
    keys = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}
    before = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def local_uri(output: Path) -> str:
    """The study's own MLflow store in its output folder (the default)."""
    return f"sqlite:///{(output / 'mlflow.db').resolve()}"


def is_remote(uri: str) -> bool:
    """An MLflow tracking server (its artifacts are served by it, not written here)."""
    return uri.startswith(("http://", "https://"))


def ui_command(uri: str, output: Path) -> str:
    if is_remote(uri):
        return f"(the MLflow server serves its own UI at {uri})"
    return (f"mlflow ui --backend-store-uri {uri} "
            f"--default-artifact-root {(output / 'mlartifacts').resolve()} --port 5000")


class Tracker:
    """Thin wrapper over ``MlflowClient`` for the study's runs."""

    def __init__(self, uri: str, experiment: str, output: Path) -> None:
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        os.environ.setdefault("DO_NOT_TRACK", "true")
        # with a server, MLflow prints a "View run at" link for every run ended: one per trial
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient

        self.uri = uri
        self.names: dict[str, str] = {}  # name given -> name logged
        self._given: dict[str, str] = {}  # name logged -> name given
        self._renamed: dict[str, dict[str, str]] = {}  # per run: logged -> given
        check_reachable(uri)
        if uri == local_uri(output):  # a new store: a copy of MLflow's empty one (2-5 s less)
            start_from_empty(output / "mlflow.db", (output / "mlartifacts").resolve())
        try:
            with _one_try(is_remote(uri)):
                # each call whole: a Ctrl-C inside a write would leave SQLite locked
                self.client = Uninterrupted(MlflowClient(tracking_uri=uri))
                found = self.client.get_experiment_by_name(experiment)
        except MlflowException as exc:
            if uri == local_uri(output):
                raise
            raise ConfigError(f"study.mlflow_uri = {uri!r} does not work as an MLflow tracking "
                              f"store: {_why(exc)}") from None
        self.experiment_id = found.experiment_id if found else self._create(experiment, output)

    def _create(self, experiment: str, output: Path) -> str:
        from mlflow.exceptions import MlflowException

        location = None
        if not is_remote(self.uri):
            artifacts = (output / "mlartifacts").resolve()
            artifacts.mkdir(parents=True, exist_ok=True)
            location = artifacts.as_uri()
        try:
            made = self.client.create_experiment(experiment, artifact_location=location,
                                                 tags=EXPERIMENT_TAGS)
        except MlflowException as exc:
            if exc.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            found = self.client.get_experiment_by_name(experiment)  # another worker made it
            if found is None:
                raise
            return str(found.experiment_id)
        if self.uri == local_uri(output):
            self._drop_empty_default()
        return str(made)

    def _drop_empty_default(self) -> None:
        """MLflow creates a "Default" experiment in every new store; in the study's own store an
        empty one only confuses (the UI opens on it), so it is deleted (MLflow keeps id 0)."""
        default = self.client.get_experiment("0")
        if default.lifecycle_stage == "active" and not self.client.search_runs(["0"],
                                                                               max_results=1):
            self.client.delete_experiment("0")

    def mark_released(self, run_id: str) -> None:
        """Tag ``run_id`` ``released = true`` and every other run of the study ``false``."""
        for run in self.client.search_runs([self.experiment_id], "tags.released = 'true'",
                                           max_results=1000):
            if run.info.run_id != run_id:
                self.client.set_tag(run.info.run_id, RELEASED_TAG, "false")
        self.client.set_tag(run_id, RELEASED_TAG, "true")

    def mark_withdrawn(self, run_id: str) -> None:
        """Tag ``run_id`` ``released = false``: its release was withdrawn (release/_export)."""
        self.client.set_tag(run_id, RELEASED_TAG, "false")
        self.client.set_tag(run_id, "risk_tuner.release_withdrawn", "true")

    def log_folder(self, run_id: str, folder: Path, artifact_path: str) -> None:
        """Every file of ``folder`` as artifacts of ``run_id`` under ``artifact_path``."""
        self.client.log_artifacts(run_id, str(folder), artifact_path)

    def log_table(self, run_id: str, name: str, frame: Any) -> None:
        self.client.log_table(run_id, data=frame, artifact_file=name)

    def _owner_tags(self) -> dict[str, str]:
        return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}

    def start(self, name: str, *, parent: str | None = None, tags: dict[str, str] | None = None
              ) -> str:
        all_tags = {"mlflow.runName": name, **self._owner_tags(), **(tags or {})}
        if parent:
            all_tags["mlflow.parentRunId"] = parent
        run = self.client.create_run(self.experiment_id, tags=all_tags, run_name=name)
        return str(run.info.run_id)

    def key(self, name: str) -> str:
        """The name ``name`` is logged under (:func:`mlflow_name`), never another name's."""
        if name not in self.names:
            base = logged = mlflow_name(name)
            n = 2
            while logged in self._given:
                logged = f"{base[:MAX_KEY - 1 - len(str(n))]}_{n}"
                n += 1
            self.names[name], self._given[logged] = logged, name
        return self.names[name]

    def _keys(self, run_id: str, names: list[str]) -> dict[str, str]:
        """Logged names of ``names``: those MLflow takes as they are first, the others in
        sorted order, so that every process renames the names of a trial alike."""
        ordered = sorted(names, key=lambda k: (mlflow_name(k) != k, k))
        return {k: self.key(k) for k in ordered}

    def log(self, run_id: str, *, metrics: dict[str, float] | None = None,
            params: dict[str, Any] | None = None, tags: dict[str, Any] | None = None,
            series: dict[str, Sequence[float]] | None = None, step: int = 0) -> None:
        """One batch: ``metrics`` at ``step`` (a neural trial's checkpoints: its epochs, so
        MLflow draws the learning curve), each of ``series`` as a metric whose value at
        step i is its i-th element (MLflow draws it as a line chart: a curve without the
        quarter second a rendered figure costs a trial)."""
        from mlflow.entities import Metric, Param, RunTag

        metrics, params, tags = metrics or {}, params or {}, dict(tags or {})
        series = series or {}
        given = [*metrics, *series, *params, *tags]
        if run_id not in self._renamed and any(mlflow_name(k) != k for k in given):
            # another process (the release, its audit) may have renamed names of this run:
            # keep its map and its logged names, so the tag still maps every name back
            known = self._renames_logged(run_id)
            for logged, name in known.items():
                if name not in self.names and logged not in self._given:
                    self.names[name], self._given[logged] = logged, name
            self._renamed[run_id] = known
        keys = self._keys(run_id, given)
        renamed = {v: k for k, v in keys.items() if v != k}
        if renamed:  # the run's tag maps every name renamed in it back
            self._renamed.setdefault(run_id, {}).update(renamed)
            names = json.dumps(self._renamed[run_id], ensure_ascii=False, sort_keys=True)
            if len(names) <= MAX_TAG_VALUE:
                tags[NAMES_TAG] = names
            else:
                self.client.log_dict(run_id, self._renamed[run_id], "mlflow_names.json")
        now = int(time.time() * 1000)
        self.client.log_batch(
            run_id,
            metrics=[Metric(keys[k], float(v), now, step) for k, v in metrics.items()
                     if math.isfinite(float(v))]
            + [Metric(keys[k], float(v), now, i) for k, values in series.items()
               for i, v in enumerate(values) if math.isfinite(float(v))],
            params=[Param(keys[k], str(v)[:6000]) for k, v in params.items()],
            tags=[RunTag(keys.get(k, k), str(v)[:MAX_TAG_VALUE]) for k, v in tags.items()],
        )

    def _renames_logged(self, run_id: str) -> dict[str, str]:
        """The run's own map of renamed names (its :data:`NAMES_TAG`), empty when it has none."""
        text = self.client.get_run(run_id).data.tags.get(NAMES_TAG)
        if not text:
            return {}
        try:
            found = json.loads(text)
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def log_figure(self, run_id: str, name: str, figure: Figure) -> None:
        self.client.log_figure(run_id, figure, name)

    def log_dict(self, run_id: str, name: str, payload: dict[str, Any]) -> None:
        self.client.log_dict(run_id, payload, name)

    def end(self, run_id: str, status: str = "FINISHED") -> None:
        self.client.set_terminated(run_id, status)

    def open_runs_of_trial(self, number: int) -> list[str]:
        """Ids of the runs of Optuna trial ``number`` that this process opened and has not
        ended: what a Ctrl-C between ``create_run`` and the caller learning the id leaves."""
        found = self.client.search_runs(
            [self.experiment_id],
            f"tags.optuna_trial = '{int(number)}' and attributes.status = 'RUNNING'")
        mine = self._owner_tags()
        return [run.info.run_id for run in found
                if all(run.data.tags.get(k) == v for k, v in mine.items())]

    def fail_orphans(self) -> int:
        """Mark RUNNING runs whose owning process on this host is gone as FAILED."""
        host = socket.gethostname()
        fixed = 0
        runs = self.client.search_runs([self.experiment_id], "attributes.status = 'RUNNING'",
                                       max_results=5000)
        for run in runs:
            tags = run.data.tags
            pid = tags.get(PID_TAG)
            if tags.get(HOST_TAG) == host and pid and not pid_alive(int(pid)):
                self._mark_failed(run.info.run_id,
                                  "owning process died (killed?); marked FAILED on resume")
                fixed += 1
        return fixed

    def _mark_failed(self, run_id: str, note: str) -> None:
        """Tag ``run_id`` with ``note`` and end it FAILED, tolerating another worker doing the
        same at the same moment (every surviving worker reaps a dead one's runs: on an MLflow
        server the second INSERT of the tag violates its primary key). Any other error, or
        one after which the run is still RUNNING without the note, is raised."""
        from mlflow.exceptions import MlflowException

        try:
            self.client.set_tag(run_id, "risk_tuner.note", note)
            self.client.set_terminated(run_id, "FAILED")
        except MlflowException:
            run = self.client.get_run(run_id)
            if run.info.status == "RUNNING" and run.data.tags.get("risk_tuner.note") != note:
                raise
            if run.info.status == "RUNNING":  # the other worker tagged it, not yet ended
                self.client.set_terminated(run_id, "FAILED")

    def fail_runs_of(self, owners: set[tuple[str, str]], note: str) -> int:
        """Mark the RUNNING runs owned by ``(host, pid)`` in ``owners`` as FAILED (a worker on
        any host whose trial Optuna's heartbeat failed: its invocation's run and its trial's)."""
        if not owners:
            return 0
        fixed = 0
        for run in self.client.search_runs([self.experiment_id], "attributes.status = 'RUNNING'",
                                           max_results=5000):
            tags = run.data.tags
            if (tags.get(HOST_TAG), tags.get(PID_TAG)) in owners:
                self._mark_failed(run.info.run_id, note)
                fixed += 1
        return fixed
