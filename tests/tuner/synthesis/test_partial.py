"""Partial synthesis (issue 15, design §11): conditional sampling of every family, the config,
identification risk as a constraint, and the gate in partial mode."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import risk
from tests.data import load_acs, unavailable
from tests.tuner.conftest import write_config
from tuner import config, measures
from tuner.data import TABLE, metadata_for
from tuner.measures._identification import PartialInputs
from tuner.scoring._evaluation import evaluate
from tuner.search._context import prepare
from tuner.synthesis._cart import CARTSynthesizer
from tuner.synthesis._families import SYNTHESIZERS
from tuner.synthesis._partial import (
    PartialSynthesisError,
    conditioning_problem,
    reject_sample,
    synthesize_partial,
)


@pytest.fixture(scope="module")
def table():
    """Two kept categories (k, g), two synthesised columns that depend on them (s, t)."""
    rng = np.random.default_rng(0)
    n = 400
    k = rng.choice(["a", "b"], n)
    g = rng.integers(1, 4, n)
    s = np.where(rng.random(n) < 0.85, (k == "a").astype(int), (k != "a").astype(int))
    t = np.where(rng.random(n) < 0.8, g % 2, 1 - g % 2)
    return pd.DataFrame({"k": k, "g": g, "s": s, "t": t})


# -- conditional sampling, family by family -----------------------------------------------

def test_cart_draws_given_the_kept_columns(table):
    synth = CARTSynthesizer(metadata_for(table), min_samples_leaf=5, keep=["k", "g"])
    synth.fit({TABLE: table})
    synth._set_random_state(1)
    out = synth.sample_remaining_columns(table[["k", "g"]])[TABLE]
    pd.testing.assert_frame_equal(out[["k", "g"]], table[["k", "g"]])
    # s follows k (85 %) and t follows g's parity (80 %): drawn given the row's own values
    assert ((out["s"] == 1) == (out["k"] == "a")).mean() > 0.75
    assert (out["t"] == out["g"] % 2).mean() > 0.7
    with pytest.raises(ValueError, match="exactly the kept columns"):
        synth.sample_remaining_columns(table[["k"]])
    with pytest.raises(ValueError, match="`keep` must name some, not all"):
        CARTSynthesizer(metadata_for(table), keep=["k", "nope"])


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in ("aim", "mst") else n
                                  for n in sorted(SYNTHESIZERS)])  # AIM ~10-25 s, MST ~7 s
def test_every_family_draws_partially_synthetic_sets(table, name):
    spec = SYNTHESIZERS[name]
    if spec.missing():
        unavailable(spec.missing())
    params = {p: (d.choices[0] if hasattr(d, "choices") else d.low)
              for p, d in spec.space.items()}
    if spec.has_epochs:
        params |= {"epochs": 3, "batch_size": 100}
    if name in ("mst", "aim"):
        params |= {"epsilon": 10.0, "iters": 50}  # Private-PGM's estimation: a few steps
    if name == "aim":
        params["rounds"] = 8  # 2 a column, not 16: fewer estimations, each compiled anew
    train, holdout = table.iloc[:300].reset_index(drop=True), table.iloc[300:].reset_index(
        drop=True)
    part = synthesize_partial(name, params, train, synthesize=["s", "t"], seed=3, sets=2,
                              holdout=holdout)
    assert len(part.sets) == 2
    for one in part.sets:
        pd.testing.assert_frame_equal(one[["k", "g"]], train[["k", "g"]])
        assert set(one["s"]) <= {0, 1} and set(one["t"]) <= {0, 1}
        assert list(one.columns) == list(train.columns)
    pd.testing.assert_frame_equal(part.holdout[["k", "g"]], holdout[["k", "g"]])
    assert (part.draws == 0) == (spec.conditioning == "native")
    if spec.private:  # a second fit, 5-20 s: "set 1 whatever m" is the rejection path the neural
        return  # families check here, and MST's and AIM's seeding is tested in test_dp
    again = synthesize_partial(name, params, train, synthesize=["s", "t"], seed=3, sets=1)
    pd.testing.assert_frame_equal(again.sets[0], part.sets[0])  # set 1 whatever m


class _Joint:
    """A fitted model stand-in whose joint distribution is known: k uniform on 3 values,
    s = k with probability 0.7, else uniform on the other two."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def sample(self, n: int) -> dict[str, pd.DataFrame]:
        self.calls += 1
        k = self.rng.integers(0, 3, n)
        other = (k + self.rng.integers(1, 3, n)) % 3
        s = np.where(self.rng.random(n) < 0.7, k, other)
        return {TABLE: pd.DataFrame({"k": k, "s": s})}


