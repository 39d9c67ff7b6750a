"""The release gate (design §9.1): a synthesiser that returns its training data verbatim is
never released, on the demo (5,000 people of Adult), Fair's survey, Adult, ACS and a 1,500-row
table; copies of train-unique records never reach a release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import risk
import tuner.scoring._evaluation as evaluation_module
from tests.data import _or_skip
from tests.tuner.conftest import write_config
from tuner import config
from tuner.cli import main
from tuner.data import read_builtin
from tuner.scoring._evaluation import UnusableSynthesis, score
from tuner.search._context import prepare
from tuner.synthesis._synthesizers import Synthesis


def _config(tmp_path, frame: pd.DataFrame, *, population: int, keys, target, extra_risk=""):
    frame.to_csv(tmp_path / "data.csv", index=False)
    path = tmp_path / "study.toml"
    path.write_text(
        f'[data]\npath = "data.csv"\npopulation_size = {population}\n'
        # public seeds: the split these checks were written for (a secret draws another)
        '[study]\noutput = "out"\npublic_seed = true\n'
        f'[risk]\nrepeats = 20\nattribute_keys = {list(keys)!r}\n'
        f'cap_targets = ["{target}"]\ninference_targets = ["{target}"]\n{extra_risk}\n'
        '[utility]\nmetric = "hellinger"\n'.replace("'", '"'))
    return config.load(path)


def _datasets(name: str):
    """A table, its population N, CAP keys and target: the demo's embedded Adult sample and
    Fair's survey need nothing; the others read ../shared/data (skipped without it)."""
    from experiments import datasets
    from tuner.api import load_config

    demo = load_config(None)  # the demo's own table, population, keys and target
    adult_keys = ["age", "sex", "race", "marital_status"]
    tables = {
        "demo": lambda: (read_builtin(str(demo.data.path)), demo.data.population_size,
                         list(demo.risk.attribute_keys), demo.risk.cap_targets[0]),
        "Fair": lambda: (read_builtin("builtin:fair"), 100_000,
                         ["age", "yrs_married", "children", "religious"], "affairs"),
        "Adult": lambda: (_or_skip(datasets.read_adult).iloc[:32_561], 48_842, adult_keys,
                          "income"),
        "ACS": lambda: (_or_skip(datasets.read_acs_sample), 10_000_000, ["SEX", "RACE", "MAR"],
                        "DIS"),
        "1,500-row Adult": lambda: (_or_skip(datasets.read_adult).sample(1500, random_state=0),
                                    48_842, adult_keys, "income"),
    }
    return tables[name]()


@pytest.mark.parametrize("name", ["demo", "Fair", "Adult", "ACS", "1,500-row Adult"])
def test_a_copy_of_the_training_data_is_infeasible(tmp_path, name):
    frame, population, keys, target = _datasets(name)
    cfg = _config(tmp_path, frame, population=population, keys=keys, target=target)
    ctx = prepare(cfg)
    copy = ctx.split.train.copy()
    try:
        scored = score(cfg, ctx.split, copy, seed=1)
    except UnusableSynthesis as exc:  # every record copied a train-unique one: all removed
        assert "removed them all" in str(exc)
        return
    failed = {k: v for k, v in scored.constraints.items() if v > 0}
    assert failed, scored.constraints
    # the exact-copy gate sees what M alone may not (on ACS M is negative for a copy)
    assert "copies" in failed, failed
    assert scored.outcomes["copies"].extra["replicated_uniques_removed"] > 0


def test_infeasible_policy_keeps_the_data_and_fails_the_trial(tmp_path):
    frame, population, keys, target = _datasets("Fair")
    cfg = _config(tmp_path, frame, population=population, keys=keys, target=target,
                  extra_risk='replicated_uniques = "infeasible"')
    ctx = prepare(cfg)
    scored = score(cfg, ctx.split, ctx.split.train.copy(), seed=1)
    assert len(scored.synthetic) == len(ctx.split.train)  # nothing removed
    n_unique = risk.exact_copies(ctx.split.train, ctx.split.train).train_unique_copies
    assert scored.constraints["unique_copies"] == pytest.approx(n_unique) and n_unique > 0
    assert scored.outcomes["copies"].extra["replicated_uniques_removed"] == 0


