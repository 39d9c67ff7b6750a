"""The cost-of-targets experiment (experiments/release_audit/targets_cost.py): its table says
what its rows say, each K's time against the first K's of the same generator."""

from __future__ import annotations

import pandas as pd

from experiments.release_audit import targets_cost


def test_the_table_compares_each_k_with_the_first_of_its_generator():
    rows = pd.DataFrame({
        "generator": ["blind"] * 4, "targets": [20, 20, 40, 40], "seed": [0, 1, 0, 1],
        "seconds": [10.0, 12.0, 13.0, 9.0], "refused": [False, True, False, False],
        "flagged": [0, 1, 0, 0], "pooled_upper": [0.01, 0.03, 0.02, 0.02],
        "model_no_leak_refusal": [0.021, 0.021, 0.0001, 0.0001]})
    lines = targets_cost.summarise(rows).splitlines()
    body = [[c.strip() for c in line.strip("|").split("|")] for line in lines
            if line.startswith("| blind")]
    assert body[0][1:7] == ["20", "2", "11.000", "1.000", "1", "1"]
    assert body[1][1:7] == ["40", "2", "11.000", "1.000", "0", "0"]
    assert body[0][-1] == "2.10%" and body[1][-1] == "0.01%"
    assert [b[7] for b in body] == ["0.020", "0.020"]
