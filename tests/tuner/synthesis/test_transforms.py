"""The neural families' data transforms fitted once per table (tuner/synthesis/_transforms.py):
a fit that restores them gives the records of the package's own fit, value for value, for any
seed; the fitted model holds a plain ``DataTransformer``; few tables are kept."""

from __future__ import annotations

import contextlib
import pickle

import pandas as pd
import pytest
from ctgan.data_transformer import DataTransformer

from tuner.synthesis import (
    _checkpoints,
    _synthesizers,
    _transforms,
    synthesize,
    synthesize_checkpoints,
)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return pd.read_csv("tuner/demo_data/adult_demo.csv.gz").head(300)


@pytest.fixture
def fits(monkeypatch) -> list[int]:
    """The transformer fits the package really ran (restored ones are not counted)."""
    _transforms.forget()
    done: list[int] = []
    original = DataTransformer.fit

    def counting(self, *args, **kwargs):
        done.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(DataTransformer, "fit", counting)
    yield done
    _transforms.forget()


def _without_memo(monkeypatch) -> None:
    monkeypatch.setattr(_synthesizers, "remembered", contextlib.nullcontext)


@pytest.mark.parametrize("name, params", [
    ("ctgan", {"batch_size": 100, "pac": 10, "epochs": 2}),
    ("tvae", {"batch_size": 100, "epochs": 2}),
    ("copulagan", {"batch_size": 100, "pac": 10, "epochs": 1}),
])
def test_a_fit_on_a_table_seen_before_gives_the_package_fits_records(table, fits, monkeypatch,
                                                                      name, params):
    first = synthesize(name, params, table, seed=3)
    again = synthesize(name, params, table, seed=3)
    other_seed = synthesize(name, params, table, seed=4)
    assert len(fits) == 1  # fitted once, restored twice
    pd.testing.assert_frame_equal(again.synthetic, first.synthetic)
    _without_memo(monkeypatch)  # the package's own fit, every time
    pd.testing.assert_frame_equal(synthesize(name, params, table, seed=3).synthetic,
                                  first.synthetic)
    pd.testing.assert_frame_equal(synthesize(name, params, table, seed=4).synthetic,
                                  other_seed.synthetic)
    assert len(fits) == 3
    assert not other_seed.synthetic.equals(first.synthetic)


def test_a_checkpointed_fit_restores_the_transforms_of_a_plain_one(table, fits):
    plain = synthesize("tvae", {"batch_size": 100, "epochs": 3}, table, seed=8)
    got = {}
    synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=8, at=(1, 3),
                           each=lambda e, s: got.__setitem__(e, s))
    assert len(fits) == 1
    pd.testing.assert_frame_equal(got[3].synthetic, plain.synthetic)


def test_another_table_is_fitted_and_few_are_kept(table, fits):
    for rows in (300, 250, 200):
        synthesize("tvae", {"batch_size": 50, "epochs": 1}, table.head(rows), seed=1)
    assert len(fits) == 3 and len(_transforms._kept) == _transforms.KEPT
    synthesize("tvae", {"batch_size": 50, "epochs": 1}, table.head(200), seed=1)  # kept
    synthesize("tvae", {"batch_size": 50, "epochs": 1}, table.head(300), seed=1)  # dropped
    assert len(fits) == 4
    # an equal table in a changed column is another table
    changed = table.head(200).assign(age=table.head(200)["age"] + 1)
    synthesize("tvae", {"batch_size": 50, "epochs": 1}, changed, seed=1)
    assert len(fits) == 5


def test_the_fitted_model_holds_the_packages_own_transformer(table, fits):
    from tuner.synthesis._synthesizers import build, fitted

    for _ in range(2):  # fitted, then restored
        synth = build("ctgan", {"batch_size": 100, "pac": 10, "epochs": 1}, table, seed=2)
        with fitted(synth, table, seed=2, threads=1):
            pass
        transformer = synth._model._transformer
        assert type(transformer) is DataTransformer
        assert not {"_pending", "_restored"} & set(vars(transformer))
        assert pickle.loads(pickle.dumps(transformer)).output_dimensions \
            == transformer.output_dimensions
    assert len(fits) == 1
    import ctgan.synthesizers.ctgan as loop

    assert loop.DataTransformer is DataTransformer  # put back after the fit


def test_a_fit_with_restored_transforms_reports_the_seconds_a_plain_fit_takes(table, fits,
                                                                              monkeypatch):
    # the job's budget estimates the audit's shadow fits (new tables, transforms fitted each
    # time) from a trial's fit seconds: restored, the transforms still count. Their fit made
    # 0.4 s slower here, so every fit, restored or not, counts at least that much
    counting = DataTransformer.fit

    def slow(self, *args, **kwargs):
        import time

        time.sleep(0.4)
        return counting(self, *args, **kwargs)

    monkeypatch.setattr(DataTransformer, "fit", slow)
    params = {"batch_size": 100, "epochs": 1}
    before = _checkpoints.restored_seconds()
    first = synthesize("tvae", params, table, seed=3)
    assert _checkpoints.restored_seconds() == before  # fitted, nothing restored
    again = synthesize("tvae", params, table, seed=3)
    assert len(fits) == 1 and _checkpoints.restored_seconds() - before >= 0.4
    assert first.fit_seconds >= 0.4 and again.fit_seconds >= 0.4
    trained = {}
    synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=3, at=(1,),
                           each=lambda e, s: trained.__setitem__(e, s.fit_seconds))
    assert len(fits) == 1 and trained[1] >= 0.4
