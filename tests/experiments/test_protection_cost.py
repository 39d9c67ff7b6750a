"""The protection-cost experiment (experiments/release_audit/protection_cost.py): its table
holds one row per cell, with and without protection, in the rows' own figures."""

from __future__ import annotations

import pandas as pd

from experiments.release_audit import protection_cost


def test_the_table_has_a_row_per_cell_with_its_figures():
    rows = pd.DataFrame({"family": ["cart", "cart"], "protect_k": [0, 10],
                         "values_coded": [0, 180], "U": [0.9, 0.89], "M": [0.01, -0.02],
                         "copies_difference": [0.0, 0.0], "dcr_excess": [0.02, 0.01],
                         "feasible": [True, True], "audit": ["refused", "passed"],
                         "people_flagged": [2, 0], "pooled_upper": [0.06, 0.03]})
    lines = protection_cost.summarise(rows).splitlines()
    body = [[c.strip() for c in line.strip("|").split("|")] for line in lines
            if line.startswith("| cart")]
    assert body == [["cart", "0", "0", "0.9000", "0.0100", "0.0000", "0.0200", "True",
                     "refused", "2", "0.0600"],
                    ["cart", "10", "180", "0.8900", "-0.0200", "0.0000", "0.0100", "True",
                     "passed", "0", "0.0300"]]