def test_rejection_draws_from_the_conditional_distribution():
    known = pd.DataFrame({"k": np.repeat([0, 1, 2], [3000, 200, 1])})
    out, drawn = reject_sample(_Joint(0), known)
    pd.testing.assert_series_equal(out["k"], known["k"])
    assert drawn >= len(known)
    # P(s = k | k) = 0.7 in every group, the one-record group included over many rows
    agree = (out["s"] == out["k"]).groupby(out["k"]).mean()
    assert agree[0] == pytest.approx(0.7, abs=0.03)
    assert agree[1] == pytest.approx(0.7, abs=0.1)


def test_rejection_that_cannot_find_a_combination_says_so():
    known = pd.DataFrame({"k": [0, 1, 7, 7]})  # 7 never drawn
    with pytest.raises(PartialSynthesisError, match="2 of 4 records.*1 distinct"):
        reject_sample(_Joint(0), known, draws_per_row=5)


def test_continuous_kept_column_is_refused_for_rejection_families(table):
    frame = table.assign(x=np.linspace(0, 1, len(table)))
    assert conditioning_problem("cart", frame, ["s"]) is None
    assert conditioning_problem("gaussian_copula", frame, ["s"]) is None
    problem = conditioning_problem("ctgan", frame, ["s"])
    assert "['x']" in problem and "rejection" in problem
    assert conditioning_problem("ctgan", frame, ["s", "x"]) is None


# -- the configuration ---------------------------------------------------------------------

def test_config_collects_every_partial_problem(tmp_path):
    path = write_config(tmp_path, extra_risk='identification_keys = ["religious"]\n'
                        'emr_limit = 3.0')
    text = path.read_text().replace('output = "out"', 'output = "out"\nsynthesize = []\n'
                                    'synthetic_sets = 0\nsample_size = 10')
    path.write_text(text)
    with pytest.raises(config.ConfigError) as err:
        config.load(path)
    msg = str(err.value)
    assert "study.synthesize is empty" in msg
    assert "study.synthetic_sets must be >= 1, got 0" in msg
    assert "study.sample_size = 10 cannot be used with study.synthesize" in msg
    assert "risk.emr_limit must be in [0, 1] (a share of the targets" in msg


def test_identification_needs_partial_synthesis(tmp_path):
    path = write_config(tmp_path, extra_risk='identification_keys = ["religious"]')
    path.write_text(path.read_text().replace('output = "out"',
                                             'output = "out"\nsynthetic_sets = 3'))
    with pytest.raises(config.ConfigError) as err:
        config.load(path)
    assert "risk.identification_keys applies to partially synthetic data" in str(err.value)
    assert "study.synthetic_sets = 3 needs study.synthesize" in str(err.value)


def _partial(tmp_path, synthesize, extra_risk="", *, targets=True, **kw):
    path = write_config(tmp_path, extra_risk=extra_risk, **kw)
    text = path.read_text().replace(
        'output = "out"', f'output = "out"\nsynthesize = {list(synthesize)!r}'.replace("'", '"'))
    if not targets:
        text = text.replace('targets = ["affairs"]', "targets = []")
    path.write_text(text)
    return config.load(path)


