"""The per-person verdict's experiment (experiments/release_audit/persons.py) in small form: its
generator leaks the chosen person where it says, and the table counts what the rows say."""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.release_audit import persons


def test_the_leaking_generator_writes_a_near_copy_only_where_it_holds_the_person():
    pool = pd.DataFrame({"fnlwgt": np.arange(1000, 1100), "c": ["p"] * 100})
    person = pd.DataFrame({"fnlwgt": [7], "c": ["t"]})
    holding = pd.concat([pool.iloc[:40], person], ignore_index=True)
    without = pool.iloc[40:81].reset_index(drop=True)
    half = persons.Blind(pool, person, 0.5)
    leaked = []
    for seed in range(80):
        out = half(holding, seed)
        near = out[(out["c"] == "t")]
        assert len(out) == len(holding) and len(near) <= 1
        assert near.empty or near["fnlwgt"].tolist() == [8]  # near, not the record itself
        leaked.append(len(near))
        assert not (persons.Blind(pool, person, 1.0)(without, seed)["c"] == "t").any()
    assert 20 < sum(leaked) < 60  # about half of the tables that hold the person
    assert not (persons.Blind(pool)(holding, 3)["c"] == "t").any()


def test_the_table_counts_refusals_with_their_exact_interval():
    rows = pd.DataFrame({"generator": ["blind"] * 4 + ["one_person_1"] * 2,
                         "design": ["shared"] * 6, "seed": [0, 1, 2, 3, 0, 1],
                         "refused": [False, False, False, True, True, True],
                         "person_flagged": [False, False, False, True, True, True],
                         "pooled_refused": [False] * 6, "flagged": [0, 0, 0, 1, 1, 1],
                         "worst_is_chosen": [False, True, False, False, True, True],
                         "chosen_p": [0.5, 0.2, 0.3, 0.9, 1e-4, 1e-4],
                         "worst_p": [0.05] * 6, "pooled_upper": [0.02] * 6,
                         "signalled": [0, 1, 0, 3, 1, 2],
                         "chosen_tpr": [0.01, 0.0, 0.02, 0.0, 0.9, 0.7],
                         "largest_other_tpr": [0.04, 0.06, 0.03, 0.05, 0.05, 0.08],
                         "seconds": [10.0] * 6})
    text = persons.summarise(rows)
    assert "| blind | shared | 4 | 1 of 4 [0.01, 0.81] |" in text
    # the exposed person's median own TPR, anyone else's largest, the mean signalled
    assert "| one_person_1 | shared | 2 | 2 of 2 [0.16, 1.00] |" in text
    assert "| 0.0001 | 0.80 | 0.08 | 1.5 | 10 |" in text
    assert "|  |  | 0.06 | 1.0 | 10 |" in text
