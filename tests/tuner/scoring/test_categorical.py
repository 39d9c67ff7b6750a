"""The measures' categorical copies (tuner.scoring._categorical) change no number and lose no
value."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.data import _or_skip, require
from tuner import config, measures
from tuner.measures._gate import remove_replicated_uniques, removed_by_gate
from tuner.scoring import _categorical as categorical
from tuner.scoring._evaluation import score
from tuner.search._context import prepare
from tuner.synthesis._synthesizers import synthesize


def _cfg(frame: pd.DataFrame, keys: list[str], target: str):
    return config.parse({
        "data": {"path": "data.csv", "population_size": 10 * len(frame)},
        "study": {"output": "/tmp/categorical-test", "seed": 4},
        "risk": {"repeats": 20, "attribute_keys": keys, "cap_targets": [target],
                 "inference_targets": [target]},
        "utility": {"metric": "hellinger"},
    }, base=Path.cwd())


def _all_metrics(cfg, inputs) -> dict[str, float]:
    out: dict[str, float] = {}
    for spec in measures.enabled(cfg.risk):
        out |= spec.flat_metrics(spec.compute(inputs))
    return out


def _same_numbers(frame: pd.DataFrame, synthetic: pd.DataFrame, keys: list[str],
                  target: str) -> None:
    cfg = _cfg(frame, keys, target)
    split = prepare(cfg, frame).split
    kept, removed = remove_replicated_uniques(split.train, synthetic, cfg.risk.replicated_uniques)
    kw = dict(options=cfg.risk, population_size=cfg.data.population_size,
              keys=None, seed=1, removed_rows=removed, study_seed=4)
    raw = measures.Inputs(train=split.train, holdout=split.holdout, synthetic=kept,
                          sampled=synthetic, **kw)
    train, holdout, c_kept, c_sampled = categorical.coded(split, kept, synthetic)
    np.testing.assert_array_equal(  # the gate finds the same records on the copies
        removed_by_gate(train, c_sampled, "remove"),
        removed_by_gate(split.train, synthetic, "remove"))
    assert any(isinstance(train[c].dtype, pd.CategoricalDtype) for c in train.columns)
    coded = measures.Inputs(train=train, holdout=holdout, synthetic=c_kept, sampled=c_sampled,
                            **kw)
    want, got = _all_metrics(cfg, raw), _all_metrics(cfg, coded)
    assert want.keys() == got.keys() and len(want) > 20
    for key, value in want.items():
        if math.isnan(value):
            assert math.isnan(got[key]), key
        else:  # equal, up to the order of a floating-point sum
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    # the frames as the measures got them hold the same values
    for before, after in [(split.train, train), (split.holdout, holdout), (kept, c_kept)]:
        pd.testing.assert_frame_equal(before.astype(object), after.astype(object))


def test_adult_cart_trial_gives_the_same_numbers():
    from experiments import datasets

    adult = _or_skip(datasets.read_adult).sample(6000, random_state=0).reset_index(drop=True)
    keys = ["age", "sex", "race", "marital_status", "education", "native_country"]
    cfg = _cfg(adult, keys, "income")
    split = prepare(cfg, adult).split
    syn = synthesize("cart", {"min_samples_leaf": 5, "max_depth": 0, "visit_order": "original",
                              "smoothing": False}, split.train, seed=1).synthetic
    syn.loc[:30, "native_country"] = "Atlantis"  # a value the real data never had
    _same_numbers(adult, syn, keys, "income")


def test_sd2011_with_missing_values_and_a_mixed_column():
    sd = pd.read_csv(require("sd2011/sd2011_orig.csv")).dropna(subset=["income"])
    rng = np.random.default_rng(0)
    synthetic = sd.apply(lambda c: c.sample(frac=1, random_state=int(rng.integers(1e6)))
                         .reset_index(drop=True)).iloc[:2500].copy()
    synthetic.loc[:40, "edu"] = "NEVER SEEN"
    synthetic["workab"] = synthetic["workab"].astype(object)
    synthetic.loc[50:60, "workab"] = 7  # not all text here: the column keeps its dtype
    _same_numbers(sd.reset_index(drop=True), synthetic,
                  ["sex", "age", "region", "edu", "marital"], "socprof")


def test_values_and_the_cached_split_survive_every_trial(tmp_path):
    frame = pd.DataFrame({"c": list("abcab") * 40, "x": np.arange(200) % 7,
                          "m": ["p", "q"] * 100})
    cfg = _cfg(frame, ["c"], "m")
    split = prepare(cfg, frame).split
    new = split.train.head(50).copy()
    new.loc[:5, "c"] = "zzz"
    train, holdout, syn = categorical.coded(split, new)
    assert syn["c"].astype(object).tolist() == new["c"].tolist()  # no value lost to NaN
    assert "zzz" in set(train["c"].cat.categories) and train["c"].isna().sum() == 0
    mixed = split.train.head(50).copy()
    mixed["m"] = mixed["m"].astype(object)
    mixed.loc[0, "m"] = 3
    train2, _, syn2 = categorical.coded(split, mixed)
    assert train2["m"].dtype == object and syn2["m"].dtype == object
    train3, _, _ = categorical.coded(split, split.train.head(10))  # the cache is intact
    assert isinstance(train3["m"].dtype, pd.CategoricalDtype)
    assert "zzz" not in set(train3["c"].cat.categories)
    assert split.train["c"].dtype == object  # the split itself is never changed


def test_a_scored_trial_releases_the_data_as_made():
    frame = pd.DataFrame({"c": list("abcab") * 40, "x": np.arange(200) % 7,
                          "m": ["p", "q"] * 100})
    cfg = _cfg(frame, ["c", "x"], "m")
    split = prepare(cfg, frame).split
    synthetic = split.holdout.reset_index(drop=True)
    scored = score(cfg, split, synthetic, seed=1)
    kept, removed = remove_replicated_uniques(split.train, synthetic,
                                              cfg.risk.replicated_uniques)
    assert removed > 0  # the gate's copy, not the measures' categorical one, is released
    assert scored.synthetic["c"].dtype == object
    pd.testing.assert_frame_equal(scored.synthetic, kept)