def test_partial_config_against_the_data(tmp_path):
    # affairs is continuous: exact matching would find no one, so a radius is required;
    # ctgan conditions by rejection, which Fair's kept columns (all few-valued) allow
    cfg = _partial(tmp_path, ["affairs", "religious"], synthesizers=("cart", "ctgan"))
    assert cfg.risk.synthesized == ("affairs", "religious")
    with pytest.raises(config.ConfigError, match="identification_radius is unset.*affairs"):
        prepare(cfg)
    # with affairs kept, a family that conditions by rejection cannot condition on it
    cfg = _partial(tmp_path, ["religious"], synthesizers=("cart", "ctgan"), targets=False)
    with pytest.raises(config.ConfigError, match="'ctgan' can condition only by rejection.*"
                                                 "affairs"):
        prepare(cfg)
    cfg = _partial(tmp_path, ["nope"], targets=False)
    with pytest.raises(config.ConfigError, match=r"study.synthesize names column\(s\) \['nope'\]"):
        prepare(cfg)


def test_known_synthesised_and_kept_targets_are_config_errors(tmp_path):
    with pytest.raises(config.ConfigError) as err:
        _partial(tmp_path, ["affairs", "religious"], 'identification_keys = ["religious"]')
    msg = str(err.value)
    assert "identification_keys names synthesised column(s) ['religious']" in msg
    assert "risk.cap_targets" not in msg  # affairs, the target, is synthesised
    with pytest.raises(config.ConfigError, match=r"risk.cap_targets names kept column\(s\) "
                                                 r"\['affairs'\]"):
        _partial(tmp_path, ["religious"])


# -- a trial in partial mode ---------------------------------------------------------------

@pytest.fixture
def fair_partial(tmp_path):
    def make(extra_risk="identification_radius = 0.5", sets=1):
        cfg = _partial(tmp_path, ["affairs", "religious"], extra_risk)
        return dataclasses.replace(cfg, study=dataclasses.replace(cfg.study,
                                                                  synthetic_sets=sets))
    return make


