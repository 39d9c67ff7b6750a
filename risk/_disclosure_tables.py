"""Result objects and the table computations of :mod:`risk.disclosure` (synthpop's measures).

The key x target tables of synthpop's ``disclosure()`` are kept sparse: one entry per (key,
target) cell seen in the original or the synthetic set, counted by ``np.unique``/``bincount``.
Definitions, exclusions and the places where synthpop's code departs from them: see
:mod:`risk.disclosure`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from risk._disclosure_coding import _Variable
from risk._result import Result

TABLES = ("original", "synthetic", "Dorig", "Dsyn", "iS", "DiS", "DiSCO", "DiSDiO")


@dataclasses.dataclass(frozen=True)
class ExclusionCounts(Result):
    """Records of one table left out, by synthpop's reasons, and the records remaining."""

    excluded_target: int
    missing_target: int
    missing_in_keys: int
    set_to_exclude: int
    over_denom_lim: int
    remaining: int


@dataclasses.dataclass(frozen=True)
class Exclusions(Result):
    """synthpop's ``Nexclusions``: one :class:`ExclusionCounts` per table (rows of the R output)."""

    original: ExclusionCounts
    synthetic: ExclusionCounts
    Dorig: ExclusionCounts
    Dsyn: ExclusionCounts
    iS: ExclusionCounts
    DiS: ExclusionCounts
    DiSCO: ExclusionCounts
    DiSDiO: ExclusionCounts


@dataclasses.dataclass(frozen=True)
class OneWayCheck(Result):
    """synthpop's ``check_1way``: a target level that makes up most of the DiSCO records.

    Flagged when ``nLevelDis > thresh_1way[0]`` and ``PctLevelDis > thresh_1way[1]``: such
    disclosure may be no more than background knowledge of a common level.
    """

    Level: str
    All: int
    PctLevelAll: float
    totalDisclosive: int
    nLevelDis: int
    PctLevelDis: float


@dataclasses.dataclass(frozen=True)
class TwoWayCheck(Result):
    """One row of synthpop's ``check_2way``: a (target level, key level) pair behind DiSCO.

    ``npairs``: DiSCO records in cells with more than ``thresh_2way[0]`` records carrying this
    pair; ``key_total``: original records with this key level; ``key_target_total``: those
    with this target level too; flagged when ``PctTargetKeyLevel`` exceeds ``thresh_2way[1]``.
    """

    target_key_levs: str
    npairs: int
    key: str
    key_target_total: int
    key_total: int
    PctTargetKeyLevel: float
    target_lev: str
    key_lev: str


@dataclasses.dataclass(frozen=True)
class _SynthpopMeasures(Result):
    """synthpop's 17 ``disclosure()`` measures, in its order and with its names (percent):
    the fields that :class:`DisclosureSetResult` and :class:`DisclosureResult` share."""

    UiO: float
    UiS: float
    UiOiS: float
    repU: float
    Dorig: float
    Dsyn: float
    iS: float
    DiS: float
    DiSCO: float
    DiSDiO: float
    max_denom: float
    mean_denom: float
    baseCAPd: float
    CAPd: float
    CAPs: float
    DCAP: float
    TCAP: float


MEASURES = tuple(f.name for f in dataclasses.fields(_SynthpopMeasures))


@dataclasses.dataclass(frozen=True)
class DisclosureSetResult(_SynthpopMeasures):
    """synthpop's ``disclosure()`` measures (percentages) against one synthetic data set."""

    n_synthetic: int
    check_1way: OneWayCheck | None
    check_2way: tuple[TwoWayCheck, ...]
    exclusions: Exclusions


@dataclasses.dataclass(frozen=True)
class DisclosureResult(_SynthpopMeasures):
    """Outcome of :func:`disclosure`: each measure's mean over the m sets, each set in ``per_set``.

    Names and scale (percent) are synthpop's (see the module docstring for the definitions).
    ``check1``/``check2`` are synthpop's one-line flags ("" when nothing is flagged; the last
    set that flags wins, as in R). ``keys`` are in the original's column order (synthpop's).
    ``grouped``: the columns cut into groups, with their labels in ``group_labels``.
    """

    check1: str
    check2: str
    n_train: int
    n_sets: int
    keys: tuple[str, ...]
    target: str
    denom_lim: int
    exclude_ov_denom_lim: bool
    not_targetlev: tuple[str, ...]
    use_target_na: bool
    use_keys_na: tuple[bool, ...]
    excluded_pairs: tuple[str, ...]
    grouped: tuple[str, ...]
    group_labels: tuple[str, ...]
    thresh_1way: tuple[float, float]
    thresh_2way: tuple[float, float]
    per_set: tuple[DisclosureSetResult, ...]



