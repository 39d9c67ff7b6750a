"""End-to-end studies at tiny settings (marked slow; CI still runs them)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from optuna.trial import TrialState

import risk
import tuner.synthesis._synthesizers as synthesizers_module
from tests.tuner.conftest import NO_AUDIT, assert_no_real_records, write_config
from tuner import config
from tuner.cli import main
from tuner.data import protect, read_builtin
from tuner.release._export import NoFeasibleTrial, export
from tuner.search._budget import (
    budget_used,
    claim_slot,
    interrupted_numbers,
    record_interrupted,
    uncounted_numbers,
)
from tuner.search._context import prepare
from tuner.search._storage import open_study
from tuner.search._study import run_study
from tuner.search._trials import best_feasible, is_feasible, rejected, trials_frame
from tuner.synthesis._families import SYNTHESIZERS

pytestmark = pytest.mark.slow


def _run(cfg, enqueue=()):
    ctx = prepare(cfg)
    if enqueue:
        study = open_study(ctx)
        for params in enqueue:
            study.enqueue_trial(params)
    return ctx, run_study(ctx, progress=False)


def _child_runs(cfg):
    client = MlflowClient(tracking_uri=f"sqlite:///{cfg.study.output / 'mlflow.db'}")
    exp = client.get_experiment_by_name(cfg.study.name)
    return client, client.search_runs([exp.experiment_id], max_results=1000)


# the every-family study reads three of Fair's nine columns: AIM's rounds (16 per column),
# AIM's and MST's cliques and their JAX compilations (cold in CI) shrink with the columns. One
# MST and one AIM fit in a new process: 40 s of CPU on 5 columns, 21 s on 3
E2E_COLUMNS = ["age", "religious", "affairs"]


def test_every_synthesizer_end_to_end_release_and_no_real_records(tmp_path):
    names = tuple(SYNTHESIZERS)
    # a public seed: one split, one ranking. The release audit is off: on this study it audited
    # an MST release (8 refits and 2 pilot fits per DP candidate, half the test's time); the
    # audit's refits call the trials' own `synthesize`, and its files are scanned for real
    # records in tests/tuner/release/test_audit.py
    path = write_config(tmp_path, synthesizers=names, n_trials=len(names), public_seed=True,
                        extra=NO_AUDIT)
    path.write_text(path.read_text().replace(
        # MST and AIM over a domain read from the data (their codebook release is tested in
        # tests/tuner/data/test_codebook.py): here value protection is what is checked
        "train_fraction = 0.5", f"train_fraction = 0.5\ncolumns = {json.dumps(E2E_COLUMNS)}"
        '\ndp_domain = "data"'
    ).replace('attribute_keys = ["age", "yrs_married", "children", "religious"]',
              'attribute_keys = ["age", "religious"]'))
    cfg = config.load(path)
    ctx, study = _run(cfg, enqueue=[{"synthesizer": name} for name in SYNTHESIZERS])
    frame = trials_frame(study)
    assert sorted(frame["synthesizer"]) == sorted(SYNTHESIZERS)
    assert (frame["state"] == "COMPLETE").all(), frame[["synthesizer", "fail_reason"]]
    for t in study.get_trials(states=(TrialState.COMPLETE,)):
        assert set(t.constraints) == {"m", "copies", "near_copies", "dcr", "cap.affairs",
                                      "inference.affairs"}

    folder = export(ctx, study)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["metrics"]["m"] <= 0.2
    assert all(c["passed"] for c in manifest["constraints"].values())
    assert (folder / "report.md").exists() and (folder / "f1_curve.png").exists()

    # recompute M independently from the exported data and the recorded split
    data = read_builtin("builtin:fair")[E2E_COLUMNS]
    split_rows = json.loads((cfg.study.output / "split.json").read_text())
    assert not (folder / "split.json").exists()  # confidential: never in release/
    synthetic = pd.read_csv(folder / manifest["synthetic_file"])
    assert list(synthetic.columns) == E2E_COLUMNS
    mem = manifest["membership"]
    # the trials saw the data after value protection: coded again from the manifest's k
    coded, _ = protect({"train": data.iloc[split_rows["train_rows"]].reset_index(drop=True),
                        "holdout": data.iloc[split_rows["holdout_rows"]].reset_index(drop=True)},
                       manifest["protection"]["k"])
    assert manifest["protection"]["k"] == 10 and manifest["protection"]["columns"]
    again = risk.membership_disclosure(
        coded["train"], coded["holdout"], synthetic,
        population_size=manifest["data"]["population_size"],
        hamming_threshold=int(mem["hamming_threshold"]), repeats=int(mem["repeats"]),
        numeric_bins=manifest["config"]["numeric_bins"], random_state=int(mem["random_state"]))
    assert again.m == pytest.approx(manifest["metrics"]["m"], abs=1e-9)
    # the gate: no released record copies a record unique in the training data
    assert risk.exact_copies(coded["train"], synthetic).train_unique_copies == 0

    client, runs = _child_runs(cfg)
    assert all(r.info.status == "FINISHED" for r in runs)
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(children) == len(SYNTHESIZERS)
    for r in children:
        for key in ("utility", "m", "f1", "f_naive", "loss", "fit_seconds", "copies_difference",
                    "dcr_share_closer_to_train", "DiSCO.affairs", "replicated_uniques_removed",
                    "cap_v1.affairs", "cap_difference.affairs", "inference_risk.affairs"):
            assert key in r.data.metrics, key
        assert {"synthesizer", "feasible", "state"} <= set(r.data.tags)
        arts = {a.path for a in client.list_artifacts(r.info.run_id)}
        assert any(p.endswith("risk_results.json") for p in arts)
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags][0]
    arts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"risk_utility.png", "optimization_history.png"} <= arts

    # no real record in anything written, except the released synthetic data themselves
    assert_no_real_records(cfg.study.output, data, released=folder / "synthetic.csv")


def test_failing_trial_is_recorded_and_study_goes_on(tmp_path, monkeypatch, capsys):
    # the synthesiser itself raises (a library's error inside its fit): the trial's own
    # failure, said in the tuner's words; the study goes on
    real = synthesizers_module.build

    def flaky(name, *args, **kwargs):
        if name == "gaussian_copula":
            raise RuntimeError("synthetic failure for the test")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(synthesizers_module, "build", flaky)
    cfg = config.load(write_config(tmp_path, n_trials=3))
    _, study = _run(cfg, enqueue=[{"synthesizer": "gaussian_copula"}, {"synthesizer": "cart"}])
    frame = trials_frame(study)
    failed = frame[frame["state"] == "FAIL"]
    assert len(frame) == 3 and len(failed) >= 1
    assert "synthetic failure for the test" in failed["fail_reason"].iloc[0]
    assert (frame["state"] == "COMPLETE").any()
    _, runs = _child_runs(cfg)
    statuses = {r.data.tags.get("synthesizer"): r.info.status for r in runs
                if "mlflow.parentRunId" in r.data.tags}
    assert statuses["gaussian_copula"] == "FAILED"
    err = capsys.readouterr().err
    assert "(gaussian_copula) failed: gaussian_copula could not be fitted or sampled" in err
    assert "RuntimeError: synthetic failure for the test" in err


def test_a_bug_in_a_trial_stops_the_study_with_its_traceback(tmp_path, monkeypatch):
    # a TypeError planted in the trial's membership measure is a bug, not a bad synthesiser:
    # the study stops on it (the CLI then prints the traceback, exit 1), the trial and its
    # MLflow run are FAILED, the run carries the traceback
    import tuner.measures._membership as membership_module

    def broken(*args, **kwargs):
        raise TypeError("planted bug in the membership measure")

    monkeypatch.setattr(membership_module.risk, "membership_disclosure", broken)
    cfg = config.load(write_config(tmp_path, n_trials=3, synthesizers=("cart",)))
    with pytest.raises(TypeError, match="planted bug"):
        _run(cfg)
    study = optuna.load_study(study_name=cfg.study.name,
                              storage=f"sqlite:///{cfg.study.output / 'study.db'}")
    assert [t.state for t in study.trials] == [TrialState.FAIL]  # stopped at the first
    _, runs = _child_runs(cfg)
    (run,) = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert run.info.status == "FAILED"
    assert "planted bug in the membership measure" in run.data.tags["fail_traceback"]
    assert "Traceback (most recent call last)" in run.data.tags["fail_traceback"]


def test_resume_keeps_trials_and_finishes_budget(tmp_path):
    cfg = config.load(write_config(tmp_path, n_trials=2))
    _, first = _run(cfg)
    before = [(t.number, t.params) for t in first.get_trials()]
    _, second = _run(config.with_overrides(cfg, n_trials=4))
    trials = second.get_trials()
    assert len(trials) == 4
    assert [(t.number, t.params) for t in trials[:2]] == before


def test_same_config_and_public_seed_give_same_trials_and_a_secret_does_not(tmp_path):
    """With ``public_seed`` the config alone makes the study (reproducible by anyone); with
    the default secret two studies of one config split and fit differently (design §9.2)."""
    results: dict[str, list] = {}
    for sub, public in (("a", True), ("b", True), ("c", False), ("d", False)):
        folder = tmp_path / sub
        folder.mkdir()
        cfg = config.load(write_config(folder, n_trials=2, public_seed=public))
        ctx, study = _run(cfg)
        results[sub] = [ctx.split.train_positions.tolist()] + [
            (t.params, {k: v for k, v in t.user_attrs["metrics"].items()
                        if not k.endswith("_seconds")})
            for t in study.get_trials()]
    assert results["a"] == results["b"]
    assert results["c"][0] != results["d"][0] and results["c"][0] != results["a"][0]


def _assert_shared(study, n_trials, processes):
    trials = study.get_trials()
    numbers = [t.number for t in trials]
    assert len(numbers) == len(set(numbers))
    # exactly the budget ran a synthesiser; a trial started by a worker after the budget was
    # taken (two finishing at once) is surplus: pruned before it ran anything, not counted
    surplus = {int(k.split(".")[1]) for k in study.user_attrs if k.startswith("surplus.")}
    ran = [t for t in trials if t.number not in surplus]
    assert len(ran) == n_trials == budget_used(study)
    assert all(t.state == TrialState.PRUNED and "metrics" not in t.user_attrs
               for t in trials if t.number in surplus)
    assert len(trials_frame(study)) == n_trials
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert len({t.user_attrs["pid"] for t in ran}) == processes


def test_two_workers_share_one_study(tmp_path):
    # CTGAN trials (seconds each) so that the spawned worker starts before the budget is used;
    # its joblib work must not keep it alive after its last trial (this test would then hang)
    cfg = config.load(write_config(tmp_path, n_trials=8, workers=2, synthesizers=("ctgan",)))
    start = time.monotonic()
    _, study = _run(cfg)
    assert time.monotonic() - start < 250  # the exit hang it guards against is 300 s
    _assert_shared(study, 8, processes=2)


def test_two_invocations_started_together_share_one_study(tmp_path):
    # both create the new SQLite stores at once: creation must be serialised (the release's
    # audit is off, not under test here; two workers export with it in the test above)
    path = write_config(tmp_path, n_trials=8, synthesizers=("cart",), extra=NO_AUDIT)
    cmd = [sys.executable, "-m", "tuner", "run", str(path), "--no-progress"]
    root = Path(__file__).resolve().parents[3]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root,
                              text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    cfg = config.load(path)
    _assert_shared(open_study(prepare(cfg)), 8, processes=2)
    _, runs = _child_runs(cfg)
    assert all(r.info.status == "FINISHED" for r in runs)
    assert len([r for r in runs if "mlflow.parentRunId" not in r.data.tags]) == 2


def test_refuses_release_when_nothing_is_feasible(tmp_path, capsys):
    # CART with leaves of one record copies training uniques, which "infeasible" refuses
    path = write_config(tmp_path, n_trials=2, synthesizers=("cart",),
                        extra_risk='replicated_uniques = "infeasible"',
                        extra="[space.cart]\nmin_samples_leaf = [1, 1]\nmax_depth = [0]\n")
    assert main(["run", str(path), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "NO RELEASE CANDIDATE" in err and "'unique_copies' failed in 2/2" in err
    assert not (tmp_path / "out" / "release" / "manifest.json").exists()
    cfg = config.load(path)
    ctx = prepare(cfg)
    with pytest.raises(NoFeasibleTrial):
        export(ctx, open_study(ctx))


def test_sigkill_mid_trial_then_resume(tmp_path):
    path = write_config(tmp_path, n_trials=2, synthesizers=("ctgan",))
    # CTGAN trials long enough (5-6 epochs, several seconds) to be killed in one, which is
    # looked for every 0.2 s
    text = path.read_text().replace("epochs = [1, 2]\nbatch_size = [100]\n[space.tvae]",
                                    "epochs = [5, 6]\nbatch_size = [100]\n[space.tvae]", 1)
    # no pruner: whether the killed trial had reported its epoch-5 checkpoint (timing) decides
    # what Hyperband does with the next one, and a pruned trial is not a completed one
    path.write_text(text.replace("workers = 1", 'workers = 1\npruner = "none"', 1))
    cmd = [sys.executable, "-m", "tuner", "run", str(path), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=Path(__file__).resolve().parents[3])
    db = tmp_path / "out" / "study.db"
    deadline = time.time() + 300
    running = False
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    running = con.execute(
                        "select count(*) from trials where state = 'RUNNING'").fetchone()[0] > 0
            except sqlite3.Error:
                running = False
        if running:
            time.sleep(1)  # into the trial's fit
            break
    assert running, "no trial started in time"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    cfg = config.load(path)
    ctx, study = _run(cfg)
    states = [t.state for t in study.get_trials()]
    assert TrialState.RUNNING not in states
    assert TrialState.FAIL in states  # the killed trial
    assert sum(s in (TrialState.COMPLETE, TrialState.FAIL) for s in states) >= 2
    _, runs = _child_runs(cfg)
    assert not [r for r in runs if r.info.status == "RUNNING"]
    optuna_study = optuna.load_study(study_name=cfg.study.name, storage=ctx.storage_url)
    killed = [t for t in optuna_study.get_trials() if t.state == TrialState.FAIL]
    assert interrupted_numbers(optuna_study) == {killed[0].number}
    assert "process died" in optuna_study.user_attrs[f"interrupted.{killed[0].number}"]
    # the interrupted trial does not use the budget: the rerun completes both trials asked for
    complete = [t for t in optuna_study.get_trials() if t.state == TrialState.COMPLETE]
    assert len(complete) == 2


def test_budget_counts_in_flight_trials_and_not_interrupted_ones():
    study = optuna.create_study()
    for value in (1.0, 2.0):
        study.tell(study.ask(), value)
    study.tell(study.ask(), state=TrialState.FAIL)  # failed by its synthesiser: counts
    interrupted = study.ask()
    study.tell(interrupted, state=TrialState.FAIL)  # cut short by a killed process: does not
    record_interrupted(study, study.trials[interrupted.number])
    study.ask()  # another worker's trial, still running
    assert interrupted_numbers(study) == {interrupted.number}
    assert budget_used(study) == 3
    assert budget_used(study, in_flight=True) == 4


def test_a_trial_past_the_budget_is_surplus_and_does_not_count():
    study = optuna.create_study()
    first, second = study.ask(), study.ask()  # two workers, both running
    third = study.ask()  # a third started by a worker that saw the budget free
    assert claim_slot(study, first.number, 2) and claim_slot(study, second.number, 2)
    assert not claim_slot(study, third.number, 2)
    study.tell(third, state=TrialState.PRUNED)
    for trial in (first, second):
        study.tell(trial, 1.0)
    assert budget_used(study) == 2 and uncounted_numbers(study) == {third.number}
    # a slot freed by an interrupted trial goes to the next trial
    record_interrupted(study, study.trials[first.number])
    assert claim_slot(study, study.ask().number, 2)


def test_every_trial_failing_is_explained_as_such(tmp_path, monkeypatch, capsys):
    def broken(name, *args, **kwargs):
        raise RuntimeError(f"{name} cannot fit")

    monkeypatch.setattr(synthesizers_module, "build", broken)
    path = write_config(tmp_path, n_trials=2, synthesizers=("cart",))
    assert main(["run", str(path), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert ("2 x SynthesisFailed: cart could not be fitted or sampled with these parameters: "
            "RuntimeError: cart cannot fit") in err
    assert "no trial completed" in err
    assert "min_samples_leaf" not in err  # tuning advice is beside the point here


def test_release_scores_dcr_in_full_and_refuses_a_trial_that_fails_then(tmp_path, monkeypatch):
    # a trial estimates DCR on a sample (here 40 records); the release scores every record. The
    # stand-in below makes chosen trials' data fail DCR only when scored in full: such a trial
    # is refused for good, its release withdrawn, and the next best feasible trial released;
    # data that are not the trial's, or limits changed since, stop the export and refuse nothing
    import dataclasses

    from tuner.measures import _gate as gate
    from tuner.scoring._evaluation import Evaluation

    def unprotected(path: Path) -> Path:  # the seeded outcome is of the data as they are
        path.write_text(path.read_text().replace("train_fraction = 0.5",
                                                 "train_fraction = 0.5\nprotect_k = 0"))
        return path

    # public seeds: the split on which two trials are feasible and one fails DCR in full (value
    # protection off)
    cfg = config.load(unprotected(write_config(tmp_path, n_trials=4, synthesizers=("cart",),
                                               public_seed=True)))
    monkeypatch.setattr(gate, "DCR_SAMPLE", 40)
    calls = []
    real_dcr = risk.distance_to_closest_record
    failing = set()

    def dcr(train, synthetic, **kw):
        result = real_dcr(train, synthetic, **kw)
        calls.append((kw["max_synthetic"], result.n_evaluated))
        if kw["max_synthetic"] is None and kw["random_state"] in failing:  # the trial's seed
            result = dataclasses.replace(result, excess=cfg.risk.dcr_limit + 0.01)
        return result

    monkeypatch.setattr(risk, "distance_to_closest_record", dcr)
    ctx, study = _run(cfg)
    export(ctx, study)
    assert {m for m, _ in calls} == {40, None}  # trials sampled, the release did not
    assert all(n == 40 for m, n in calls if m == 40)
    assert [n for m, n in calls if m is None][-1] > 40  # every synthetic record (thousands)
    release = cfg.study.output / "release"
    first = json.loads((release / "manifest.json").read_text())["trial"]
    feasible = [t for t in study.trials if is_feasible(t)]
    assert len(feasible) >= 2  # seeded: 4 CART trials on Fair, all feasible

    # limits changed since the study ran: the same data fail 'copies' (computed by a trial as
    # by the release) or, scored in full, pass DCR under the limit the trial ran with but not a
    # stricter one; the export stops and refuses nothing
    for stricter, name in (("copy_limit = 0.0", "'copies'"), ("dcr_limit = 0.0", "'dcr'")):
        changed = config.load(unprotected(write_config(tmp_path, n_trials=4,
                                                       synthesizers=("cart",),
                                                       extra_risk=stricter)))
        with pytest.raises(NoFeasibleTrial, match=f"{name}.*were they changed since"):
            export(prepare(changed), study)
    # the re-created data are not the trial's (another fingerprint): the export stops, even
    # though they pass every constraint
    with monkeypatch.context() as m:
        m.setattr(Evaluation, "data_sha256", lambda self: "0" * 64)
        with pytest.raises(NoFeasibleTrial, match="does not reproduce here"):
            export(ctx, study)
    assert not rejected(study) and best_feasible(study).number == first

    # the released trial's very data fail DCR in full: refused, recorded before its release is
    # withdrawn; a folder that cannot be moved aside stops the export and says so
    failing.add(study.trials[first].user_attrs["seed"])
    real_rename = Path.rename
    with monkeypatch.context() as m:
        m.setattr(Path, "rename", lambda self, target: (_ for _ in ()).throw(
            PermissionError(13, "Permission denied")) if "withdrawn" in str(target)
            else real_rename(self, target))
        with pytest.raises(NoFeasibleTrial, match="could not be moved aside.*do not publish"):
            export(ctx, study)
    why = study.user_attrs[f"release_rejected:{first}"]
    assert "'dcr'" in why and "every synthetic record" in why and "data fingerprints" in why
    assert json.loads((release / "manifest.json").read_text())["trial"] == first
    # the next export withdraws it first, then releases the next best trial
    out = export(ctx, study)
    manifest = json.loads((out / "manifest.json").read_text())
    second = manifest["trial"]
    assert second != first and best_feasible(study).number == second
    assert (tmp_path / "out" / f"release.withdrawn-trial-{first}" / "manifest.json").exists()
    assert manifest["selection"]["refused"] == {str(first): why}
    assert f"Refused at release: trial {first}" in (out / "report.md").read_text()
    frame = trials_frame(study)
    assert frame.loc[frame["number"] == first, "refused"].item()
    assert frame["refused"].sum() == 1
    # every feasible trial refused: no release, and the message says why
    for t in feasible:
        study.set_user_attr(f"release_rejected:{t.number}", "stand-in")
    with pytest.raises(NoFeasibleTrial, match="No releasable trial.*failed when scored in full"):
        export(ctx, study)


def test_a_zombie_worker_counts_as_dead():
    # a killed worker not yet reaped still answers signal 0; its trial must not stay RUNNING
    import os
    import subprocess
    import time

    from tuner.search._budget import pid_alive

    child = subprocess.Popen(["sleep", "0"])
    deadline = time.time() + 10
    while time.time() < deadline and \
            "Z" not in open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[0]:
        time.sleep(0.05)
    assert not pid_alive(child.pid)  # a zombie: exited, not reaped
    child.wait()
    assert not pid_alive(child.pid) and pid_alive(os.getpid())
