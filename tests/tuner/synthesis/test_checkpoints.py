"""Checkpointed training (tuner/synthesis/_checkpoints.py): the records at checkpoint e are
those of a plain fit of e epochs, value for value; a callback can stop the fit; the loops are
left as they were."""

from __future__ import annotations

import importlib

import pandas as pd
import pytest

from tuner.errors import SynthesisFailed
from tuner.synthesis import StopTraining, rungs, synthesize, synthesize_checkpoints


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return pd.read_csv("tuner/demo_data/adult_demo.csv.gz").head(300)


def test_rungs_are_geometric_and_end_at_the_fits_epochs():
    assert rungs(300, first=5) == (5, 15, 45, 135, 300)
    assert rungs(45, first=5) == (5, 15, 45)
    assert rungs(46, first=5) == (5, 15, 45, 46)
    assert rungs(3, first=5) == (3,)
    assert rungs(10, first=1, factor=2) == (1, 2, 4, 8, 10)
    with pytest.raises(ValueError, match="epochs >= 1"):
        rungs(0, first=5)


@pytest.mark.parametrize("name, params", [
    ("ctgan", {"batch_size": 100, "pac": 10}),
    ("tvae", {"batch_size": 100}),
    ("copulagan", {"batch_size": 100, "pac": 10}),
])
def test_a_checkpoint_gives_the_records_of_a_plain_fit_of_its_epochs(table, name, params):
    got = {}
    visited = synthesize_checkpoints(name, params, table, seed=11, at=(1, 3),
                                     each=lambda e, s: got.__setitem__(e, s))
    assert visited == 2 and sorted(got) == [1, 3]
    for epochs in (1, 3):
        plain = synthesize(name, {**params, "epochs": epochs}, table, seed=11)
        pd.testing.assert_frame_equal(got[epochs].synthetic, plain.synthetic)
        assert got[epochs].fit_seconds > 0
    # the two checkpoints are different models, not one sample twice
    assert not got[1].synthetic.equals(got[3].synthetic)


def test_a_due_checkpoint_comes_after_the_epoch_under_way_with_a_plain_fits_records(table):
    # the job's time is up between rungs 1 and 9: the trial stops after the epoch under way,
    # not 6 epochs later at its next rung (issue 46's benchmark: a trial stopped at its rung
    # 135 took its study 62 s past a 480 s budget)
    got, clock = {}, iter(range(100))
    visited = synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=5, at=(1, 9),
                                     each=lambda e, s: got.__setitem__(e, s),
                                     due=lambda: next(clock) >= 1)
    # asked after epoch 2 (not after 1, a rung): not yet; after 3: due; then never again
    assert visited == 3 and sorted(got) == [1, 3, 9]
    plain = synthesize("tvae", {"batch_size": 100, "epochs": 3}, table, seed=5)
    pd.testing.assert_frame_equal(got[3].synthetic, plain.synthetic)


def test_stop_training_ends_the_fit_and_other_errors_pass_as_they_are(table):
    seen = []

    def stop(epochs, synthesis):
        seen.append(epochs)
        raise StopTraining("enough")

    assert synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=1, at=(1, 2, 3),
                                  each=stop) == 1
    assert seen == [1]

    def broken(epochs, synthesis):
        raise KeyError("a callback's own error")

    with pytest.raises(KeyError, match="a callback's own error"):
        synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=1, at=(1, 2),
                               each=broken)
    # the synthesiser's own failure is still said as the trial's
    with pytest.raises(SynthesisFailed, match="tvae could not be fitted"):
        synthesize_checkpoints("tvae", {"batch_size": 7_000_000_000_000}, table, seed=1,
                               at=(1,), each=lambda e, s: None)


def test_the_loops_are_left_as_they_were(table):
    from tqdm import tqdm

    synthesize_checkpoints("tvae", {"batch_size": 100}, table, seed=1, at=(1,),
                           each=lambda e, s: None)
    for module in ("ctgan.synthesizers.ctgan", "ctgan.synthesizers.tvae"):
        assert importlib.import_module(module).tqdm is tqdm


def test_a_family_without_epochs_has_no_checkpoints(table):
    with pytest.raises(ValueError, match="'cart' does not train in epochs"):
        synthesize_checkpoints("cart", {}, table, seed=1, at=(1,), each=lambda e, s: None)
