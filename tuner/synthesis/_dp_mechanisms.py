"""MST and AIM: differentially private synthesis from noisy marginals, on private-pgm (``mbi``).

References: R. McKenna, G. Miklau, D. Sheldon, "Winning the NIST Contest: A scalable and general
approach to differentially private synthetic data", Journal of Privacy and Confidentiality
11(3), 2021 (MST); R. McKenna, B. Mullins, D. Sheldon, G. Miklau, "AIM: An Adaptive and
Iterative Mechanism for Differentially Private Synthetic Data", PVLDB 15(11), 2022 (AIM);
R. McKenna, D. Sheldon, G. Miklau, "Graphical-model based estimation and inference for
differential privacy", ICML 2019 (Private-PGM, the ``mbi`` package: estimating a graphical model
from noisy marginals and sampling records from it).

Both work on a table of codes (every column discrete, ``Domain`` sizes known) and account in
zero-concentrated DP (Bun & Steinke, TCC 2016): Gaussian noise of standard deviation ``sigma``
on a vector of counts (L2 sensitivity 1 under adding or removing one record) costs
``1 / (2 sigma^2)``; the exponential mechanism with parameter ``eps`` costs ``eps^2 / 8``
(Cesar & Rogers, "Bounding, concentrating, and truncating: unifying privacy loss composition
for data analytics", ALT 2021). ``rho`` comes from the target ``(epsilon, delta)`` by the
conversion of Canonne, Kamath & Steinke ("The discrete Gaussian for differential privacy",
NeurIPS 2020, Corollary 13), see :func:`cdp_rho`. Each mechanism returns the ``rho`` it spent,
which never exceeds the budget.

The number of records is not used: the estimate of the total comes from the noisy counts.

Noise and selection draw from a seeded ``numpy.random.Generator``, so a trial can be made again
(the tuner's release does). That is floating-point Gaussian sampling, as in the authors' own
reference code, not the discrete, exactly-sampled noise of OpenDP (which cannot be seeded):
the guarantee holds up to the floating-point caveat of Mironov (CCS 2012).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import softmax

from tuner.errors import InputError

Clique = tuple[str, ...]


def cdp_delta(rho: float, epsilon: float) -> float:
    """The smallest ``delta`` for which ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    Canonne, Kamath & Steinke (2020), Corollary 13: ``delta = inf_{a > 1}
    exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a``; minimised over ``a`` in logs.
    """
    if rho < 0 or epsilon < 0:
        raise ValueError(f"rho >= 0 and epsilon >= 0 must hold, got ({rho=}, {epsilon=})")
    if rho == 0:
        return 0.0

    def log_delta(a: float) -> float:
        return (a - 1) * (a * rho - epsilon) + a * math.log1p(-1 / a) - math.log(a - 1)

    high = max((epsilon + 1) / (2 * rho), 2.0) + 2  # past the minimum of the quadratic term
    best = minimize_scalar(log_delta, bounds=(1 + 1e-9, high), method="bounded",
                           options={"xatol": 1e-10})
    return float(min(1.0, math.exp(min(best.fun, log_delta(high)))))


def cdp_rho(epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose ``rho``-zCDP implies ``(epsilon, delta)``-DP (bisection)."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"epsilon > 0 and 0 < delta < 1 must hold, got ({epsilon=}, "
                         f"{delta=})")
    low, high = 0.0, epsilon + 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if cdp_delta(mid, epsilon) <= delta:
            low = mid
        else:
            high = mid
    return low


@dataclasses.dataclass
class Fitted:
    """A graphical model estimated from noisy marginals and what producing it cost."""

    model: Any  # mbi.MarkovRandomField over the (possibly compressed) domain
    rho_spent: float
    cliques: list[Clique]  # the marginals measured (after the one-way ones)
    merged: dict[str, np.ndarray]  # MST's compression: column -> codes merged into its last


def dataset(codes: dict[str, np.ndarray], sizes: dict[str, int]) -> Any:
    """An ``mbi.Dataset`` of integer codes with the given domain sizes."""
    from mbi import Dataset, Domain

    return Dataset({k: np.asarray(v, dtype=np.int64) for k, v in codes.items()},
                   Domain(list(sizes), list(sizes.values())))


def _measure(data: Any, clique: Clique, sigma: float, rng: np.random.Generator) -> Any:
    from mbi import LinearMeasurement

    x = np.asarray(data.project(clique).datavector(), dtype=float)
    return LinearMeasurement(x + rng.normal(0.0, sigma, x.size), clique, sigma)


def _estimate(domain: Any, measurements: list[Any], total: float, iters: int,
              potentials: Any = None) -> Any:
    from mbi import estimation, marginal_oracles

    return estimation.mirror_descent(domain, measurements, known_total=total, iters=iters,
                                     potentials=potentials,
                                     marginal_oracle=marginal_oracles.message_passing_stable)


def _choose(quality: np.ndarray, epsilon: float, sensitivity: float,
            rng: np.random.Generator) -> int:
    """The exponential mechanism: index ``i`` with probability ~ exp(eps q_i / (2 sens))."""
    p = softmax(0.5 * epsilon / sensitivity * (quality - quality.max()))
    return int(rng.choice(quality.size, p=p))


def _total(measurements: list[Any]) -> float:
    """Inverse-variance weighted mean of the one-way noisy totals (post-processing, no cost)."""
    sums = np.array([float(np.sum(m.noisy_measurement)) for m in measurements])
    var = np.array([m.stddev**2 * np.size(m.noisy_measurement) for m in measurements])
    return max(1.0, float(np.sum(sums / var) / np.sum(1 / var)))


def _check(data: Any, rho: float) -> None:
    if len(data.domain.attrs) < 2:
        raise ValueError(f"MST and AIM need at least two columns, got {len(data.domain.attrs)}")
    if not rho > 0:
        raise ValueError(f"rho > 0 must hold, got {rho=}")


# ----------------------------------------------------------------------------------------- MST

def _compress(data: Any, oneway: list[Any]) -> tuple[Any, list[Any], dict[str, np.ndarray]]:
    """MST's domain compression: values with a noisy count below ``3 sigma`` merged into one.

    The merged cell's measurement is the sum of its noisy counts (variance ``m sigma^2``),
    weighted by ``1 / sqrt(m)`` in query and answer so the least-squares fit weighs it right.
    """
    import jax.numpy as jnp
    from mbi import LinearMeasurement

    codes, sizes, merged, measurements = {}, {}, {}, []
    for m in oneway:
        col = m.clique[0]
        y = np.asarray(m.noisy_measurement)
        keep = y >= 3 * m.stddev
        values = np.asarray(data.project((col,)).datavector()).size
        column = np.asarray(data.to_dict()[col])
        if keep.all() or keep.sum() < 2:
            codes[col], sizes[col] = column, values
            measurements.append(m)
            continue
        new = np.full(values, keep.sum(), dtype=np.int64)
        new[keep] = np.arange(keep.sum())
        codes[col], sizes[col] = new[column], int(keep.sum()) + 1
        merged[col] = np.flatnonzero(~keep)
        weight = np.ones(sizes[col])
        weight[-1] = 1 / math.sqrt((~keep).sum())
        answer = np.append(y[keep], y[~keep].sum()) * weight
        w = jnp.asarray(weight)
        measurements.append(LinearMeasurement(answer, (col,), m.stddev,
                                              query=lambda f, w=w: f.datavector() * w))
    return dataset(codes, sizes), measurements, merged


def _tree(data: Any, model: Any, rho: float, rng: np.random.Generator) -> tuple[list[Clique],
                                                                               float]:
    """A spanning tree of the columns, one edge at a time by the exponential mechanism.

    An edge's quality is how badly the model of the one-way marginals (independence) gets the
    pair's two-way marginal (L1 error, sensitivity 1); edges joining two components only.
    """
    attrs = list(data.domain.attrs)
    error = {}
    for a, b in itertools.combinations(attrs, 2):
        x = np.asarray(data.project((a, b)).datavector())
        error[a, b] = float(np.abs(x - np.asarray(model.project((a, b)).datavector())).sum())
    component = {a: a for a in attrs}

    def root(a: str) -> str:
        while component[a] != a:
            a = component[a]
        return a

    epsilon = math.sqrt(8 * rho / (len(attrs) - 1))
    edges: list[Clique] = []
    for _ in range(len(attrs) - 1):
        candidates = [e for e in error if root(e[0]) != root(e[1])]
        pick = candidates[_choose(np.array([error[e] for e in candidates]), epsilon, 1.0, rng)]
        component[root(pick[0])] = root(pick[1])
        edges.append(pick)
    return edges, (len(attrs) - 1) * epsilon**2 / 8


def mst(data: Any, rho: float, rng: np.random.Generator, *, iters: int = 1000) -> Fitted:
    """MST (McKenna et al. 2021): one-way marginals, a private maximum spanning tree of pairs.

    A third of ``rho`` measures every one-way marginal, a third selects ``d - 1`` pairs (the
    tree), a third measures them; Private-PGM fits the graphical model to all measurements.
    """
    _check(data, rho)
    d = len(data.domain.attrs)
    sigma1 = math.sqrt(3 * d / (2 * rho))
    oneway = [_measure(data, (a,), sigma1, rng) for a in data.domain.attrs]
    total = _total(oneway)
    compressed, oneway_c, merged = _compress(data, oneway)
    independent = _estimate(compressed.domain, oneway_c, total, iters)
    edges, spent_select = _tree(compressed, independent, rho / 3, rng)
    sigma2 = math.sqrt(3 * (d - 1) / (2 * rho))
    twoway = [_measure(compressed, e, sigma2, rng) for e in edges]
    model = _estimate(compressed.domain, oneway_c + twoway, total, iters)
    spent = d / (2 * sigma1**2) + spent_select + (d - 1) / (2 * sigma2**2)
    return Fitted(model, spent, edges, merged)


# ----------------------------------------------------------------------------------------- AIM

def _model_size(domain: Any, cliques: Sequence[Clique]) -> float:
    """Megabytes of the junction tree's tables over ``cliques`` (AIM's JT-SIZE)."""
    from mbi.junction_tree import hypothetical_model_size

    return float(hypothetical_model_size(domain, list(cliques)))


def aim_rounds(rounds: int | None, d: int) -> int:
    """AIM's ``T`` for ``d`` columns: ``16 d`` for ``None`` (the authors' ``mechanisms/aim.py``),
    else ``rounds``, which must be an integer ``>= d``.

    The ``d`` one-way marginals measured first spend ``0.9 rho d / T`` (Algorithm 1:
    ``sigma^2 = T / (2 * 0.9 rho)`` each): ``T <= 0.9 d`` would leave nothing or overspend, and
    ``T >= d`` keeps at least a tenth of ``rho`` for the adaptive rounds.
    """
    if rounds is None:
        return 16 * d
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < d:
        raise InputError(f"AIM's `rounds` must be an integer >= {d} (the number of columns the "
                         f"model sees: the one-way marginals spend 0.9 rho d / rounds, and at "
                         f"least a tenth of rho is kept for the adaptive rounds), got "
                         f"{rounds!r}")
    return rounds


def aim(data: Any, rho: float, rng: np.random.Generator, *, iters: int = 1000,
        max_model_size: float = 80.0, max_cells: int = 10_000,
        rounds: int | None = None) -> Fitted:
    """AIM (McKenna et al. 2022) on the workload of every pair of columns.

    Candidates are the workload's marginals and their subsets, each weighted by its overlap with
    the workload. Every one-way marginal is measured first; then, round after round, the
    exponential mechanism (a tenth of each round's budget) picks the candidate the current model
    gets most wrong, net of the noise its measurement would carry, among those keeping the
    junction tree under ``max_model_size`` times the share of budget used; Gaussian noise (nine
    tenths) measures it and the model is re-estimated. When a measurement barely moves the model
    the noise is halved; the last round spends what is left. ``rounds``: the ``T`` of the
    paper's Algorithm 1 (:func:`aim_rounds`), from which each round's share of the budget
    starts at ``rho / T``; fewer rounds measure fewer, less noisy marginals in less time.
    """
    _check(data, rho)
    domain = data.domain
    d = len(domain.attrs)
    rounds = aim_rounds(rounds, d)
    workload = [cl for cl in itertools.combinations(domain.attrs, 2)
                if domain.size(cl) <= max_cells]
    weight: dict[Clique, float] = {}
    for cl in sorted({s for w in workload for r in (1, 2) for s in
                      itertools.combinations(w, r)}, key=len):
        weight[cl] = float(sum(len(set(cl) & set(w)) for w in workload))
    for a in domain.attrs:
        weight.setdefault((a,), 0.0)
    answers = {cl: np.asarray(data.project(cl).datavector(), dtype=float) for cl in weight}
    sigma = math.sqrt(rounds / (2 * 0.9 * rho))
    epsilon = math.sqrt(8 * 0.1 * rho / rounds)
    measurements = [_measure(data, (a,), sigma, rng) for a in domain.attrs]
    spent = d / (2 * sigma**2)
    total = _total(measurements)
    model = _estimate(domain, measurements, total, iters)
    chosen: list[Clique] = []
    done = False
    while not done:
        if rho - spent < 2 * (1 / (2 * sigma**2) + epsilon**2 / 8):
            left = rho - spent  # the last round takes what is left
            sigma, epsilon, done = math.sqrt(1 / (2 * 0.9 * left)), math.sqrt(8 * 0.1 * left), True
        spent += epsilon**2 / 8 + 1 / (2 * sigma**2)
        limit = max_model_size * spent / rho
        inside = {s for cl in model.cliques for r in range(1, len(cl) + 1)
                  for s in itertools.combinations(cl, r)}
        candidates = [cl for cl in weight if cl in inside
                      or _model_size(domain, [*model.cliques, cl]) <= limit]
        quality = np.array([weight[cl] * (
            np.abs(answers[cl] - np.asarray(model.project(cl).datavector())).sum()
            - math.sqrt(2 / math.pi) * sigma * domain.size(cl)) for cl in candidates])
        pick = candidates[_choose(quality, epsilon, max(max(weight.values()), 1.0), rng)]
        before = np.asarray(model.project(pick).datavector())
        measurements.append(_measure(data, pick, sigma, rng))
        chosen.append(pick)
        model = _estimate(domain, measurements, total, iters, potentials=model.potentials)
        after = np.asarray(model.project(pick).datavector())
        if np.abs(after - before).sum() <= math.sqrt(2 / math.pi) * sigma * domain.size(pick):
            sigma, epsilon = sigma / 2, epsilon * 2
    return Fitted(model, spent, chosen, {})
