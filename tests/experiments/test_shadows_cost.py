"""The cost-of-shadows experiment (experiments/release_audit/shadows_cost.py): its table says
what its rows say, each R's time against the first R's of the same generator, and the run it
summarises plays the audit at each R asked for (the blind generator, tiny)."""

from __future__ import annotations

import pandas as pd

from experiments.release_audit import shadows_cost, targets_cost
from tests.data import load_adult


def test_the_table_compares_each_r_with_the_first_of_its_generator():
    rows = pd.DataFrame({
        "generator": ["blind"] * 4, "targets": [40] * 4, "shadows": [100, 100, 300, 300],
        "seed": [0, 1, 0, 1], "seconds": [10.0, 12.0, 30.0, 36.0],
        "refused": [True, True, False, True], "flagged": [0, 1, 0, 0],
        "tpr": [0.01, 0.01, 0.012, 0.008], "pooled_upper": [0.09, 0.08, 0.03, 0.05],
        "kg_upper": [0.02, 0.02, 0.015, 0.013], "model_no_leak_refusal": [1.0, 1.0, 0.0, 0.0]})
    lines = shadows_cost.summarise(rows).splitlines()
    body = [[c.strip() for c in line.strip("|").split("|")] for line in lines
            if line.startswith("| blind")]
    assert body[0][1:8] == ["40", "100", "2", "11.000", "1.000", "2", "1"]
    assert body[1][1:8] == ["40", "300", "2", "33.000", "3.000", "1", "0"]
    assert [b[9] for b in body] == ["0.085", "0.040"]  # the bound that decides, mean
    assert [b[10] for b in body] == ["0.020", "0.014"]  # Korn-Graubard's, beside it
    assert body[0][-1] == "100.00%" and body[1][-1] == "0.00%"


def test_each_shadow_count_is_played_and_bounded_both_ways(monkeypatch):
    load_adult()  # skips cleanly without ../shared (fails under .ci/run)
    monkeypatch.setattr(targets_cost, "SHADOW_SIZE", 200)
    frame = targets_cost.run([4], 1, 1, ["blind"], shadows=(40, 60))
    assert list(frame["shadows"]) == [40, 60]
    # 20 and 30 test fits: the bound over fits cannot pass 0.05 at 98.3 % with so few, and
    # it is at least the floor 1 - alpha^(1 / n) a leak of whole fits forces
    assert (frame["pooled_upper"] >= 1 - (0.05 / 3) ** (1 / (frame["shadows"] // 2))).all()
    assert frame["refused"].all() and (frame["kg_upper"] < frame["pooled_upper"]).all()
