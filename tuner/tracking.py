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
looks it up again.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from tuner.budget import pid_alive

RELEASED_TAG = "released"
# MLflow 3 opens an experiment in its GenAI view unless told it holds model development runs
EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development"}
HOST_TAG = "risk_tuner.host"
PID_TAG = "risk_tuner.pid"


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
        from mlflow.tracking import MlflowClient

        self.uri = uri
        self.client = MlflowClient(tracking_uri=uri)
        found = self.client.get_experiment_by_name(experiment)
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

    def log(self, run_id: str, *, metrics: dict[str, float] | None = None,
            params: dict[str, Any] | None = None, tags: dict[str, Any] | None = None) -> None:
        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        self.client.log_batch(
            run_id,
            metrics=[Metric(k, float(v), now, 0) for k, v in (metrics or {}).items()
                     if math.isfinite(float(v))],
            params=[Param(k, str(v)[:6000]) for k, v in (params or {}).items()],
            tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()],
        )

    def log_figure(self, run_id: str, name: str, figure: Figure) -> None:
        self.client.log_figure(run_id, figure, name)

    def log_dict(self, run_id: str, name: str, payload: dict[str, Any]) -> None:
        self.client.log_dict(run_id, payload, name)

    def end(self, run_id: str, status: str = "FINISHED") -> None:
        self.client.set_terminated(run_id, status)

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
                self.client.set_tag(run.info.run_id, "risk_tuner.note",
                                    "owning process died (killed?); marked FAILED on resume")
                self.client.set_terminated(run.info.run_id, "FAILED")
                fixed += 1
        return fixed

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
                self.client.set_tag(run.info.run_id, "risk_tuner.note", note)
                self.client.set_terminated(run.info.run_id, "FAILED")
                fixed += 1
        return fixed
