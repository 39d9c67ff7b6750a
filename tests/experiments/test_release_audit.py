"""The release-audit experiment at a smoke size: one cell judged three ways, and its tables."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.release_audit import run
from experiments.release_audit.summary import summarize
from tests.data import load_adult


@pytest.mark.slow
def test_a_cell_is_judged_by_the_gate_the_audit_set_and_the_audit(tmp_path):
    load_adult()  # skips without ../shared/data (fails under .ci/run)
    ctx = run.prepare(run._config("adult", tmp_path, 1500))
    index = next(i for i, g in enumerate(run.GENERATORS)
                 if g[0] == "cart" and g[1]["min_samples_leaf"] == 20)
    row = run.audit_cell(ctx, "adult", index, targets=2, shadows=8, jobs=1, work=tmp_path)
    assert row["generator"] == "cart(min_samples_leaf=20)" and row["fits"] == 16
    assert 0.0 <= row["tpr_1pct_low"] <= row["tpr_1pct"] <= row["tpr_1pct_high"] <= 1.0
    assert row["audit_passes"] == (row["tpr_1pct_high"] <= 0.05)
    assert isinstance(row["gate_passes"], bool) and row["audit_set_passes"] in (True, False)
    assert (tmp_path / "release_adult_cart(min_samples_leaf=20).csv").exists()


@pytest.mark.slow
def test_today_s_audit_judges_a_cell_as_the_tuner_decides(tmp_path):
    import dataclasses

    from experiments.release_audit import today

    load_adult()
    cfg = run._config("adult", tmp_path, 1500)
    cfg = dataclasses.replace(cfg, audit=dataclasses.replace(cfg.audit, shadows=16, targets=3))
    ctx = run.prepare(cfg)
    index = next(i for i, g in enumerate(run.GENERATORS)
                 if g[0] == "cart" and g[1]["min_samples_leaf"] == 200)
    row = today.today_cell(ctx, "adult", index, jobs=1, work=tmp_path)
    assert row["audited"] and row["design"] in ("shared", "per_target")
    assert row["n_tested"] == 3 and 0 <= row["n_flagged"] <= 3
    # released only when the gate, the sealed set and the verdict all pass it
    assert row["product_releases"] == (row["gate_passes"] and row["audit_set_passes"]
                                       and not row["audit_refused"])
    assert row["audit_refused"] == (row["pooled_refused"] or row["n_flagged"] > 0)
    pd.DataFrame([row]).to_csv(tmp_path / today.CSV_NAME, index=False)
    text = today.summarize(tmp_path)
    assert "cart(min_samples_leaf=200)" in text and "The gate passed" in text


def test_the_crosstab_counts_each_way_the_gate_and_the_audit_can_agree(tmp_path):
    rows = [dict(dataset="d", generator=f"g{i}", design="shared", gate_passes=g,
                 gate_failed="", audit_set_passes=s, tpr_1pct=0.01, tpr_1pct_low=0.0,
                 tpr_1pct_high=h, tpr_10pct=0.1, max_auc=0.6, median_auc=0.5,
                 epsilon_lower_bound=0.0, claimed_epsilon=None, m=0.0, utility=0.9, fits=8,
                 audit_seconds=1.0, audit_passes=h <= 0.05)
            for i, (g, s, h) in enumerate([(True, True, 0.04), (True, True, 0.09),
                                           (True, False, 0.02), (False, None, 0.01),
                                           (False, None, 0.2)])]
    pd.DataFrame(rows).to_csv(tmp_path / "audits.csv", index=False)
    text = summarize(tmp_path)
    table = text.split("## Gate against audit")[1]
    row = next(line for line in table.splitlines() if line.startswith("| d "))
    counts = [int(cell) for cell in row.strip("|").split("|")[1:]]
    # releases; gate passes, audit refuses; the reverse; both pass; both refuse; the audit set
    # refuses one the gate passed
    assert counts == [5, 1, 1, 2, 1, 1]
    assert (tmp_path / "tpr.png").stat().st_size > 1000