CART = {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original", "smoothing": False}


def test_partial_trial_keeps_rows_and_constrains_identification(fair_partial):
    cfg = fair_partial()
    ctx = prepare(cfg)
    ev = evaluate(cfg, ctx.split, "cart", CART, seed=4)
    kept = [c for c in ctx.split.train.columns if c not in ("affairs", "religious")]
    pd.testing.assert_frame_equal(ev.synthetic[kept], ctx.split.train[kept])
    assert {"emr", "tmr", "copies", "near_copies", "m"} <= set(ev.constraints)
    assert "dcr" not in ev.constraints and "fmr" not in ev.constraints  # fmr_floor unset
    metrics = ev.metrics()
    ident = risk.identification_risk(
        ctx.split.train, ev.synthetic, keys=kept, synthesized=["affairs", "religious"],
        radius={"affairs": 0.5}, missing="category")
    assert metrics["emr"] == pytest.approx(ident.expected_match_risk)
    assert metrics["tmr"] == pytest.approx(ident.true_match_rate)
    assert metrics["emr_share"] == pytest.approx(ident.expected_match_risk / len(ev.synthetic))
    assert metrics["replicated_uniques_removed"] == 0
    assert ev.constraints["tmr"] == pytest.approx(ident.true_match_rate - 0.005)
    rows = [r for name, o in ev.outcomes.items() if measures.MEASURES[name].report
            for label, res in o.results.items()
            for r in measures.MEASURES[name].report(label, res, cfg.risk)]
    meaning = " ".join(r.meaning for r in rows)
    assert "Being in the release is being in the training data" in meaning
    assert "not removed" in meaning


def test_a_trial_above_the_limit_is_infeasible(fair_partial):
    loose = fair_partial("identification_radius = 0.5\nemr_limit = 1.0\ntmr_limit = 1.0")
    ctx = prepare(loose)
    ev = evaluate(loose, ctx.split, "cart", CART, seed=4)
    assert ev.constraints["emr"] <= 0 and ev.constraints["tmr"] <= 0
    share = ev.metrics()["emr_share"]
    tight = fair_partial(f"identification_radius = 0.5\nemr_limit = {share / 2}")
    ev = evaluate(tight, ctx.split, "cart", CART, seed=4)
    assert ev.constraints["emr"] == pytest.approx(share / 2) and not ev.feasible


def test_m_sets_are_scored_together(fair_partial):
    one = fair_partial(sets=1)
    three = fair_partial(sets=3)
    ctx = prepare(one)
    ev1 = evaluate(one, ctx.split, "cart", CART, seed=4)
    ev3 = evaluate(three, ctx.split, "cart", CART, seed=4)
    assert len(ev3.sets) == 3
    pd.testing.assert_frame_equal(ev3.sets[0], ev1.synthetic)
    ident = ev3.results("identification")[""].release
    assert ident.n_sets == 3
    assert ev3.metrics()["emr"] == pytest.approx(np.mean([s.expected_match_risk
                                                          for s in ident.per_set]))


# -- the gate in partial mode --------------------------------------------------------------

def _population(n: int, seed: int) -> pd.DataFrame:
    """Known variables with many rare combinations, and s drawn given them."""
    rng = np.random.default_rng(seed)
    k1, k2 = rng.integers(0, 40, n), rng.integers(0, 30, n)
    s = np.where(rng.random(n) < 0.6, (k1 + k2) % 3, rng.integers(0, 3, n))
    return pd.DataFrame({"k1": k1, "k2": k2, "s": s})


def _draw_s(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The population's own conditional distribution: knows nothing of any record."""
    n = len(frame)
    s = np.where(rng.random(n) < 0.6, (frame["k1"] + frame["k2"]) % 3, rng.integers(0, 3, n))
    return frame.assign(s=s)


def _gate(train, holdout, released, counterpart):
    opts = config.RiskConfig({"identification_keys": ["k1", "k2"]}, synthesized=("s",))
    inp = PartialInputs(train=train, holdout=holdout, synthetic=released, options=opts,
                        population_size=10**6, keys=None, seed=0, sets=(released,),
                        holdout_synthetic=counterpart)
    return measures.MEASURES["partial_copies"].compute(inp).results[""]


def test_own_record_copies_are_zero_for_a_model_that_saw_nothing_and_catch_copying():
    pop = _population(6000, 1)
    train, holdout = pop.iloc[:3000].reset_index(drop=True), pop.iloc[3000:].reset_index(
        drop=True)
    rng = np.random.default_rng(2)
    released, counterpart = _draw_s(train, rng), _draw_s(holdout, rng)
    fair = _gate(train, holdout, released, counterpart)
    assert abs(fair.difference) < 0.03
    # the usual comparison (any record) would accuse this model: its rows carry real keys
    usual = risk.exact_copies(train, released, holdout=holdout)
    assert usual.difference > 0.08  # 0.111 here, against an own-record difference of about 0
    assert fair.any_train_share - fair.any_holdout_share < usual.difference
    # a model that copies half its training records' s
    copied = released.assign(s=np.where(np.arange(3000) % 2 == 0, train["s"], released["s"]))
    leaky = _gate(train, holdout, copied, counterpart)
    assert leaky.difference > 0.15


# -- Hu's published numbers through the tuner's measure ------------------------------------

def test_hu_acs_identification_through_the_measure():
    # J. Hu, "Methods for Risk Evaluation #1 and #2": 41.37 / 0.0005 / 0.97 (m = 1) and
    # 41.47 / 0.0006 / 0.96 (m = 3); the same numbers must come out of the tuner's measure
    org, syn = load_acs()
    synth = ("LANX", "WAOB", "DIS", "HICOV")
    opts = config.RiskConfig({"identification_keys": ["SEX", "RACE", "MAR"]},
                             synthesized=synth)
    empty = org.iloc[:0]
    for sets, emr, tmr, fmr in (((syn[0],), 41.37, 0.0005, 0.97),
                                (tuple(syn), 41.47, 0.0006, 0.96)):
        inp = PartialInputs(train=org, holdout=empty, synthetic=pd.concat(sets), options=opts,
                            population_size=10**6, keys=None, seed=0, sets=sets)
        out = measures.MEASURES["identification"].compute(inp)
        metrics = measures.MEASURES["identification"].flat_metrics(out)
        assert metrics["emr"] == pytest.approx(emr, abs=0.005)
        assert metrics["tmr"] == pytest.approx(tmr, abs=0.00005)
        assert metrics["fmr"] == pytest.approx(fmr, abs=0.005)
        assert metrics["emr_unsynthesised"] == pytest.approx(447.0)  # released as collected


# -- the command line, as a user runs it ---------------------------------------------------

@pytest.mark.slow
def test_run_releases_kept_columns_as_collected_with_identification_risk(tmp_path, capsys):
    import json

    from mlflow.tracking import MlflowClient

    from tuner.cli import main
    from tuner.data import read_builtin

    synth = ["affairs", "religious"]
    # limits loose enough for a release of this tiny table (two of nine columns synthesised,
    # Fair's few-valued columns: CART's draws often are the records' own values)
    cfg = _partial(tmp_path, synth, "identification_radius = 0.5\ncopy_limit = 0.5\n"
                   "near_copy_limit = 0.5\nemr_limit = 0.5\ntmr_limit = 0.5",
                   synthesizers=("cart",), n_trials=2)
    path = tmp_path / "study.toml"
    path.write_text(path.read_text().replace("[study]", "[study]\nsynthetic_sets = 2"))
    assert main(["run", str(path), "--no-progress"]) == 0
    out = cfg.study.output
    manifest = json.loads((out / "release" / "manifest.json").read_text())
    rows = json.loads((out / "split.json").read_text())["train_rows"]
    training = read_builtin("builtin:fair").iloc[rows].reset_index(drop=True)
    kept = manifest["partial"]["kept"]
    assert kept == [c for c in training.columns if c not in synth]
    for name in ("synthetic.csv", "synthetic_2.csv"):
        released = pd.read_csv(out / "release" / name)
        pd.testing.assert_frame_equal(released[kept], training[kept], check_dtype=False)
    assert {"emr", "emr_share", "tmr", "fmr"} <= set(manifest["metrics"])
    assert {"emr", "tmr"} <= set(manifest["constraints"])
    assert manifest["partial"]["identification"]["release_n_sets"] == 2
    report = (out / "release" / "report.md").read_text()
    assert "identification: expected match risk" in report
    client = MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}")
    exp = client.get_experiment_by_name(cfg.study.name)
    released = [r for r in client.search_runs([exp.experiment_id])
                if r.data.tags.get("released") == "true"]
    assert released[0].data.metrics["tmr"] == pytest.approx(manifest["metrics"]["tmr"])
    # the audit in partial mode (design §13): no membership game (membership is disclosed by
    # design), the partial gate on the sealed audit set, and identification risk of the
    # training records beside that of the audit records put through the same model
    audit = manifest["audit"]
    assert not audit["membership"]["ran"] and "by design" in audit["membership"]["why"]
    check = audit["audit_set"]
    assert audit["verdict"] == "passed" and check["available"]
    # every holdout-based constraint again, the own-record copies with the audit records'
    # counterparts; identification reads no holdout: it is shown below, members and not
    assert {r["constraint"] for r in check["rows"]} == {"m", "copies", "near_copies",
                                                        "cap.affairs", "inference.affairs"}
    ident = check["identification"]
    n_audit = len(json.loads((out / "split.json").read_text())["audit_rows"])
    assert ident["members"]["records"] == len(training) == manifest["split"]["n_train"]
    assert ident["non_members"]["records"] == n_audit
    for who in ("members", "non_members"):
        assert 0.0 <= ident[who]["emr_share"] <= 1.0 and 0.0 <= ident[who]["tmr"] <= 1.0
    assert ident["members"]["emr_share"] == pytest.approx(manifest["metrics"]["emr_share"])
    assert "Identification risk on the sealed audit set" in report
    assert "identification risk: an intruder matches" in audit["summary"]


def test_a_radius_without_a_continuous_synthesised_column_is_refused(tmp_path):
    cfg = _partial(tmp_path, ["religious"], "identification_radius = 0.5", targets=False)
    with pytest.raises(config.ConfigError, match="identification_radius = 0.5 is set, but no "
                                                 "synthesised column is continuous"):
        prepare(cfg)
