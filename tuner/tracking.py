"""MLflow tracking: one experiment per study, a parent run per invocation, a child per trial.

Stores default to the output folder: ``sqlite:///OUT/mlflow.db`` with artifacts in
``OUT/mlartifacts`` (MLflow 3's defaults would put both in the current directory). Telemetry is
turned off (there is no network) when a tracker is made, not at import. Only numbers,
parameters, tags and plots are logged: never real records, SDV metadata or model pickles.

Runs are tagged with the host and process id that own them, so a later invocation can mark the
runs of a killed process as FAILED instead of leaving them "running" forever.
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


def ui_command(uri: str, output: Path) -> str:
    return (f"mlflow ui --backend-store-uri {uri} "
            f"--default-artifact-root {(output / 'mlartifacts').resolve()} --port 5000")


class Tracker:
    """Thin wrapper over ``MlflowClient`` for the study's runs."""

    def __init__(self, uri: str, experiment: str, output: Path) -> None:
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        os.environ.setdefault("DO_NOT_TRACK", "true")
        from mlflow.tracking import MlflowClient

        self.uri = uri
        self.client = MlflowClient(tracking_uri=uri)
        found = self.client.get_experiment_by_name(experiment)
        if found is None:
            artifacts = (output / "mlartifacts").resolve()
            artifacts.mkdir(parents=True, exist_ok=True)
            self.experiment_id = self.client.create_experiment(
                experiment, artifact_location=artifacts.as_uri(), tags=EXPERIMENT_TAGS)
            if uri == local_uri(output):
                self._drop_empty_default()
        else:
            self.experiment_id = found.experiment_id

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
