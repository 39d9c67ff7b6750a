"""Tables and plots from ``tuner_setting.csv`` (the tuner's own setting, issue #18).

* ``tuner_setting.md``: the error of the trial's M against the truth per family and sampling
  fraction, how often the M <= 0.2 decisions agree, how often ``m_spread`` covers the true M,
  the map of where M fails (members per attack set, distinct key combinations, copy rate) with
  what the gate's measures say there, the tuner's rule checked row by row, and the coverage of
  M's confidence interval by synthesiser x n/N x h with the M <= 0.2 decision on its upper end
  (issue 34);
* ``tuner_setting_scatter.png``: estimated against true M, one panel per quasi-identifier set
  and h; ``tuner_setting_error.png``: the mean absolute error against n/N per family;
  ``tuner_setting_region.png``: the region map (true M of the released data per setting and
  n/N, with the estimate and the gate's verdict written in each cell).

Rerun alone with ``python -m experiments.membership_validation.tuner_summary [RESULTS_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.membership_validation.tuner_plots import error_plot, region_plot, scatter
from experiments.membership_validation.tuner_verdicts import (
    ACCEPTABLE_M,
    _flag,
    _order,
    with_verdicts,
)
from experiments.reporting import markdown_table


def error_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per quasi-identifier set, h and synthesiser: error, agreement and coverage."""
    rows = []
    ok = frame[frame["status"].eq("ok")]
    for (qi, h), g_h in ok.groupby(["quasi_identifiers", "hamming_threshold"], sort=False):
        groups = [(s, g_h[g_h["synthesizer"] == s]) for s in _order(g_h)]
        for label, g in [*groups, ("all", g_h)]:
            err = g["f1_estimate"] - g["f1_true"]
            rows.append({
                "QIs": qi, "h": int(h), "synthesiser": label, "rows": len(g),
                "F1 bias": err.mean(), "F1 MAE": err.abs().mean(),
                "F1 max abs error": err.abs().max(), "M MAE": g["m_abs_error"].mean(),
                "same M <= 0.2 decision": _flag(g["decision_agrees"]).mean(),
                "spread covers true M": _flag(g["spread_covers"]).mean(),
            })
    return pd.DataFrame(rows)


def mae_pivot(frame: pd.DataFrame, qi: str, h: int, column: str = "abs_error") -> pd.DataFrame:
    """Mean of ``column`` by synthesiser (rows) and sampling fraction (columns)."""
    g = frame[frame["status"].eq("ok") & frame["quasi_identifiers"].eq(qi)
              & frame["hamming_threshold"].eq(h)]
    table = g.pivot_table(index="synthesizer", columns="sample_fraction", values=column,
                          aggfunc="mean", sort=False)
    table = table.reindex(_order(g))
    table.columns = [f"n/N = {c:g}" for c in table.columns]
    return table.reset_index()


def agreement_by_binding(frame: pd.DataFrame) -> pd.DataFrame:
    """Decision agreement and spread coverage, split by whether M can bind."""
    ok = frame[frame["status"].eq("ok")].copy()
    ok["M can bind"] = _flag(ok["can_bind"]).astype(bool)
    rows = []
    for (qi, h, bind), g in ok.groupby(["quasi_identifiers", "hamming_threshold", "M can bind"],
                                      sort=False):
        members = g["expected_members"]
        rows.append({
            "QIs": qi, "h": int(h), "M can bind": bool(bind), "rows": len(g),
            "members per attack set": f"{members.min():.1f}-{members.max():.1f}",
            "F1 MAE": g["abs_error"].mean(), "M MAE": g["m_abs_error"].mean(),
            "same decision": _flag(g["decision_agrees"]).mean(),
            "spread covers true M": _flag(g["spread_covers"]).mean(),
            "spread width (median)": (g["m_spread_high"] - g["m_spread_low"]).median(),
        })
    return pd.DataFrame(rows)


COVERAGE_GOAL, CELL_GOAL, CELL_ROWS = 0.90, 0.85, 20  # issue 34: overall, per cell of >= 20
# the truths the confidence interval is checked against: the same attack on the population
# (the trial's bin edges; what the interval is of) and the population binned on its own range
TRUTHS = {"trial bins": "ci_covers_trial_bins", "population bins": "ci_covers"}