def test_removal_leaves_no_copy_of_a_train_unique_record(tmp_path):
    frame, population, keys, target = _datasets("Fair")
    cfg = _config(tmp_path, frame, population=population, keys=keys, target=target)
    ctx = prepare(cfg)
    rng = np.random.default_rng(0)
    # half copies of training records, half other real records
    mixed = pd.concat([ctx.split.train.sample(800, random_state=1),
                       ctx.split.holdout.sample(800, random_state=2)], ignore_index=True)
    before = risk.exact_copies(ctx.split.train, mixed).train_unique_copies
    scored = score(cfg, ctx.split, mixed.iloc[rng.permutation(len(mixed))], seed=1)
    after = risk.exact_copies(ctx.split.train, scored.synthetic)
    assert before > 0 and after.train_unique_copies == 0
    assert len(scored.synthetic) == len(mixed) - before
    assert scored.outcomes["copies"].extra["replicated_uniques_removed"] == before


def test_too_few_records_left_by_the_gate_fail_saying_why(tmp_path):
    frame, population, keys, target = _datasets("Fair")
    cfg = _config(tmp_path, frame, population=population, keys=keys, target=target)
    ctx = prepare(cfg)
    # copies of the records unique in the training data, and two other records: the gate
    # removes the copies, and 2 records are too few for the k-NN attack (k = 3)
    unique = ctx.split.train.drop_duplicates(keep=False)
    others = ctx.split.holdout.merge(ctx.split.train.drop_duplicates(), how="left",
                                     indicator=True).query("_merge == 'left_only'")
    mostly_copies = pd.concat([unique, others.drop(columns="_merge").iloc[:2]],
                              ignore_index=True)
    with pytest.raises(UnusableSynthesis, match=r"the gate removed \d+ of \d+ synthetic records"
                       r".*the \d+ left cannot be scored: `synthetic` has"):
        score(cfg, ctx.split, mostly_copies, seed=1)


@pytest.mark.slow
def test_a_copying_synthesiser_is_never_released(tmp_path, monkeypatch, capsys):
    def copy_synthesiser(name, params, train, **kwargs):
        return Synthesis(train.copy(), 0.0, 0.0)

    monkeypatch.setattr(evaluation_module, "synthesize", copy_synthesiser)
    adult = _datasets("1,500-row Adult")[0]
    adult.to_csv(tmp_path / "data.csv", index=False)
    path = write_config(tmp_path, n_trials=2, synthesizers=("cart",))
    text = path.read_text().replace('path = "builtin:fair"', 'path = "data.csv"')
    text = text.replace("population_size = 100000", "population_size = 48842")
    text = text.replace('attribute_keys = ["age", "yrs_married", "children", "religious"]',
                        'attribute_keys = ["age", "sex", "race"]').replace('"affairs"', '"income"')
    path.write_text(text)
    assert main(["run", str(path), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "NO RELEASE CANDIDATE" in err
    assert not (tmp_path / "out" / "release").exists()


@pytest.mark.parametrize("decision", ["estimate", "upper"])
def test_m_decision_upper_bounds_the_interval_s_upper_end_too(decision):
    # near copies in a small holdout: the estimate is below the threshold, the interval's
    # upper end above it; only "upper" makes that infeasible (issue 34)
    from tuner import measures

    rng = np.random.default_rng(0)
    train = pd.DataFrame({c: rng.integers(0, 8, 300) for c in "abcd"})
    holdout = pd.DataFrame({c: rng.integers(0, 8, 300) for c in "abcd"})
    synthetic = pd.concat([train[:40], holdout[:200]], ignore_index=True)
    result = risk.membership_disclosure(train, holdout, synthetic, population_size=20_000,
                                        random_state=0, curve=False)
    options = {k: o.default for k, o in measures.options().items()}
    options |= {"m_decision": decision, "m_threshold": (result.m + result.m_ci.high) / 2}
    assert result.m < options["m_threshold"] < result.m_ci.high
    spec = measures.MEASURES["membership"]
    limits = spec.constraints(measures.Outcome({"": result}), options)
    assert limits["m"] < 0
    if decision == "upper":
        assert limits["m_upper"] == pytest.approx(result.m_ci.high - options["m_threshold"])
        assert limits["m_upper"] > 0
    else:
        assert "m_upper" not in limits
