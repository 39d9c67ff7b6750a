"""Tables and the figure of the release-audit experiment, from its results CSVs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from experiments.reporting import markdown_table


def _crosstab(audits: pd.DataFrame) -> pd.DataFrame:
    """How often the gate and the audit agree, per dataset and in all."""
    rows = []
    for name, group in [*audits.groupby("dataset"), ("all", audits)]:
        gate, audit = group["gate_passes"].astype(bool), group["audit_passes"].astype(bool)
        rows.append({"dataset": name, "releases": len(group),
                     "gate passes, audit refuses": int((gate & ~audit).sum()),
                     "gate refuses, audit passes": int((~gate & audit).sum()),
                     "both pass": int((gate & audit).sum()),
                     "both refuse": int((~gate & ~audit).sum()),
                     "audit set refuses (gate passed)": int(
                         (gate & (group["audit_set_passes"] == False)).sum())})  # noqa: E712
    return pd.DataFrame(rows)


def _curse(curse: pd.DataFrame) -> pd.DataFrame:
    """Mean of (audit-set value - holdout value) per constraint, with a t interval over the
    studies (positive: the holdout flattered the release)."""
    rows = []
    for (dataset, constraint), group in curse.groupby(["dataset", "constraint"]):
        b = group["bias"].to_numpy(dtype=float)
        half = (stats.t.ppf(0.975, b.size - 1) * b.std(ddof=1) / np.sqrt(b.size)
                if b.size > 1 else np.nan)
        rows.append({"dataset": dataset, "constraint": constraint, "studies": b.size,
                     "mean bias": b.mean(),
                     "95 % interval": f"[{b.mean() - half:+.4f}, {b.mean() + half:+.4f}]"})
    return pd.DataFrame(rows)


def _figure(audits: pd.DataFrame, path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 0.35 * len(audits) + 2.0), layout="tight")
    ax = fig.subplots()
    labels = audits["dataset"] + " " + audits["generator"]
    y = np.arange(len(audits))
    colours = np.where(audits["gate_passes"].astype(bool), "tab:green", "tab:red")
    ax.errorbar(audits["tpr_1pct"], y, xerr=[audits["tpr_1pct"] - audits["tpr_1pct_low"],
                                            audits["tpr_1pct_high"] - audits["tpr_1pct"]],
                fmt="none", ecolor="grey")
    ax.scatter(audits["tpr_1pct"], y, c=colours, zorder=3)
    ax.axvline(0.05, color="crimson", ls="--", lw=1, label="tpr_limit 0.05 (upper bound)")
    ax.axvline(0.01, color="grey", ls=":", lw=1, label="guessing (FPR 1 %)")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlim(0, 1)  # a rate: nothing below 0 or above 1 to show
    ax.set_xlabel("pooled TPR at 1 % FPR, 95 % Clopper-Pearson (green: the gate passes it)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    fig.savefig(path, dpi=110)


def summarize(results: Path) -> str:
    """Write ``table.md`` and ``tpr.png`` in ``results``; return the Markdown."""
    parts = []
    audits_path = results / "audits.csv"
    if audits_path.exists():
        audits = pd.read_csv(audits_path)
        shown = audits[["dataset", "generator", "design", "gate_passes", "gate_failed",
                        "audit_set_passes", "tpr_1pct", "tpr_1pct_low", "tpr_1pct_high",
                        "tpr_10pct", "max_auc", "median_auc", "epsilon_lower_bound",
                        "claimed_epsilon", "m", "utility", "fits", "audit_seconds"]]
        parts += ["## Every release candidate", markdown_table(shown),
                  "## Gate against audit", markdown_table(_crosstab(audits))]
        _figure(audits, results / "tpr.png")
    ordering = results / "meeus_ordering.csv"
    if ordering.exists():
        parts += ["## Meeus et al.'s ordering (Adult, CART min_samples_leaf 5)",
                  markdown_table(pd.read_csv(ordering))]
    curse = results / "winners_curse.csv"
    if curse.exists() and curse.stat().st_size:
        parts += ["## The winner's curse (audit set minus holdout, released trials)",
                  markdown_table(_curse(pd.read_csv(curse)), floatfmt="+.4f")]
    text = "\n\n".join(parts) + "\n"
    (results / "table.md").write_text(text)
    return text