def _usable_with_interval(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame["status"].eq("ok")]
    return ok[ok["m_ci_low"].notna()] if "m_ci_low" in ok else ok.iloc[:0]


def coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """How often M's confidence interval covers the true M, by synthesiser x fraction x h (both
    QI sets together), with the spread's coverage beside it and the interval's median width."""
    ok = _usable_with_interval(frame)
    rows = []
    for (label, fraction, h), g in ok.groupby(["synthesizer", "sample_fraction",
                                               "hamming_threshold"], sort=False):
        rows.append({
            "synthesiser": label, "n/N": f"{fraction:g}", "h": int(h), "rows": len(g),
            **{f"CI covers ({k})": _flag(g[c]).mean() for k, c in TRUTHS.items()},
            "spread covers (population bins)": _flag(g["spread_covers"]).mean(),
            "CI width (median)": (g["m_ci_high"] - g["m_ci_low"]).median(),
        })
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = {s: i for i, s in enumerate(_order(ok))}
    return out.sort_values(["synthesiser", "n/N", "h"], key=lambda c: c.map(order)
                           if c.name == "synthesiser" else c.astype(float)).reset_index(drop=True)


def coverage_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage by synthesiser x fraction (both h, both QI sets) and whether each cell of >= 20
    rows meets the goal of >= 0.85 (issue 34), against each truth."""
    ok = _usable_with_interval(frame)
    rows = []
    for (label, fraction), g in ok.groupby(["synthesizer", "sample_fraction"], sort=False):
        cov = {k: _flag(g[c]).mean() for k, c in TRUTHS.items()}
        rows.append({
            "synthesiser": label, "n/N": f"{fraction:g}", "rows": len(g),
            **{f"CI covers ({k})": v for k, v in cov.items()},
            "meets 0.85 (trial bins)": "-" if len(g) < CELL_ROWS else
            ("yes" if cov["trial bins"] >= CELL_GOAL else "NO"),
            "meets 0.85 (population bins)": "-" if len(g) < CELL_ROWS else
            ("yes" if cov["population bins"] >= CELL_GOAL else "NO"),
        })
    return pd.DataFrame(rows)


def coverage_overall(frame: pd.DataFrame) -> pd.DataFrame:
    """Overall coverage against each truth, the spread's, and the goals of issue 34."""
    ok = _usable_with_interval(frame)
    cells = coverage_cells(frame)
    big = cells[cells["rows"] >= CELL_ROWS]
    rows = []
    for k, c in TRUTHS.items():
        cov = _flag(ok[c]).mean()
        worst = big[f"CI covers ({k})"].min() if len(big) else np.nan
        rows.append({"truth": k, "rows": len(ok), "CI coverage": cov,
                     f"cells with >= {CELL_ROWS} rows": len(big),
                     "lowest cell coverage": worst,
                     f"overall >= {COVERAGE_GOAL}": "yes" if cov >= COVERAGE_GOAL else "NO",
                     f"every cell >= {CELL_GOAL}": "-" if big.empty else
                     ("yes" if worst >= CELL_GOAL else "NO")})
    rows.append({"truth": "population bins (spread, for comparison)", "rows": len(ok),
                 "CI coverage": _flag(ok["spread_covers"]).mean()})
    return pd.DataFrame(rows)


