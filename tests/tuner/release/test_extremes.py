"""Issue 45's first acceptance case, run as a study: Adult with one added person (an age above
every other, a category nobody else has, a capital gain ten times the largest) released by
CART and by the Gaussian copula carries neither that category nor any value beyond the k-th
largest training value of a column; with a codebook that declares them public the columns are
left alone, and the manifest says which."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.data import load_adult
from tests.tuner.conftest import NO_AUDIT
from tuner import config
from tuner.release._export import export
from tuner.search._context import prepare
from tuner.search._study import run_study

pytestmark = pytest.mark.slow

COLUMNS = ["age", "education", "occupation", "sex", "capital_gain", "income"]
K = 10


def _table(tmp_path) -> pd.DataFrame:
    adult = load_adult()[COLUMNS].iloc[:3000]
    person = adult.iloc[[0]].copy()
    person["age"] = adult["age"].max() + 20
    person["occupation"] = "Astronaut"
    person["capital_gain"] = adult["capital_gain"].max() * 10
    table = pd.concat([adult, person], ignore_index=True)
    table.to_csv(tmp_path / "adult_plus_one.csv", index=False)
    return table


def _study(tmp_path, family: str, codebook: dict | None = None):
    lines = ["[data]", 'path = "adult_plus_one.csv"', "population_size = 48842",
             f"protect_k = {K}", "audit_fraction = 0.1"]
    if codebook is not None:
        (tmp_path / "codebook.json").write_text(json.dumps(codebook))
        lines.append('codebook = "codebook.json"')
    lines += ["[study]", f'name = "{family}"', f'synthesizers = ["{family}"]', "n_trials = 2",
              "seed = 1", "public_seed = true", f'output = "{family}"',
              "[risk]", "repeats = 10", "[utility]", 'metric = "hellinger"']
    path = tmp_path / f"{family}.toml"
    path.write_text("\n".join(lines) + "\n" + NO_AUDIT)
    ctx = prepare(config.load(path))
    return ctx, export(ctx, run_study(ctx, progress=False))


@pytest.mark.parametrize("family", ["cart", "gaussian_copula"])
def test_the_added_persons_values_never_reach_the_release(tmp_path, family):
    table = _table(tmp_path)
    ctx, folder = _study(tmp_path, family)
    added = len(table) - 1
    assert added in set(ctx.split.train_positions)  # the person trained the models (seed 1)
    raw_train = table.iloc[ctx.split.train_positions]
    released = pd.read_csv(folder / "synthetic.csv")
    assert "Astronaut" not in set(released["occupation"].dropna())
    for column in ("age", "capital_gain"):
        kth = np.sort(raw_train[column].to_numpy())[-K]
        assert released[column].max() <= kth, column
        assert released[column].max() < table.loc[added, column]
    manifest = json.loads((folder / "manifest.json").read_text())
    protected = manifest["protection"]["columns"]
    assert {"age", "capital_gain", "occupation"} <= set(protected)
    assert "Astronaut" not in json.dumps(manifest)  # counts only, never a value
    assert "Value protection before any fit" in (folder / "report.md").read_text()


def test_a_codebook_that_declares_them_public_leaves_them_to_the_model(tmp_path):
    table = _table(tmp_path)
    occupations = sorted(table["occupation"].dropna().unique())
    ctx, folder = _study(tmp_path, "cart", codebook={
        "age": {"min": 0, "max": 200}, "capital_gain": {"min": 0, "max": 1_000_000},
        "occupation": {"categories": occupations, "missing": True}})
    assert ctx.split.train["capital_gain"].max() == table["capital_gain"].max()
    assert "Astronaut" in set(ctx.split.train["occupation"])  # the model saw it
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["protection"]["public_by_codebook"] == ["age", "capital_gain", "occupation"]
    assert not {"age", "capital_gain", "occupation"} & set(manifest["protection"]["columns"])
    assert manifest["domain"]["codebook"]["columns"] == {
        "age": "range", "capital_gain": "range", "occupation": "categories"}
