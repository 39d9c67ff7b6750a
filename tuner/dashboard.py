"""optuna-dashboard on a study's storage, with feasibility shown right.

optuna-dashboard 0.21 was written for Optuna 4's constraints: it picks the best
trial with ``storage.get_best_trial``, which ignores constraints, and reads a trial's constraints
from the system attribute ``"constraints"`` (a list), whereas Optuna 5 stores one attribute
``"constraints:NAME"`` per constraint. On this tuner's studies it therefore shows every trial as
feasible and the trial with the lowest loss as the best, however infeasible.

:class:`FeasibilityStorage` wraps the study's storage for the dashboard (and only for it):

* ``get_best_trial`` returns the trial the release takes (:func:`tuner.search.best_feasible`:
  the lowest loss among those whose every constraint is <= 0, Optuna's convention, and not
  refused at release);
* every trial it serves also carries its constraint values as the list the dashboard reads, so
  its plots grey out infeasible trials and "Include infeasible trials" works; a trial refused at
  release carries one more value, > 0, so it is greyed out too and the history's best line
  ends at the trial the release takes.

When no trial is feasible (or every feasible one was refused at release) there is no best
trial, but the dashboard asks for one whenever a trial is complete; :class:`FeasibleBestOnly`
(a Bottle plugin) then removes an infeasible or refused "best" trial from the study's API
answer, so the dashboard shows none.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Container, Sequence
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import optuna
from optuna.storages import BaseStorage
from optuna.trial import FrozenTrial

from tuner._common import attrs as attrs_module
from tuner.config import ConfigError
from tuner.errors import InputError
from tuner.search import best_feasible, pareto_choice, rejected

if TYPE_CHECKING:  # optuna declares it in a private module only
    from optuna.study._frozen import FrozenStudy

DASHBOARD_CONSTRAINTS_KEY = "constraints"  # what optuna-dashboard 0.21 reads: a list of floats
STUDY_DETAIL_RULE = "/api/studies/<study_id:int>"  # the dashboard's route with "best_trials"


REFUSED_VALUE = 1.0  # the dashboard's constraint value of a trial refused at release: > 0


def _for_dashboard(trial: FrozenTrial, refused: bool = False) -> FrozenTrial:
    """A shallow copy of ``trial`` whose system attributes also hold its constraint values as
    the list optuna-dashboard reads, in the order of their names, and, for a trial refused at
    release, one more value > 0 so that its plots grey it out as infeasible and its history's
    best line does not reach it (the storage's own trial, maybe cached, is not touched)."""
    values = [v for _, v in sorted(trial.constraints.items())]
    if refused:
        values.append(REFUSED_VALUE)
    if not values or DASHBOARD_CONSTRAINTS_KEY in trial.system_attrs:
        return trial
    served = copy.copy(trial)
    served.system_attrs = {**trial.system_attrs, DASHBOARD_CONSTRAINTS_KEY: values}
    return served


def _shown_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """A study's attributes as the dashboard may show them: without its secret and the
    release audits' seeds and vulnerability scores (design §9.2; a dashboard may be served to
    people who must not rebuild the split)."""
    hidden = {k for k in attrs if k == attrs_module.SECRET or k.startswith(
        attrs_module.AUDIT_PREFIX)}
    return {k: ("(custodian-only: hidden)" if k in hidden else v) for k, v in attrs.items()}


class FeasibilityStorage(BaseStorage):
    """``storage`` as optuna-dashboard should see it: the best trial is the best feasible one,
    and every trial's constraints are where the dashboard reads them. Every other call goes to
    ``storage`` unchanged (writes included: the dashboard's notes and its "fail trial" button)."""

    def __init__(self, storage: BaseStorage) -> None:
        if not isinstance(storage, BaseStorage):
            raise TypeError(f"storage must be an optuna BaseStorage, got "
                            f"{type(storage).__name__}")
        self._inner = storage

    def get_best_trial(self, study_id: int) -> FrozenTrial:
        name = self._inner.get_study_name_from_id(study_id)
        study = optuna.load_study(study_name=name, storage=self._inner)
        # the trial the release takes: feasible, lowest loss, not refused at release
        best = best_feasible(study) if len(study.directions) == 1 else None
        if best is None:
            # none: the dashboard needs a trial here; FeasibleBestOnly drops an infeasible one
            best = self._inner.get_best_trial(study_id)
        return _for_dashboard(best)

    def get_all_trials(self, study_id: int, deepcopy: bool = True,
                       states: Container[optuna.trial.TrialState] | None = None
                       ) -> list[FrozenTrial]:
        trials = self._inner.get_all_trials(study_id, deepcopy=deepcopy, states=states)
        refused = self._refused(study_id)
        return [_for_dashboard(t, t.number in refused) for t in trials]

    def get_trial(self, trial_id: int) -> FrozenTrial:
        # one trial by id (the dashboard's notes): Optuna's storage API cannot name its study,
        # so a refused trial is not marked here; the study's plots read get_all_trials
        return _for_dashboard(self._inner.get_trial(trial_id))

    def _refused(self, study_id: int) -> set[int]:
        """Numbers of the study's trials refused at release
        (:func:`tuner.search.rejected`)."""
        attrs = self._inner.get_study_user_attrs(study_id)
        return {int(k[len(attrs_module.REJECTED_PREFIX):]) for k, v in attrs.items()
                if k.startswith(attrs_module.REJECTED_PREFIX) and v}

    # everything else: the wrapped storage's answer
    def create_new_study(self, directions: Sequence[optuna.study.StudyDirection],
                         study_name: str | None = None) -> int:
        return self._inner.create_new_study(directions, study_name)

    def delete_study(self, study_id: int) -> None:
        self._inner.delete_study(study_id)

    def set_study_user_attr(self, study_id: int, key: str, value: Any) -> None:
        self._inner.set_study_user_attr(study_id, key, value)

    def set_study_system_attr(self, study_id: int, key: str, value: Any) -> None:
        self._inner.set_study_system_attr(study_id, key, value)

    def get_study_id_from_name(self, study_name: str) -> int:
        return self._inner.get_study_id_from_name(study_name)

    def get_study_name_from_id(self, study_id: int) -> str:
        return self._inner.get_study_name_from_id(study_id)

    def get_study_directions(self, study_id: int) -> list[optuna.study.StudyDirection]:
        return self._inner.get_study_directions(study_id)

    def get_study_user_attrs(self, study_id: int) -> dict[str, Any]:
        return _shown_attrs(self._inner.get_study_user_attrs(study_id))

    def get_study_system_attrs(self, study_id: int) -> dict[str, Any]:
        return self._inner.get_study_system_attrs(study_id)

    def get_all_studies(self) -> list[FrozenStudy]:
        out = []
        for s in self._inner.get_all_studies():
            shown = copy.copy(s)
            shown.user_attrs = _shown_attrs(s.user_attrs)
            out.append(shown)
        return out

    def create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> int:
        return self._inner.create_new_trial(study_id, template_trial)

    def set_trial_param(self, trial_id: int, param_name: str, param_value_internal: float,
                        distribution: optuna.distributions.BaseDistribution) -> None:
        self._inner.set_trial_param(trial_id, param_name, param_value_internal, distribution)

    def set_trial_state_values(self, trial_id: int, state: optuna.trial.TrialState,
                               values: Sequence[float] | None = None) -> bool:
        return self._inner.set_trial_state_values(trial_id, state, values)

    def set_trial_intermediate_value(self, trial_id: int, step: int,
                                     intermediate_value: float) -> None:
        self._inner.set_trial_intermediate_value(trial_id, step, intermediate_value)

    def set_trial_user_attr(self, trial_id: int, key: str, value: Any) -> None:
        self._inner.set_trial_user_attr(trial_id, key, value)

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        self._inner.set_trial_system_attr(trial_id, key, value)


class FeasibleBestOnly:
    """Bottle plugin: in the study's API answer (``/api/studies/<id>``), drop a "best" trial
    with a constraint > 0. There is one only when no trial is feasible:
    :class:`FeasibilityStorage` picks the best feasible trial otherwise. In a Pareto-mode study
    (two directions) optuna-dashboard's "best trials" are the front of *every* trial, which an
    infeasible trial can dominate away; they are replaced by the front of the feasible trials
    (:func:`tuner.search.pareto_choice`, the front the release is picked from)."""

    name = "feasible_best_only"
    api = 2

    def __init__(self, storage: BaseStorage) -> None:
        self._storage = storage

    def apply(self, callback: Callable[..., Any], route: Any) -> Callable[..., Any]:
        if route.rule != STUDY_DETAIL_RULE:
            return callback

        @functools.wraps(callback)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            body = callback(*args, **kwargs)
            if not (isinstance(body, dict) and "best_trials" in body):
                return body
            if len(body.get("directions", ())) > 1 and "trials" in body:
                front = self._feasible_front(int(kwargs["study_id"]))
                body["best_trials"] = [t for t in body["trials"] if t.get("number") in front]
            else:  # feasible, and not refused at release (tuner.release._export)
                refused = rejected(self._study(int(kwargs["study_id"])))
                body["best_trials"] = [t for t in body["best_trials"]
                                       if all(c <= 0 for c in t.get("constraints", []))
                                       and t.get("number") not in refused]
            return body
        return wrapper

    def _study(self, study_id: int) -> optuna.Study:
        name = self._storage.get_study_name_from_id(study_id)
        return optuna.load_study(study_name=name, storage=self._storage)

    def _feasible_front(self, study_id: int) -> set[int]:
        choice = pareto_choice(self._study(study_id))
        return set() if choice is None else {t.number for t in choice[1]}


def app(storage: BaseStorage) -> Any:
    """optuna-dashboard's WSGI application (a Bottle app) on ``storage``, feasibility right."""
    try:
        from optuna_dashboard import wsgi
    except ImportError as exc:
        raise ConfigError("the dashboard needs optuna-dashboard, which is not installed: "
                          "python -m pip install 'risk-tuner[dashboard]' (or -e "
                          "'.[dashboard]' in a checkout)") from exc

    application = wsgi(FeasibilityStorage(storage))
    application.install(FeasibleBestOnly(storage))
    return application


def open_storage(storage_url: str) -> BaseStorage:
    """The study's Optuna storage; a SQLite file must exist (never create an empty one)."""
    from tuner.search import open_storage as open_tuner_storage

    if storage_url.startswith("sqlite:///"):
        path = Path(storage_url[len("sqlite:///"):])
        if not path.is_file():
            raise FileNotFoundError(f"storage {storage_url!r}: no file {path} (expected the "
                                    "study.db of an output folder of `risk-tuner run`)")
    return open_tuner_storage(storage_url)


class _ThreadedServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # the browser polls; one slow answer must not hold the others


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """No line per request (the dashboard polls every few seconds)."""


def serve(storage_url: str, *, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve the dashboard on ``host:port`` until interrupted."""
    if not 0 < port < 65536:
        raise InputError(f"port must be in 1..65535, got {port}")
    application = app(open_storage(storage_url))
    try:
        server = make_server(host, port, application, server_class=_ThreadedServer,
                             handler_class=_QuietHandler)
    except OSError as exc:  # the port is taken, the host is not this machine's
        raise InputError(f"cannot listen on host {host!r}, port {port}: {exc.strerror or exc} "
                         "(choose another --port or --host)") from exc
    with server:
        print(f"optuna-dashboard (constraints read as Optuna 5 stores them) on "
              f"http://{host}:{port}/dashboard  (Ctrl+C stops it)", flush=True)
        server.serve_forever()


def run_command(directory: str | None, *, storage_url: str | None = None,
                host: str = "127.0.0.1", port: int = 8080) -> None:
    """``risk-tuner dashboard``: the storage of an output folder or a config (or ``storage_url``
    itself, which shows every study in it), served until Ctrl+C."""
    if storage_url is None:
        if directory is None:
            raise ConfigError("dashboard needs an output folder, a config, or --storage URL")
        from tuner.api import load

        storage_url = load(directory).storage_url
    try:
        serve(storage_url, host=host, port=port)
    except KeyboardInterrupt:
        print("dashboard stopped")
