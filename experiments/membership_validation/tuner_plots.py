"""The figures of the validation in the tuner's setting: estimated against true M, the error
by fraction, and the region where M can bind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.membership_validation.tuner_verdicts import (
    ACCEPTABLE_M,
    _color,
    _flag,
    _order,
    with_verdicts,
)
from tuner._common.figures import save_figure


def scatter(frame: pd.DataFrame, path: Path) -> Path:
    ok = frame[frame["status"].eq("ok")]
    qis = list(dict.fromkeys(ok["quasi_identifiers"]))
    hs = sorted(ok["hamming_threshold"].unique())
    synths = _order(ok)
    colors = {s: _color(i) for i, s in enumerate(synths)}
    markers = dict(zip(synths, ["o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h"] * 2,
                       strict=False))
    fig = Figure(figsize=(4.6 * len(hs), 4.2 * len(qis)), layout="tight")
    axes = fig.subplots(len(qis), len(hs), squeeze=False)
    for i, qi in enumerate(qis):
        for j, h in enumerate(hs):
            ax = axes[i][j]
            g = ok[ok["quasi_identifiers"].eq(qi) & ok["hamming_threshold"].eq(h)]
            lo = float(min(g["m_true"].min(), g["m_estimate"].min(), -0.1))
            ax.plot([lo, 1], [lo, 1], color="gray", lw=0.8)
            ax.axhline(ACCEPTABLE_M, color="crimson", lw=0.7, ls="--")
            ax.axvline(ACCEPTABLE_M, color="crimson", lw=0.7, ls="--")
            for s in synths:
                part = g[g["synthesizer"] == s]
                bind = _flag(part["can_bind"]).astype(bool)
                ax.scatter(part.loc[bind, "m_true"], part.loc[bind, "m_estimate"], s=18,
                           color=colors[s], marker=markers[s], label=s, alpha=0.8)
                ax.scatter(part.loc[~bind, "m_true"], part.loc[~bind, "m_estimate"], s=18,
                           facecolors="none", edgecolors=colors[s], marker=markers[s],
                           alpha=0.8)
            ax.set_title(f"QIs: {qi}, h = {h}", fontsize=9)
            ax.set_xlabel("true M (released data)")
            ax.set_ylabel("M estimated by the trial")
    axes[0][0].legend(fontsize=6, ncol=2, title="hollow: cannot bind", title_fontsize=6)
    fig.suptitle("The tuner's M against the truth on Adult (each point: one sample, seed)",
                 fontsize=10)
    return save_figure(fig, path)


def error_plot(frame: pd.DataFrame, path: Path, qi: str = "all") -> Path:
    ok = frame[frame["status"].eq("ok") & frame["quasi_identifiers"].eq(qi)]
    hs = sorted(ok["hamming_threshold"].unique())
    fig = Figure(figsize=(5.2 * len(hs), 4.0), layout="tight")
    axes = fig.subplots(1, len(hs), squeeze=False)[0]
    for ax, h in zip(axes, hs, strict=True):
        g = ok[ok["hamming_threshold"].eq(h)]
        for k, s in enumerate(_order(g)):
            stats = g[g["synthesizer"] == s].groupby("sample_fraction")["abs_error"].mean()
            ax.plot(stats.index, stats.to_numpy(), marker="o", ms=3, lw=1, label=s,
                    color=_color(k), ls="-" if k < 10 else "--")
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_xlabel("sampling fraction n/N (t = n_train/N = half of it)")
        ax.set_ylabel("mean |F1 estimated - F1 true|")
        ax.set_title(f"QIs: {qi}, h = {h}", fontsize=9)
    axes[0].legend(fontsize=6, ncol=2)
    fig.suptitle("Error of the trial's membership F1, by family and sample size", fontsize=10)
    return save_figure(fig, path)


def region_plot(frame: pd.DataFrame, path: Path, h: int = 0) -> Path:
    v = with_verdicts(frame)
    qis = list(dict.fromkeys(v["quasi_identifiers"]))
    synths = _order(v)
    fractions = sorted(v["sample_fraction"].unique())
    fig = Figure(figsize=(1.45 * len(fractions) * len(qis) + 2.5, 0.55 * len(synths) + 1.8),
                 layout="constrained")
    axes = fig.subplots(1, len(qis), squeeze=False)[0]
    image = None
    for ax, qi in zip(axes, qis, strict=True):
        g = v[v["quasi_identifiers"].eq(qi) & v["hamming_threshold"].eq(h)]
        grid = np.full((len(synths), len(fractions)), np.nan)
        for i, s in enumerate(synths):
            for j, f in enumerate(fractions):
                c = g[(g["synthesizer"] == s) & (g["sample_fraction"] == f)]
                if c.empty:
                    continue
                grid[i, j] = c["m_true_sampled"].mean()
                est = c["m_estimate"].mean()
                tru = c["m_true"].mean()
                gate = ("C" if c["copies_fail"].mean() > 0.5 else "") + (
                    "D" if c["dcr_fail"].mean() > 0.5 else "")
                text = ("removed all" if not c["usable"].any()
                        else f"{est:.2f}/{tru:.2f}") + (f"\n{gate}" if gate else "") + (
                    "\n(no bind)" if c["warned"].mean() > 0.5 else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=6)
        image = ax.imshow(grid, cmap="Reds", vmin=-0.2, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(fractions)), [f"{f:g}" for f in fractions], fontsize=7)
        ax.set_yticks(range(len(synths)), synths, fontsize=7)
        ax.set_xlabel("sampling fraction n/N")
        ax.set_title(f"QIs: {qi}, h = {h}", fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="true M, data as sampled")
    fig.suptitle("Where M fails: cell text = M estimated / true M of the released data; "
                 "C = copies gate fails, D = DCR gate fails", fontsize=9)
    return save_figure(fig, path)