def decision_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The M <= 0.2 decision on the estimate and on the interval's upper end, against the
    truth (trial bins), per QI set and h: what m_decision = "upper" changes."""
    ok = _usable_with_interval(frame)
    rows = []
    for (qi, h), g in ok.groupby(["quasi_identifiers", "hamming_threshold"], sort=False):
        risky = g["m_true_trial_bins"] > ACCEPTABLE_M
        est, upper = g["m_estimate"] <= ACCEPTABLE_M, g["m_ci_high"] <= ACCEPTABLE_M
        rows.append({
            "QIs": qi, "h": int(h), "rows": len(g), "true M > 0.2": int(risky.sum()),
            "pass on estimate": int(est.sum()), "pass on upper end": int(upper.sum()),
            "pass on estimate, fail on upper": int((est & ~upper).sum()),
            "risky passed (estimate)": int((risky & est).sum()),
            "risky passed (upper)": int((risky & upper).sum()),
            "safe refused (estimate)": int((~risky & ~est).sum()),
            "safe refused (upper)": int((~risky & ~upper).sum()),
        })
    return pd.DataFrame(rows)


def region_table(frame: pd.DataFrame, qi: str, h: int = 0) -> pd.DataFrame:
    """Per setting and n/N (mean over seeds): what M says, the truth, and the gate."""
    v = with_verdicts(frame)
    g = v[v["quasi_identifiers"].eq(qi) & v["hamming_threshold"].eq(h)]
    rows = []
    for label in _order(g):
        for fraction, s in g[g["synthesizer"] == label].groupby("sample_fraction"):
            fails = []
            if s["copies_fail"].any():
                fails.append(f"copies {s['copies_fail'].mean():.0%}")
            if s["dcr_fail"].any():
                fails.append(f"DCR {s['dcr_fail'].mean():.0%}")
            binned = (f"{s['binned_fail'].mean():.0%}" if s["binned_fail"].any() else "-")
            rows.append({
                "setting": label, "n/N": f"{fraction:g}", "seeds": len(s),
                "members/attack": s["expected_members"].mean(),
                "distinct keys": s["distinct_keys_train"].mean(),
                "M est.": s["m_estimate"].mean(), "M true": s["m_true"].mean(),
                "M true, as sampled": s["m_true_sampled"].mean(),
                "copy ceiling": s["m_copy_ceiling"].mean(),
                "removed": s["removed_share"].mean(),
                "copies diff.": s["copies_difference"].mean(),
                "binned copies diff.": s["binned_copies_all"].mean(),
                "DCR excess": s["dcr_excess"].mean(), "repU %": s["repU"].mean(),
                "gate fails": ", ".join(fails) or "-",
                "released": f"{s['released'].mean():.0%}",
                "binned copies fail": binned,
                "released, proposed": f"{s['released_proposed'].mean():.0%}",
            })
    return pd.DataFrame(rows)


def rule_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The tuner's rule (M <= 0.2, copies difference <= 0.05, DCR excess <= 0.1, replicated
    uniques removed; warn below 20 members) against the truth, per QI set and h, and the
    proposed one (also binned copies difference <= 0.05; warn when the copy ceiling <= 0.2)."""
    v = with_verdicts(frame)
    rows = []
    for (qi, h), g in v.groupby(["quasi_identifiers", "hamming_threshold"], sort=False):
        risky, leaky = g["risky"], g["leaky_generator"]
        rows.append({
            "QIs": qi, "h": int(h), "rows": len(g),
            "warned: < 20 members": int(g["warned"].sum()),
            "blind: copy ceiling <= 0.2, >= 20 members": int((g["blind"] & ~g["warned"]).sum()),
            "risky: true M > 0.2 (released data)": int(risky.sum()),
            "risky, M est. <= 0.2": int((risky & g["m_passes"]).sum()),
            "risky, released by the rule": int((risky & g["released"]).sum()),
            "leaky: true M > 0.2 (as sampled)": int(leaky.sum()),
            "leaky, M est. (as sampled) <= 0.2": int(
                (leaky & (g["m_estimate_sampled"] <= ACCEPTABLE_M)).sum()),
            "leaky, released by the rule": int((leaky & g["released"]).sum()),
            "true M <= 0.2, rejected by the gate": int(
                (g["usable"] & ~risky & g["m_passes"] & g["gate_fails"]).sum()),
            "unusable (all removed)": int((~g["usable"]).sum()),
            "released": int(g["released"].sum()),
            "copiers released": int((g["copier"] & g["released"]).sum()),
            "released, proposed": int(g["released_proposed"].sum()),
            "copiers released, proposed": int((g["copier"] & g["released_proposed"]).sum()),
        })
    return pd.DataFrame(rows)