@dataclasses.dataclass(frozen=True)
class _Setup:
    keys: list[str]
    target: _Variable
    key_vars: list[_Variable]
    key_ids: list[np.ndarray]  # per frame: combined key id (comparable across frames)
    struct: list[np.ndarray]  # per frame: first exclusion reason of each record (0 = none)
    options: dict[str, Any]


def _record_reasons(target: _Variable, key_vars: list[_Variable], frame: int,
                    not_target: list[int], drop_target_na: bool, na_keys: list[int],
                    pairs: list[tuple[int, int, int]]) -> np.ndarray:
    """synthpop's exclusion reasons 1-4 per record of ``frame`` (the first one that applies)."""
    t = target.codes[frame]
    masks = [
        np.isin(t, not_target),
        (t == target.missing) if drop_target_na else np.zeros(t.size, dtype=bool),
        np.zeros(t.size, dtype=bool),
        np.zeros(t.size, dtype=bool),
    ]
    for i in na_keys:
        masks[2] |= key_vars[i].codes[frame] == key_vars[i].missing
    for i, key_code, target_code in pairs:
        masks[3] |= (key_vars[i].codes[frame] == key_code) & (t == target_code)
    return np.select(masks, [1, 2, 3, 4], 0).astype(np.int64)


def _evaluate(setup: _Setup, j: int) -> DisclosureSetResult:
    """All measures of the original (frame 0) against synthetic frame ``j``."""
    opts = setup.options
    n_d, n_s = setup.target.codes[0].size, setup.target.codes[j].size
    n_t = len(setup.target.labels)
    # cells of the key x target table present in either frame; key ids made dense first
    key_all = np.concatenate([setup.key_ids[0], setup.key_ids[j]])
    key_dense = np.unique(key_all, return_inverse=True)[1].reshape(-1)
    t_all = np.concatenate([setup.target.codes[0], setup.target.codes[j]])
    cells, first, inv = np.unique(key_dense * n_t + t_all, return_index=True,
                                  return_inverse=True)
    inv = inv.reshape(-1)
    n_cells = cells.size
    d = np.bincount(inv[:n_d], minlength=n_cells)
    s = np.bincount(inv[n_d:], minlength=n_cells)
    cell_t = cells % n_t
    kinv = np.unique(cells // n_t, return_inverse=True)[1].reshape(-1)
    n_keys = int(kinv.max()) + 1

    def by_key(x: np.ndarray) -> np.ndarray:
        return np.bincount(kinv, weights=x, minlength=n_keys)

    d_key, s_key = by_key(d)[kinv], by_key(s)[kinv]
    one_d = (d > 0) & (d == d_key)  # p^d_kt = 1
    one_s = (s > 0) & (s == s_key)  # p^s_kt = 1
    in_s = s_key > 0
    any_one_s = by_key(one_s)[kinv] > 0
    tables = {
        "original": d, "synthetic": s, "Dorig": d * one_d, "Dsyn": s * one_s,
        "iS": d * in_s, "DiS": d * any_one_s, "DiSCO": d * one_s, "DiSDiO": d * one_s * one_d,
    }
    reasons = np.concatenate([setup.struct[0], setup.struct[j]])[first]
    kept: dict[str, np.ndarray] = {}
    counts: dict[str, ExclusionCounts] = {}
    for name, table in tables.items():
        table = table.astype(np.int64)
        left = np.where(reasons > 0, 0, table)
        over = (left > opts["denom_lim"]) & opts["exclude_ov_denom_lim"]
        kept[name] = np.where(over, 0, left)
        by_reason = np.bincount(reasons, weights=table, minlength=5).astype(np.int64)
        excluded, missing_target, missing_keys, set_to_exclude = (int(c) for c in by_reason[1:])
        counts[name] = ExclusionCounts(
            excluded_target=excluded, missing_target=missing_target,
            missing_in_keys=missing_keys, set_to_exclude=set_to_exclude,
            over_denom_lim=int(left[over].sum()), remaining=int(kept[name].sum()),
        )

    kd, ks = by_key(kept["original"]), by_key(kept["synthetic"])
    syn_keys = by_key(s) > 0  # keys of the synthetic data before the exclusions
    pct_d, pct_s = 100.0 / n_d, 100.0 / n_s
    disco = kept["DiSCO"]
    with np.errstate(divide="ignore", invalid="ignore"):
        p_d = np.where(kd[kinv] > 0, kept["original"] / kd[kinv], 0.0)
        p_s = np.where(ks[kinv] > 0, kept["synthetic"] / ks[kinv], 0.0)
        tcap = np.float64(disco.sum()) / np.float64(kd[ks > 0].sum()) * 100.0
    target_counts = np.bincount(setup.target.codes[0], minlength=n_t)
    values = dict(
        UiO=np.sum(kd == 1) * pct_d,
        UiS=np.sum(ks == 1) * pct_s,
        UiOiS=np.sum((kd == 1) & syn_keys) * pct_d,
        repU=np.sum((kd == 1) & (ks == 1)) * pct_d,
        Dorig=kept["Dorig"].sum() * pct_d,
        Dsyn=kept["Dsyn"].sum() * pct_s,
        iS=kept["iS"].sum() * pct_d,
        DiS=kept["DiS"].sum() * pct_d,
        DiSCO=disco.sum() * pct_d,
        DiSDiO=kept["DiSDiO"].sum() * pct_d,
        max_denom=disco.max(initial=0),
        mean_denom=disco[disco > 0].mean() if (disco > 0).any() else math.nan,
        baseCAPd=np.sum((target_counts / n_d) ** 2) * 100.0,
        CAPd=np.sum(p_d**2 * kd[kinv]) * pct_d,
        CAPs=np.sum(p_s**2 * ks[kinv]) * pct_s,
        DCAP=np.sum(p_s * kept["original"]) * pct_d,
        TCAP=tcap,
    )
    cell_keys = [np.concatenate([v.codes[0], v.codes[j]])[first] for v in setup.key_vars]
    return DisclosureSetResult(
        **{k: float(v) for k, v in values.items()},
        n_synthetic=n_s,
        check_1way=_check_1way(setup, cell_t, kept["original"], disco),
        check_2way=_check_2way(setup, cell_t, cell_keys, disco),
        exclusions=Exclusions(**counts),
    )


def _check_1way(setup: _Setup, cell_t: np.ndarray, kept_d: np.ndarray,
                disco: np.ndarray) -> OneWayCheck | None:
    n_t = len(setup.target.labels)
    per_target = np.bincount(cell_t, weights=kept_d, minlength=n_t)
    dis_target = np.bincount(cell_t, weights=disco, minlength=n_t)
    total_dis = dis_target.sum()
    level = int(np.argmax(dis_target))  # first of the largest, as R's stable sort
    n_level = dis_target[level]
    pct = n_level / total_dis * 100.0 if total_dis > 0 else math.nan
    low, high = setup.options["thresh_1way"]
    if not (n_level > low and pct > high):
        return None
    return OneWayCheck(
        Level=setup.target.labels[level], All=int(per_target.sum()),
        PctLevelAll=float(per_target[level] / per_target.sum() * 100.0),
        totalDisclosive=int(total_dis), nLevelDis=int(n_level), PctLevelDis=float(pct),
    )


def _check_2way(setup: _Setup, cell_t: np.ndarray, cell_keys: list[np.ndarray],
                disco: np.ndarray) -> tuple[TwoWayCheck, ...]:
    low, high = setup.options["thresh_2way"]
    big = disco > low
    if not big.any():
        return ()
    target = setup.target
    n_t = len(target.labels)
    t_orig = target.codes[0]
    rows = []
    for pos, (name, var) in enumerate(zip(setup.keys, setup.key_vars, strict=True)):
        n_k = len(var.labels)
        pair = cell_keys[pos][big] * n_t + cell_t[big]
        npairs = np.bincount(pair, weights=disco[big], minlength=n_k * n_t)
        key_total = np.bincount(var.codes[0], minlength=n_k)
        key_target = np.bincount(var.codes[0] * n_t + t_orig, minlength=n_k * n_t)
        for p in np.flatnonzero(npairs):
            k_code, t_code = divmod(int(p), n_t)
            pct = key_target[p] * 100.0 / key_total[k_code]
            if pct > high:
                t_lab, k_lab = target.labels[t_code], var.labels[k_code]
                rows.append(TwoWayCheck(
                    target_key_levs=f"{t_lab}|{k_lab}", npairs=int(npairs[p]), key=name,
                    key_target_total=int(key_target[p]), key_total=int(key_total[k_code]),
                    PctTargetKeyLevel=float(pct), target_lev=t_lab, key_lev=k_lab,
                ))
    order = {name: i for i, name in enumerate(setup.keys)}
    rows.sort(key=lambda r: (-r.npairs, order[r.key], r.target_key_levs))
    return tuple(rows)
