"""The release's plots, people would rather look at than tables: the membership attack's F1
curve, CAP scatter, correlations, per-column scores, marginals, the audit's AUCs and the
neural trials' learning curves.

Made without pyplot (``tuner._common.figures``); the risk-utility map is the study's
(:func:`tuner.search.risk_utility_plot`), drawn in the release folder too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import dates as mdates
from matplotlib import ticker
from matplotlib.figure import Figure

from tuner._common import attrs
from tuner._common.figures import DPI, figure, save_figure


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


def cap_scatter(cap_train: np.ndarray, cap_synthetic: np.ndarray, target: str, *,
                seed: int = 0) -> Figure:
    """Record-level CAP under the original vs under the synthetic data (jittered)."""
    rng = np.random.default_rng(seed)
    jitter = lambda n: rng.uniform(-0.01, 0.01, n)  # noqa: E731
    fig, ax = figure(figsize=(5, 5))
    n = cap_train.size
    ax.scatter(cap_train + jitter(n), cap_synthetic + jitter(n), s=4, alpha=0.25)
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


def correlations(train: pd.DataFrame, synthetic: pd.DataFrame) -> Figure:
    """Pairwise rank correlations of the training data and of the release, side by side."""
    fig = Figure(figsize=(11, 5), layout="constrained", dpi=DPI)
    axes = fig.subplots(1, 2)
    for ax, (title, frame) in zip(axes, (("training data", train), ("release", synthetic)),
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


MIN_COUNT = 10  # a category or bin with fewer training records is never shown on its own
OTHER = "other"
DAYS_PER_YEAR = 365.2425  # a date column's histogram counts decimal years of this length


@dataclasses.dataclass(frozen=True)
class Marginal:
    """One column's distribution in the training data and in the release, as shares.

    ``labels`` name the bars (categories, with ``"other"`` last when some were pooled), or,
    for a histogram, ``edges`` bound its bins. ``pooled`` counts the categories pooled into
    ``"other"`` (those with fewer than ``min_count`` training records, and those beyond the
    most frequent ``max_bars``), or the bins drawn empty for the training data (fewer than
    ``min_count`` training records each): no category, value or bin with fewer training
    records is ever drawn on its own."""

    column: str
    kind: str  # "bars" or "histogram"
    labels: tuple[str, ...]
    edges: tuple[float, ...]
    train: tuple[float, ...]
    synthetic: tuple[float, ...]
    pooled: int
    missing_real: float
    missing_synthetic: float
    score: float
    axis: str = ""  # what a histogram's edges count: "year" for a date column (decimal years,
    # drawn on a calendar axis)


def _label(value: Any) -> str:
    text = f"{value:g}" if isinstance(value, float | np.floating) else str(value)
    return text if len(text) <= 16 else text[:15] + "…"


def _bars(train: pd.Series, synthetic: pd.Series, min_count: int,
          max_bars: int) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, int]:
    counts = train.value_counts()
    counts = counts[counts > 0]  # a pandas categorical lists its unused categories too
    shown = counts[counts >= min_count].sort_values(ascending=False).index[:max_bars]
    if pd.api.types.is_numeric_dtype(train) and not pd.api.types.is_bool_dtype(train):
        shown = sorted(shown)
    pooled = len(counts) - len(shown)
    labels = [_label(v) for v in shown]
    real_n = [counts.get(v, 0) for v in shown]
    syn_counts = synthetic.value_counts()
    syn_n = [syn_counts.get(v, 0) for v in shown]
    rest_real, rest_syn = len(train) - sum(real_n), len(synthetic) - sum(syn_n)
    if rest_real or rest_syn:
        labels.append(OTHER)
        real_n.append(rest_real)
        syn_n.append(rest_syn)
    return (tuple(labels), np.asarray(real_n, float) / max(len(train), 1),
            np.asarray(syn_n, float) / max(len(synthetic), 1), pooled)


def _histogram(train: pd.Series, synthetic: pd.Series, min_count: int,
               bins: int) -> tuple[tuple[float, ...], np.ndarray, np.ndarray, int]:
    """Equal-width bins over the training data's 1st to 99th percentile; values beyond fall
    in the outer bins (so no minimum or maximum is drawn)."""
    def as_float(x: pd.Series) -> pd.Series:  # dates as decimal years
        if pd.api.types.is_datetime64_any_dtype(x):
            epoch = pd.Timestamp("1970-01-01", tz=x.dt.tz)
            return (x - epoch) / pd.Timedelta(days=DAYS_PER_YEAR) + 1970.0
        return x.astype(float)

    r, s = as_float(train), as_float(synthetic)
    low, high = np.quantile(r, [0.01, 0.99])
    if high <= low:
        high = low + 1.0
    edges = np.linspace(low, high, bins + 1)
    count = lambda x: np.bincount(  # noqa: E731
        np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1), minlength=bins)
    real_n, syn_n = count(r.to_numpy()).astype(float), count(s.to_numpy()).astype(float)
    small = (real_n > 0) & (real_n < min_count)
    real_n[small] = 0.0
    return (tuple(edges), real_n / max(len(r), 1), syn_n / max(len(s), 1), int(small.sum()))


def marginal_tables(train: pd.DataFrame, synthetic: pd.DataFrame, scores: dict[str, float], *,
                    max_columns: int = 12, min_count: int = MIN_COUNT, bins: int = 20,
                    max_bars: int = 12) -> list[Marginal]:
    """The ``max_columns`` columns with the lowest ``scores`` (worst first; unscored columns
    last), each as shares of records: bars for categories and numbers with few values, a
    histogram for the other numbers and dates. Aggregates only, small cells suppressed."""
    from tuner.data import sdtype

    if min_count < 1 or max_columns < 1:
        raise ValueError(f"min_count and max_columns must be >= 1, got "
                         f"min_count={min_count}, max_columns={max_columns}")
    order = sorted(train.columns, key=lambda c: (scores.get(str(c), np.inf), str(c)))
    tables = []
    for column in order[:max_columns]:
        r, s = train[column].dropna(), synthetic[column].dropna()
        kind = sdtype(train[column])
        if kind in ("numerical", "datetime") and len(r):
            edges, rv, sv, pooled = _histogram(r, s, min_count, bins)
            labels: tuple[str, ...] = ()
        else:
            labels, rv, sv, pooled = _bars(r, s, min_count, max_bars)
            edges = ()
        tables.append(Marginal(
            str(column), "histogram" if edges else "bars", labels, edges, tuple(rv), tuple(sv),
            pooled, float(train[column].isna().mean()) if len(train) else 0.0,
            float(synthetic[column].isna().mean()) if len(synthetic) else 0.0,
            float(scores.get(str(column), np.nan)),
            "year" if kind == "datetime" and edges else ""))
    return tables


def marginals(tables: list[Marginal], *, per_row: int = 3) -> Figure:
    """A grid of the columns' distributions: training data and release side by side."""
    per_row = max(1, min(per_row, len(tables)))
    rows = max(1, -(-len(tables) // per_row))
    fig = Figure(figsize=(4.2 * per_row, 3.0 * rows), layout="constrained", dpi=DPI)
    axes = np.atleast_1d(fig.subplots(rows, per_row)).ravel()
    for ax, t in zip(axes, tables, strict=False):
        if t.kind == "histogram":
            # a date column's edges are decimal years: drawn on a calendar axis (matplotlib's
            # dates count days from 1970-01-01), its ticks dates the locator chooses
            edges = (np.asarray(t.edges) - 1970.0) * DAYS_PER_YEAR if t.axis else t.edges
            ax.stairs(t.train, edges, fill=True, color="tab:blue", alpha=0.5,
                      label="training")
            ax.stairs(t.synthetic, edges, color="tab:orange", lw=1.5, label="release")
            if t.axis:
                locator = mdates.AutoDateLocator(maxticks=5)
                ax.xaxis.set_major_locator(locator)
                ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
                ax.set_xlabel("date", fontsize=7)
        else:
            x = np.arange(len(t.labels))
            ax.bar(x - 0.2, t.train, width=0.4, color="tab:blue", label="training")
            ax.bar(x + 0.2, t.synthetic, width=0.4, color="tab:orange", label="release")
            crowded = sum(map(len, t.labels)) > 30
            ax.set_xticks(x, t.labels, rotation=45 if crowded else 0,
                          ha="right" if crowded else "center", fontsize=7)
        note = f"score {t.score:.2f}" if np.isfinite(t.score) else "not scored"
        if t.missing_real or t.missing_synthetic:
            note += f", missing {t.missing_real:.0%} / {t.missing_synthetic:.0%}"
        ax.set_title(f"{t.column} ({note})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylabel("share of records", fontsize=7)
    for ax in axes[len(tables):]:
        ax.set_visible(False)
    if tables:
        axes[0].legend(fontsize=7)
    return fig


def save_marginals(train: pd.DataFrame, synthetic: pd.DataFrame, scores: dict[str, float],
                   path: Path, *, max_columns: int = 12, min_count: int = MIN_COUNT,
                   max_bars: int = 12) -> dict[str, Any]:
    """:func:`marginals` of :func:`marginal_tables` saved at ``path``; what the report says
    about it (columns shown, how many categories or bins were pooled or suppressed: counts,
    never values)."""
    tables = marginal_tables(train, synthetic, scores, max_columns=max_columns,
                             min_count=min_count, max_bars=max_bars)
    save_figure(marginals(tables), path)
    return {"file": path.name, "min_count": min_count, "max_bars": max_bars,
            "columns_total": len(train.columns), "columns": [t.column for t in tables],
            "pooled_categories": {t.column: t.pooled for t in tables
                                  if t.kind == "bars" and t.pooled},
            "suppressed_bins": {t.column: t.pooled for t in tables
                                if t.kind == "histogram" and t.pooled}}


def audit_aucs(membership: dict[str, Any]) -> Figure:
    """The membership audit's per-target AUCs of each attack on the test half of its shadow
    runs, each attack's sorted from the largest: how many people an attack tells apart and how
    well, never which (sorted, the k-th bar is not the k-th most vulnerable person; the
    per-person figures are the custodian's, ``seeds.json``). 0.5 is guessing."""
    aucs = membership["attack_auc"]
    k = len(membership["target_auc"])
    fig, ax = figure(figsize=(max(6.0, 0.35 * k + 2), 3.6))
    width = 0.8 / max(1, len(aucs))
    for i, (attack, values) in enumerate(aucs.items()):
        ranked = np.sort(np.nan_to_num(np.asarray(values, float), nan=0.0))[::-1]
        ax.bar(np.arange(k) + (i - (len(aucs) - 1) / 2) * width, ranked, width, label=attack)
    ax.axhline(0.5, color="grey", ls="--", lw=1, label="guessing")
    ax.set_xticks(np.arange(k), [str(i + 1) for i in range(k)], fontsize=7)
    ax.set_xlabel("targets, each attack's AUCs sorted from the largest (not by person)")
    ax.set_ylabel("AUC (test half of the shadow runs)")
    ax.set_ylim(0, 1.02)
    ax.set_title("Membership audit: each attack's per-target AUCs, sorted", fontsize=10)
    ax.legend(fontsize=7, ncol=4, loc="lower right")
    return fig


def learning_curves(curves: list[dict[str, Any]]) -> Figure:
    """The neural trials' loss at each checkpoint against its epochs (issue 46): one line per
    trial, coloured by family; solid where the trial completed, dashed where it was pruned or
    stopped early; a filled point where the checkpoint met every constraint, a cross where it
    did not; the released trial's line bold, the checkpoint it releases circled. A lower loss
    is better (-w(M) U, El Emam et al. 2022). Each entry of ``curves``: ``number``,
    ``family``, ``state``, ``released`` (bool), ``epochs`` (the released checkpoint, or None)
    and ``points`` (the trial's ``learning_curve`` attribute)."""
    fig, ax = figure(figsize=(7, 4.2))
    families = sorted({c["family"] for c in curves})
    colour = {f: f"C{i}" for i, f in enumerate(families)}
    for c in curves:
        points = [p for p in c["points"] if "loss" in p]
        if not points:
            continue
        x = np.array([p["epochs"] for p in points], float)
        y = np.array([p["loss"] for p in points], float)
        ok = np.array([bool(p["feasible"]) for p in points])
        style = dict(color=colour[c["family"]], lw=2.4 if c["released"] else 1.0,
                     ls="-" if c["state"] == "COMPLETE" else "--",
                     alpha=1.0 if c["released"] else 0.6)
        ax.plot(x, y, **style)
        ax.scatter(x[ok], y[ok], color=colour[c["family"]], s=16, zorder=3)
        ax.scatter(x[~ok], y[~ok], color=colour[c["family"]], marker="x", s=16, zorder=3)
        if c["released"] and c.get("epochs") in set(x.astype(int)):
            at = int(np.flatnonzero(x.astype(int) == c["epochs"])[0])
            ax.scatter([x[at]], [y[at]], s=140, facecolors="none", edgecolors="crimson",
                       lw=1.6, zorder=4, label=f"released: trial {c['number']} at "
                                               f"{c['epochs']} epochs")
    for f in families:
        ax.plot([], [], color=colour[f], label=f)
    ax.plot([], [], color="grey", ls="--", label="pruned or stopped")
    ax.scatter([], [], color="grey", marker="x", s=16, label="over a risk limit")
    ax.set_xscale("log")
    steps = sorted({int(p["epochs"]) for c in curves for p in c["points"] if "loss" in p})
    ax.set_xticks(steps, [str(e) for e in steps])  # the checkpoints, not powers of ten
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("epochs (checkpoints)")
    ax.set_ylabel("risk-utility loss (lower is better)")
    ax.set_title(f"Learning curves of the {len(curves)} neural trials", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return fig


def curves_of(trials: list[Any], released: int) -> list[dict[str, Any]]:
    """The entries :func:`learning_curves` draws, from a study's trials (Optuna's frozen
    trials; those scored at checkpoints hold a ``learning_curve`` attribute) and the number of
    the released trial."""
    out = []
    for t in trials:
        points = t.user_attrs.get(attrs.CURVE)
        if points:
            out.append({"number": t.number, "family": str(t.params.get("synthesizer", "?")),
                        "state": t.state.name, "released": t.number == released,
                        "epochs": t.user_attrs.get(attrs.EPOCHS), "points": points})
    return out
