"""optuna-dashboard on a constrained study: its HTTP API must call the best *feasible* trial
the best, and carry each trial's constraints where its plots read them (Optuna 5 stores them
where optuna-dashboard 0.21 does not look)."""

from __future__ import annotations

import json
import sys
from wsgiref.util import setup_testing_defaults

import optuna
import pytest
from optuna.distributions import CategoricalDistribution
from optuna.trial import create_trial

from tests.data import unavailable
from tuner.cli import EXIT_CONFIG, main
from tuner.dashboard import FeasibilityStorage, app, open_storage

try:
    import optuna_dashboard
except ImportError:  # the `dashboard` extra (CI installs it: there, a failure)
    unavailable('optuna-dashboard is not installed: python -m pip install -e ".[dashboard]"')

SPACE = {"synthesizer": CategoricalDistribution(["cart", "ctgan"])}


def _add(study: optuna.Study, value: float, constraints: dict[str, float] | None) -> None:
    study.add_trial(create_trial(value=value, params={"synthesizer": "cart"},
                                 distributions=SPACE, constraints=constraints))


def _study(url: str, name: str, trials: list[tuple[float, dict[str, float] | None]]) -> int:
    study = optuna.create_study(storage=url, study_name=name, direction="minimize")
    for value, constraints in trials:
        _add(study, value, constraints)
    return study._study_id


def _get(application, path: str) -> dict:  # noqa: ANN001
    environ: dict = {}
    setup_testing_defaults(environ)
    environ.update(REQUEST_METHOD="GET", PATH_INFO=path, QUERY_STRING="")
    status: list[str] = []
    body = b"".join(application(environ, lambda s, headers, exc_info=None: status.append(s)))
    assert status[0].startswith("200"), (path, status, body[:300])
    return json.loads(body)


def _best(application, study_id: int) -> list[int]:  # noqa: ANN001
    return [t["number"] for t in _get(application, f"/api/studies/{study_id}")["best_trials"]]


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'study.db'}"


def test_best_trial_is_the_best_feasible_one(url):
    # trial 0 has the lowest loss but breaks the M constraint (as trial 10 of the demo did)
    study_id = _study(url, "s", [(-0.96, {"m": 0.04, "copies": -0.1}),
                                 (-0.90, {"m": -0.10, "copies": -0.2}),
                                 (-0.50, {"m": -0.20, "copies": 0.0})])
    storage = open_storage(url)
    # optuna-dashboard on the storage as it is: the infeasible trial is "best" (the bug)
    assert _best(optuna_dashboard.wsgi(storage), study_id) == [0]
    ours = app(storage)
    assert _best(ours, study_id) == [1]
    trials = _get(ours, f"/api/studies/{study_id}")["trials"]
    # the dashboard's list: the values in the order of the constraints' names (copies, m)
    assert [t["constraints"] for t in trials] == [[-0.1, 0.04], [-0.2, -0.1], [0.0, -0.2]]
    # the stored trials are untouched: no dashboard-only attribute written or cached
    again = optuna.load_study(study_name="s", storage=url)
    assert all("constraints" not in t.system_attrs for t in again.trials)
    assert again.best_trial.number == 1
    assert set(again.trials[0].constraints) == {"m", "copies"}


def test_a_trial_refused_at_release_is_not_the_best(url):
    # trial 0 was feasible as scored but its data failed DCR in full at release
    # (tuner.release._export):
    # the best is the trial the release takes; when every feasible one is refused, none
    study_id = _study(url, "r", [(-0.96, {"m": -0.1}), (-0.90, {"m": -0.1}), (-0.99, {"m": 0.2})])
    study = optuna.load_study(study_name="r", storage=url)
    study.set_user_attr("release_rejected:0", "its data fail 'dcr' with every record scored")
    ours = app(open_storage(url))
    assert _best(ours, study_id) == [1]
    # its plots grey it out too: one more constraint value > 0 (the history's best line then
    # ends at the trial the release takes, not at the refused one)
    trials = _get(ours, f"/api/studies/{study_id}")["trials"]
    assert [t["constraints"] for t in trials] == [[-0.1, 1.0], [-0.1], [0.2]]
    study.set_user_attr("release_rejected:1", "the same")
    assert _best(ours, study_id) == []


def test_no_feasible_trial_means_no_best_trial(url):
    study_id = _study(url, "none", [(-0.9, {"m": 0.3}), (-0.5, {"m": 0.01})])
    storage = open_storage(url)
    assert _best(optuna_dashboard.wsgi(storage), study_id) == [0]
    detail = _get(app(storage), f"/api/studies/{study_id}")
    assert detail["best_trials"] == [] and len(detail["trials"]) == 2


def test_unconstrained_study_and_other_studies_are_shown_as_optuna_would(url):
    plain = _study(url, "plain", [(3.0, None), (1.0, None), (2.0, None)])
    constrained = _study(url, "constrained", [(1.0, {"m": 1.0}), (2.0, {"m": -1.0})])
    ours = app(open_storage(url))
    assert _best(ours, plain) == [1]
    assert _best(ours, constrained) == [1]
    names = {s["study_name"] for s in _get(ours, "/api/studies")["study_summaries"]}
    assert names == {"plain", "constrained"}


def test_wrapper_refuses_what_is_not_a_storage():
    with pytest.raises(TypeError, match="storage must be an optuna BaseStorage.*str"):
        FeasibilityStorage("sqlite:///study.db")  # type: ignore[arg-type]


def test_missing_study_db_is_an_error_not_an_empty_database(tmp_path, capsys):
    missing = tmp_path / "nothing" / "study.db"
    with pytest.raises(FileNotFoundError, match="no file .*study.db"):
        open_storage(f"sqlite:///{missing}")
    assert not missing.parent.exists()
    assert main(["dashboard", "--storage", f"sqlite:///{missing}"]) == EXIT_CONFIG
    assert "no file" in capsys.readouterr().err
    assert main(["dashboard", str(tmp_path)]) == EXIT_CONFIG
    assert "run.json" in capsys.readouterr().err


def test_port_out_of_range_is_refused(url, capsys):
    _study(url, "s", [(1.0, {"m": -1.0})])
    assert main(["dashboard", "--storage", url, "--port", "70000"]) == EXIT_CONFIG
    assert "port must be in 1..65535, got 70000" in capsys.readouterr().err


def test_missing_optuna_dashboard_says_what_to_install(url, monkeypatch, capsys):
    _study(url, "s", [(1.0, {"m": -1.0})])
    monkeypatch.setitem(sys.modules, "optuna_dashboard", None)  # import fails
    assert main(["dashboard", "--storage", url]) == EXIT_CONFIG
    assert "pip install 'risk-tuner[dashboard]'" in capsys.readouterr().err


def test_pareto_mode_study_shows_its_feasible_front(url):
    # Pareto mode (maximise U, minimise M): trial 0 dominates everything but breaks a
    # constraint; the feasible front is trials 1 and 2 (3 is dominated by 1)
    study = optuna.create_study(storage=url, study_name="p", directions=["maximize", "minimize"])
    points = [((0.99, -0.5), {"copies": 0.1}), ((0.95, -0.1), {"copies": -0.1}),
              ((0.80, -0.3), {"copies": -0.1}), ((0.90, -0.05), {"copies": -0.1})]
    for values, constraints in points:
        study.add_trial(create_trial(values=list(values), params={"synthesizer": "cart"},
                                     distributions=SPACE, constraints=constraints))
    application = app(FeasibilityStorage(open_storage(url)))
    assert sorted(_best(application, study._study_id)) == [1, 2]
