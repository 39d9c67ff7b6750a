"""Where M is blind, the tuner says so and the gate decides (experiments/membership_validation,
findings 3 and 5): the copy ceiling of M, and near copies (a numeric value nudged)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import risk
import tuner.measures._membership as membership_measure
from tests.data import _or_skip
from tuner import config
from tuner.scoring._evaluation import score
from tuner.search._context import prepare

SIX_KEYS = ["age", "workclass", "education", "marital_status", "race", "sex"]


def _adult(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample of ``n`` Adult records, and the people outside it (fresh records: what a
    generator that learned only the population would make)."""
    from experiments import datasets

    adult = _or_skip(datasets.read_adult)
    idx = np.random.default_rng(0).permutation(len(adult))
    return (adult.iloc[idx[:n]].reset_index(drop=True),
            adult.iloc[idx[n:]].reset_index(drop=True))


def _config(tmp_path, frame: pd.DataFrame, *, data: str = "", risk_keys: str = ""):
    frame.to_csv(tmp_path / "data.csv", index=False)
    path = tmp_path / "study.toml"
    path.write_text(
        f'[data]\npath = "data.csv"\npopulation_size = 48842\n{data}\n'
        '[study]\noutput = "out"\nseed = 3\n'
        f'[risk]\nrepeats = 20\n{risk_keys}\n[utility]\nmetric = "hellinger"\n')
    return config.load(path)


def _near_copy_mix(train: pd.DataFrame, outside: pd.DataFrame, share: float,
                   seed: int) -> pd.DataFrame:
    """People outside the sample with ``share`` of them replaced by training records whose
    census weight ``fnlwgt`` moved by 0.2-1 %: no exact copy of train."""
    rng = np.random.default_rng(seed)
    n = len(train)
    k = int(share * n)
    copied = train.sample(k, random_state=seed).reset_index(drop=True)
    factor = 1 + rng.choice([-1, 1], k) * rng.uniform(0.002, 0.01, k)
    copied["fnlwgt"] = (copied["fnlwgt"] * factor).round().astype(train["fnlwgt"].dtype)
    fresh = outside.sample(n - k, random_state=seed)
    return pd.concat([fresh, copied], ignore_index=True)


def test_near_copies_fail_the_gate_that_exact_checks_pass(tmp_path):
    sample, outside = _adult(6000)
    cfg = _config(tmp_path, sample)
    split = prepare(cfg).split
    leaky = _near_copy_mix(split.train, outside, 0.10, seed=1)
    exact = risk.exact_copies(split.train, leaky, holdout=split.holdout)
    assert exact.difference <= 0.01  # nudged: (almost) no exact copy of train
    scored = score(cfg, split, leaky, seed=1)
    c = scored.constraints
    assert c["copies"] <= 0, c  # the exact-copies gate passes it
    assert c["near_copies"] > 0, c  # the binned one does not
    near = scored.outcomes["near_copies"].results[""]
    assert "fnlwgt" in near.binned_columns
    # about the 10 % copied, compared at the holdout's size: the default split is train 0.5 /
    # holdout 0.3, so a copy of a record unique in train counts 0.3 / 0.5 (risk.copies)
    assert near.matched_size == len(split.holdout)
    assert 0.07 * 0.6 <= near.difference <= 0.11 * 0.6
    # the same data without the near copies pass it
    clean = score(cfg, split, _near_copy_mix(split.train, outside, 0.0, seed=1), seed=1)
    assert clean.constraints["near_copies"] <= 0
    assert abs(clean.outcomes["near_copies"].results[""].difference) < 0.01


@pytest.mark.parametrize(("data", "risk_keys", "blind"), [
    ("", "", False),  # every column, h = 0: a copy scores M near 0.8
    (f"keys = {SIX_KEYS!r}".replace("'", '"'), "", True),  # six keys
    ("", "hamming_threshold = 2", True),  # every column, h = 2
])
def test_m_says_it_cannot_bind_when_even_a_copy_passes(tmp_path, data, risk_keys, blind):
    sample, outside = _adult(4000)
    cfg = _config(tmp_path, sample, data=data, risk_keys=risk_keys)
    split = prepare(cfg).split
    fresh = outside.sample(len(split.train), random_state=0)
    outcome = score(cfg, split, fresh, seed=5).outcomes["membership"]
    result, ceiling = outcome.results[""], outcome.extra["m_copy_ceiling"]
    assert (ceiling <= 0.2) is blind
    assert result.can_bind is (not blind)
    if blind:
        assert "verbatim copy" in result.warning and f"{ceiling:.3f}" in result.warning
    else:
        assert ceiling > 0.5 and result.warning == ""
    # the ceiling is what M reports for the training data themselves
    direct = risk.membership_disclosure(
        split.train, split.holdout, split.train, population_size=48842,
        keys=cfg.data.keys and list(cfg.data.keys),
        hamming_threshold=cfg.risk.hamming_threshold, repeats=20, random_state=cfg.study.seed)
    assert ceiling == pytest.approx(direct.m)


def test_the_ceiling_is_computed_once_per_split_and_seed(tmp_path, monkeypatch):
    cfg = _config(tmp_path, _adult(1500)[0])
    split = prepare(cfg).split
    calls: list[int] = []
    real = risk.membership_disclosure

    def counting(*args, **kwargs):
        calls.append(len(args[2]))
        return real(*args, **kwargs)

    monkeypatch.setattr(membership_measure.risk, "membership_disclosure", counting)
    monkeypatch.setattr(membership_measure, "_CEILINGS", {})
    synthetic = split.holdout.reset_index(drop=True)
    for seed in (1, 2, 3):
        score(cfg, split, synthetic, seed=seed)
    assert len(calls) == 4  # three trials + one ceiling
    cfg2 = config.load(tmp_path / "study.toml")
    object.__setattr__(cfg2.study, "seed", 4)
    score(cfg2, split, synthetic, seed=1)
    assert len(calls) == 6  # another study seed: another ceiling
