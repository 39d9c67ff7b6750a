"""Tables and plots from ``results.csv`` of the membership validation.

* ``table.md``: actual vs estimated F1 (and M) per synthesiser and sampling fraction, mean (s.d.)
  over seeds, in the layout of Table 2 of El Emam, Mosquera & Fang (JAMIA Open 2022);
* ``errors.md``: the estimates' error against the truth per Hamming threshold: bias and mean
  absolute error of F1 and M, and how often the estimate takes the same M <= 0.2 decision;
* ``f1_vs_fraction.png``: F1 against n/N, the three curves (actual; estimated at t = n/N; at
  t = 0.5), one panel per synthesiser and threshold; ``m_vs_fraction.png`` the same for M.

Rerun alone with ``python -m experiments.membership_validation.summarize [RESULTS_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.reporting import markdown_table
from tuner._common.figures import save_figure

ACCEPTABLE_M = 0.2
ESTIMATES = {"tn": "t = n/N", "t05": "t = 0.5"}


def _mean_sd(values: pd.Series) -> str:
    sd = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{values.mean():.3f} ({sd:.3f})"


def _order(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["synthesizer"]))


def table2(frame: pd.DataFrame) -> str:
    """Mean (s.d. over seeds) of actual and estimated F1 and M, per h, synthesiser, n/N."""
    parts = []
    for h, by_h in frame.groupby("hamming_threshold"):
        rows = []
        for label in _order(by_h):
            for fraction, g in by_h[by_h["synthesizer"] == label].groupby("fraction"):
                rows.append({
                    "synthesiser": label, "n/N": f"{fraction:g}", "n": int(g["n"].iloc[0]),
                    "seeds": len(g), "actual F1": _mean_sd(g["actual_f1"]),
                    "est. F1 (t = n/N)": _mean_sd(g["est_f1_tn"]),
                    "est. F1 (t = 0.5)": _mean_sd(g["est_f1_t05"]),
                    "actual M": _mean_sd(g["actual_m"]),
                    "est. M (t = n/N)": _mean_sd(g["est_m_tn"]),
                    "est. M (t = 0.5)": _mean_sd(g["est_m_t05"]),
                })
        parts.append(f"### Hamming threshold h = {h}\n\n{markdown_table(pd.DataFrame(rows))}")
    return "\n\n".join(parts)


def error_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Error of each estimate against the truth, per h and synthesiser (and over all)."""
    rows = []
    for h, by_h in frame.groupby("hamming_threshold"):
        groups = [(label, by_h[by_h["synthesizer"] == label]) for label in _order(by_h)]
        for label, g in [*groups, ("all", by_h)]:
            for key, name in ESTIMATES.items():
                err_f1 = g[f"est_f1_{key}"] - g["actual_f1"]
                err_m = g[f"est_m_{key}"] - g["actual_m"]
                same = (g[f"est_m_{key}"] <= ACCEPTABLE_M) == (g["actual_m"] <= ACCEPTABLE_M)
                rows.append({
                    "h": int(h), "synthesiser": label, "estimate": name, "settings": len(g),
                    "F1 bias": err_f1.mean(), "F1 MAE": err_f1.abs().mean(),
                    "F1 max abs error": err_f1.abs().max(),
                    "M bias": err_m.mean(), "M MAE": err_m.abs().mean(),
                    "same M <= 0.2 decision": same.mean(),
                })
    return pd.DataFrame(rows)


def _curves(frame: pd.DataFrame, path: Path, *, scale: str) -> Path:
    columns = {"F1": ("actual_f1", "est_f1_tn", "est_f1_t05"),
               "M": ("actual_m", "est_m_tn", "est_m_t05")}[scale]
    labels = ("actual (truth)", "estimated, t = n/N", "estimated, t = 0.5")
    styles = (dict(color="black", marker="o"), dict(color="tab:blue", marker="s", ls="--"),
              dict(color="tab:orange", marker="^", ls=":"))
    hs = sorted(frame["hamming_threshold"].unique())
    synths = _order(frame)
    fig = Figure(figsize=(3.4 * len(synths), 3.0 * len(hs)), layout="tight")
    axes = fig.subplots(len(hs), len(synths), squeeze=False, sharex=True)
    for i, h in enumerate(hs):
        for j, label in enumerate(synths):
            ax = axes[i][j]
            g = frame[(frame["hamming_threshold"] == h) & (frame["synthesizer"] == label)]
            stats = g.groupby("fraction")[list(columns)].agg(["mean", "std"]).fillna(0.0)
            x = stats.index.to_numpy()
            for col, lab, style in zip(columns, labels, styles, strict=True):
                ax.errorbar(x, stats[(col, "mean")], yerr=stats[(col, "std")], label=lab,
                            capsize=2, ms=4, lw=1.2, **style)
            if scale == "F1":
                xs = np.linspace(x.min(), x.max(), 50)
                ax.plot(xs, 2 * xs / (1 + xs), color="gray", lw=0.8, label="naive F1 at n/N")
            else:
                ax.axhline(ACCEPTABLE_M, color="crimson", lw=0.8, ls="--", label="M = 0.2")
            ax.set_title(f"{label}, h = {h}", fontsize=9)
            if i == len(hs) - 1:
                ax.set_xlabel("sampling fraction n/N")
            if j == 0:
                ax.set_ylabel(scale)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Membership disclosure on Adult: actual vs partition-estimated {scale} "
                 "(mean +/- s.d. over seeds)", fontsize=10)
    return save_figure(fig, path)


def summarize(frame: pd.DataFrame, output: Path) -> list[Path]:
    """Write table.md, errors.md and the two plots into ``output``; return their paths."""
    errors = error_summary(frame)
    table = output / "table.md"
    table.write_text(
        "# Actual vs partition-estimated membership F1 on Adult (N = "
        f"{int(frame['population_size'].iloc[0]):,})\n\n"
        "Mean (s.d. over seeds). Actual: model trained on the whole sample, attack records "
        "drawn from the population. Estimated: partition method on the sample alone, with the "
        "attack's member share t = n/N or the customary t = 0.5; each M is computed at the t "
        "of its own F1.\n\n" + table2(frame) + "\n")
    err = output / "errors.md"
    err.write_text(
        "# Error of the partition estimate (estimate - actual), per Hamming threshold\n\n"
        "Over all (fraction, seed) settings of each synthesiser. 'same M <= 0.2 decision': "
        "share of settings where estimate and truth agree on acceptability.\n\n"
        + markdown_table(errors) + "\n")
    return [table, err, _curves(frame, output / "f1_vs_fraction.png", scale="F1"),
            _curves(frame, output / "m_vs_fraction.png", scale="M")]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0]) if args else Path(__file__).resolve().parent / "results"
    for path in summarize(pd.read_csv(output / "results.csv"), output):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
