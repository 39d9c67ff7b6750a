"""Plots people would rather look at than tables.

Each function returns a matplotlib :class:`~matplotlib.figure.Figure` made without pyplot, so
no backend or other global state is touched; :func:`save_figure` writes one as PNG, and the
tracker logs one to MLflow as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

DPI = 110


def figure(**kwargs: Any) -> tuple[Figure, Any]:
    """A figure with one axes (``Figure.subplots``), laid out tightly when saved."""
    fig = Figure(layout="tight", dpi=DPI, **kwargs)
    return fig, fig.subplots()


def save_figure(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI)
    return path


def risk_utility(trials: pd.DataFrame, *, threshold: float = 0.2,
                 title: str = "Risk-utility map (filled: all constraints met)") -> Figure:
    """U against M for every completed trial, the M = threshold line, feasible trials filled."""
    fig, ax = figure(figsize=(6.5, 4.5))
    for name, group in trials.groupby("synthesizer"):
        feas = group["feasible"].astype(bool)
        pts = ax.scatter(group.loc[feas, "m"], group.loc[feas, "utility"], label=f"{name}", s=36)
        ax.scatter(group.loc[~feas, "m"], group.loc[~feas, "utility"], s=36,
                   facecolors="none", edgecolors=pts.get_facecolor())
    ax.axvline(threshold, color="crimson", ls="--", lw=1, label=f"M = {threshold}")
    ax.set_xlabel("membership disclosure M (relative F1)")
    ax.set_ylabel("utility U")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


def history(trials: pd.DataFrame) -> Figure:
    """Loss per trial, and the best feasible loss so far."""
    fig, ax = figure(figsize=(6.5, 4))
    t = trials.sort_values("number")
    ax.scatter(t["number"], t["loss"], c=np.where(t["feasible"], "tab:blue", "lightgray"), s=24,
               label="trial loss (gray: infeasible)")
    best = t["loss"].where(t["feasible"]).cummin()
    ax.step(t["number"], best, where="post", color="tab:green", label="best feasible")
    ax.set_xlabel("trial")
    ax.set_ylabel("risk-utility loss (lower is better)")
    ax.legend(fontsize=8)
    return fig


def f1_curve(f1_by_threshold: tuple[float, ...], f_naive: float, chosen: int) -> Figure:
    """The adversary's F1 for every Hamming threshold h, against the naive F1."""
    fig, ax = figure(figsize=(6, 4))
    hs = np.arange(len(f1_by_threshold))
    ax.plot(hs, f1_by_threshold, marker="o", label="F1 of the partition attack")
    ax.axhline(f_naive, color="gray", ls="--", label=f"naive F1 = {f_naive:.3f}")
    ax.axvline(chosen, color="crimson", lw=1, ls=":", label=f"h used = {chosen}")
    ax.set_xlabel("Hamming threshold h")
    ax.set_ylabel("F1")
    ax.legend(fontsize=8)
    return fig


def cap_scatter(cap_original: np.ndarray, cap_synthetic: np.ndarray, target: str, *,
                seed: int = 0) -> Figure:
    """Record-level CAP under the original vs under the synthetic data (jittered)."""
    rng = np.random.default_rng(seed)
    jitter = lambda n: rng.uniform(-0.01, 0.01, n)  # noqa: E731
    fig, ax = figure(figsize=(5, 5))
    n = cap_original.size
    ax.scatter(cap_original + jitter(n), cap_synthetic + jitter(n), s=4, alpha=0.25)
    ax.plot([0, 1], [0, 1], color="crimson", lw=1, ls="--", label="same risk")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("CAP under the original data")
    ax.set_ylabel("CAP under the synthetic data")
    ax.set_title(f"Record-level CAP, target {target!r}")
    ax.legend(fontsize=8)
    return fig


def rank_correlations(frame: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlations of every column pair (categories as their integer codes, in the
    order of first appearance): an aggregate, never a record."""
    coded = pd.DataFrame({c: pd.factorize(frame[c], sort=True)[0] if not
                          pd.api.types.is_numeric_dtype(frame[c]) else frame[c]
                          for c in frame.columns})
    return coded.corr(method="spearman")


def correlations(real: pd.DataFrame, synthetic: pd.DataFrame) -> Figure:
    """Pairwise rank correlations of the training data and of the release, side by side."""
    fig = Figure(figsize=(11, 5), layout="constrained", dpi=DPI)
    axes = fig.subplots(1, 2)
    for ax, (title, frame) in zip(axes, (("training data", real), ("release", synthetic)),
                                  strict=True):
        corr = rank_correlations(frame)
        image = ax.imshow(corr.to_numpy(), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(len(corr)), corr.columns, rotation=90, fontsize=7)
        ax.set_yticks(range(len(corr)), corr.columns, fontsize=7)
        ax.set_title(f"Rank correlations: {title}", fontsize=9)
    fig.colorbar(image, ax=list(axes), shrink=0.8)
    return fig


def column_scores(scores: dict[str, float], title: str) -> Figure:
    """One horizontal bar per column (or pair): its utility score in [0, 1]."""
    fig, ax = figure(figsize=(6.5, 0.28 * len(scores) + 1.2))
    names = list(scores)
    ax.barh(names, [scores[n] for n in names], color="tab:blue")
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel("score (1 = the release reproduces the training data's)")
    ax.set_title(title, fontsize=9)
    return fig