def coverage_parts(frame: pd.DataFrame) -> list[str]:
    """The confidence interval's sections of tuner_setting.md (issue 34)."""
    return [
        "## Coverage of M's confidence interval (issue 34)\n",
        "The trial's 95 % confidence interval of M (`m_ci`, design §3.2) against the true M "
        "of the released data, over the usable rows (both QI sets, both h). `trial bins`: the "
        "truth is the same attack on the population (members: the training records; "
        "non-members: people outside the sample; a = 10,000; R = 100), numeric bin edges as the "
        "trial set them: what the interval is of. `population bins`: the original truth "
        "(`m_true`), bin edges from the population's range, another attack. Goals: >= "
        f"{COVERAGE_GOAL} overall and >= {CELL_GOAL} in every synthesiser x n/N cell of >= "
        f"{CELL_ROWS} rows.\n",
        markdown_table(coverage_overall(frame)) + "\n",
        "### By synthesiser and n/N\n", markdown_table(coverage_cells(frame)) + "\n",
        "### By synthesiser, n/N and h\n", markdown_table(coverage_table(frame)) + "\n",
        "## Deciding on the upper end (m_decision = \"upper\")\n",
        "Rows passing M <= 0.2 on the estimate and on the interval's upper end, and how each "
        "decision fares against the truth (trial bins).\n",
        markdown_table(decision_table(frame)) + "\n",
    ]


def summarize(frame: pd.DataFrame, output: Path) -> list[Path]:
    """Write tuner_setting.md and the three plots into ``output``; return their paths."""
    parts = [
        "# M in the tuner's own setting: estimate against truth on Adult (N = "
        f"{int(frame['population_size'].iloc[0]):,})\n",
        "Generated by `python -m experiments.membership_validation.tuner_setting` from "
        "`tuner_setting.csv`. F1 errors are |F1 estimated by the trial - true F1| of the "
        "released data; rows the gate emptied (every record a replicated unique) are left out "
        "of the error tables (the tuner fails such a trial).\n",
        "## Mean absolute F1 error by family and sampling fraction\n",
    ]
    qis = list(dict.fromkeys(frame["quasi_identifiers"]))
    for qi in qis:
        for h in sorted(frame["hamming_threshold"].unique()):
            parts.append(f"### QIs: {qi}, h = {h}\n\n{markdown_table(mae_pivot(frame, qi, h))}\n")
    parts += ["## Error, decision agreement and spread coverage per family\n",
              markdown_table(error_table(frame)) + "\n",
              "## By whether M can bind (>= 20 members per attack set)\n",
              markdown_table(agreement_by_binding(frame)) + "\n",
              "## Where M fails: per setting and n/N (h = 0, mean over seeds)\n",
              "`M true, as sampled`: the true M of the generator's data before the gate "
              "removed replicated uniques; `copy ceiling`: the M the trial reports for a "
              "verbatim copy of its training data; `removed`: share of records the gate "
              "removed; `gate fails`: share of seeds failing copies difference > 0.05 or DCR "
              "excess > 0.1; `released`: share of seeds the tuner's rule would release; "
              "`binned copies diff.`: the exact-copies difference on every column binned "
              "as M's encoding bins them, of the data as sampled, and `released, "
              "proposed`: the share released when that must also be <= 0.05.\n"]
    for qi in qis:
        parts.append(f"### QIs: {qi}\n\n{markdown_table(region_table(frame, qi))}\n")
    parts += ["## The tuner's rule against the truth (rows)\n",
              markdown_table(rule_table(frame)) + "\n"]
    if "m_ci_low" in frame:
        parts += coverage_parts(frame)
    md = output / "tuner_setting.md"
    md.write_text("\n".join(parts))
    return [md, scatter(frame, output / "tuner_setting_scatter.png"),
            error_plot(frame, output / "tuner_setting_error.png"),
            region_plot(frame, output / "tuner_setting_region.png")]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0]) if args else Path(__file__).resolve().parent / "results"
    for path in summarize(pd.read_csv(output / "tuner_setting.csv"), output):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
