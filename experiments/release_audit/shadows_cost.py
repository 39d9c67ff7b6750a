"""What the bound over fits costs in shadows (issue 44, item 3: "valid intervals at the fit
level").

The pooled TPR's bound is now over the shared game's test fits (:mod:`risk._audit_bound`), valid
whatever the runs of one fit do together, and a bound over ``n`` fits cannot fall below ``1 -
(1 - confidence)^(1 / n)``: 100 shadows (50 test fits) can never pass ``tpr_limit = 0.05`` at
the release's confidence. This plays :func:`risk.membership_audit` at K = 40 on ``persons.py``'s
Adult frames for each R of ``--shadows``, side by side in one run, with the Gaussian copula on
value-protected data (a realistic near-null generator) and the data-blind one, and reports
seconds per audit, how often the verdict refused, the mean bound over fits beside Korn &
Graubard's (the bound before) and the model's no-leak refusal rate.

    python -m experiments.release_audit.shadows_cost                     # the committed table
    python -m experiments.release_audit.shadows_cost --quick             # the blind one only
    python -m experiments.release_audit.shadows_cost --shadows 300 400 --seeds 1

``results/shadows_cost.md`` holds the table.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.release_audit.persons import SHADOW_SIZE
from experiments.release_audit.targets_cost import CONFIDENCE, run_and_write
from experiments.reporting import markdown_table

TABLE = Path(__file__).resolve().parent / "results" / "shadows_cost.md"


def summarise(frame: pd.DataFrame) -> str:
    cell = frame.groupby(["generator", "targets", "shadows"], sort=False).agg(
        audits=("seed", "size"), seconds=("seconds", "mean"), refused=("refused", "sum"),
        flagged=("flagged", "sum"), tpr=("tpr", "mean"), pooled_upper=("pooled_upper", "mean"),
        kg_upper=("kg_upper", "mean"), model=("model_no_leak_refusal", "first")).reset_index()
    cell["x the first R"] = cell["seconds"] / cell.groupby("generator")["seconds"].transform(
        "first")
    cell["model"] = cell["model"].map("{:.2%}".format)
    shown = cell.rename(columns={
        "targets": "K", "shadows": "R", "seconds": "seconds per audit",
        "flagged": "people flagged", "tpr": "mean pooled TPR",
        "pooled_upper": "mean bound over fits (decides)",
        "kg_upper": "mean Korn-Graubard bound (before)", "model": "modelled no-leak refusal"})[[
        "generator", "K", "R", "audits", "seconds per audit", "x the first R", "refused",
        "people flagged", "mean pooled TPR", "mean bound over fits (decides)",
        "mean Korn-Graubard bound (before)", "modelled no-leak refusal"]]
    head = (f"Shared game, shadow tables of {SHADOW_SIZE:,} Adult records (3,000 training, "
            f"1,800 reference); bounds one-sided at confidence {CONFIDENCE:.3f} (`[audit] "
            "attempts = 3`), tpr_limit 0.05, alpha 0.05; 2 processes on this machine's 2 cores; "
            "every R of a generator measured in the same run. "
            "`python -m experiments.release_audit.shadows_cost`\n\n")
    return head + markdown_table(shown, floatfmt=".3f") + "\n"


def main(argv: list[str] | None = None) -> None:
    run_and_write(argv, doc=__doc__ or "", table=TABLE, summarise=summarise, targets=[40],
                  shadows=[100, 200, 300])


if __name__ == "__main__":
    main()
