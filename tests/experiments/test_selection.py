"""M's interval after selection (issue 44, item 7): the smoke run plays the tuner's choice."""

from __future__ import annotations

import pandas as pd

from experiments.membership_validation import selection
from tests.data import load_adult


def test_smoke_run_selects_as_the_tuner_does(tmp_path):
    load_adult()  # skips cleanly without ../shared/data (fails under .ci/run)
    assert selection.main(["--smoke", "--output", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / "selection.csv")
    opts = selection.SMOKE
    assert len(frame) == opts.samples * len(opts.shares)
    for _, sample in frame.groupby("sample"):
        # one trial picked by chance; at most one released, feasible, of the lowest loss
        assert sample["by_chance"].sum() == 1
        picked = sample[sample["selected"]]
        assert len(picked) <= 1
        if len(picked):
            assert bool(picked["feasible"].iloc[0])
            assert picked["loss"].iloc[0] == sample.loc[sample["feasible"], "loss"].min()
        assert (sample["feasible"] == sample["holdout_m"].le(selection.LIMIT)).all()
        # the audit set and the holdout are different records: the estimates differ
        assert not sample["audit_m"].equals(sample["holdout_m"])
    # more near copies, a higher true M
    by_share = frame.groupby("share")["holdout_m_true"].mean()
    assert by_share.is_monotonic_increasing, by_share
    for side in ("holdout", "audit"):
        assert (frame[f"{side}_low"] <= frame[f"{side}_m"]).all()
        assert (frame[f"{side}_m"] <= frame[f"{side}_high"]).all()
    text = (tmp_path / "selection.md").read_text()
    assert "the selected candidate: sealed audit set" in text
    assert f"{opts.samples} independent samples" in text
