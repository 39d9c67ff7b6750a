"""Should the per-person test ask for the excess of a person's TPR over their own FPR?

The per-person verdict (docs/audit.md, "Every person, not the average") flags target ``t`` when
the randomisation test and an exact binomial test of ``TPR_t <= tpr_limit`` both reject, where
``TPR_t`` is the share of ``t``'s member test runs called members at the pooled 1 % FPR
threshold. ``t``'s own false-positive rate ``FPR_t`` at that threshold is not 1 % for everyone
(up to 0.19 under the data-blind generator, ``results/persons.md``): a person with a heavy-tailed
score is called a member whether in or out, so with a real but slight signal they can be flagged
for a TPR that is mostly their FPR. The alternative asks for the excess too:

    H0: TPR_t <= tpr_limit + max(0, FPR_t - 0.01)

(the binomial test's null where ``FPR_t <= 1 %``, shifted by the person's excess FPR beyond
it), from ``x`` of ``n`` member and ``y`` of ``m`` non-member test runs called, two independent
binomials given the calibration. An exact unconditional test (Barnard 1947; with a margin, Chan,
"Exact tests of equivalence and efficacy with a non-zero lower bound", Stat. Med. 17, 1998): the
statistic is a Wald z of the excess with half-count adjusted shares, made monotone (its largest
value over ``x' <= x, y' >= y``) so that the probability of the rejection region rises with
``TPR_t`` and falls with ``FPR_t``; the p-value is then its supremum on the null's boundary,
taken on a grid of nuisance values (as scipy's ``barnard_exact`` does).

This script computes, exactly (every outcome ``(x, y)`` enumerated, no simulation), the power
of both tests at Holm's first level ``alpha / K`` for the run counts of the two designs at the
committed persons table's settings, their rejection rate for heavy-tailed people with a slight
signal, and the excess test's size on the boundary. About a second:

    python -m experiments.release_audit.excess_power

Writes ``results/excess_power.md`` (read in docs/audit.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from experiments.reporting import markdown_table

HERE = Path(__file__).resolve().parent
TABLE = HERE / "results" / "excess_power.md"
FPR, LIMIT, ALPHA = 0.01, 0.05, 0.05
MARGIN = LIMIT - FPR
GRID = 400
# member (= non-member) test runs of a person, and the targets K, in each design as played for
# results/persons.md: shared 40 x 300 (half the fits test, half of those hold the person),
# per target 20 x 100 (50 test fits, a balanced half with the person)
DESIGNS = (("shared, 40 x 300", 75, 40), ("per target, 20 x 100", 25, 20))


def _statistic(n: int, m: int) -> np.ndarray:
    """The monotone Wald z of the excess for every outcome, ``(n + 1, m + 1)``."""
    x = np.arange(n + 1)[:, None]
    y = np.arange(m + 1)[None, :]
    p1, p0 = (x + 0.5) / (n + 1), (y + 0.5) / (m + 1)
    z = (p1 - np.maximum(p0, FPR) - MARGIN) / np.sqrt(p1 * (1 - p1) / n + p0 * (1 - p0) / m)
    z = np.maximum.accumulate(z, axis=0)
    return np.maximum.accumulate(z[:, ::-1], axis=1)[:, ::-1]


def excess_p_values(n: int, m: int) -> np.ndarray:
    """The excess test's p-value of every outcome: the largest, over the null's boundary, of
    the probability of a statistic at least as large."""
    z = _statistic(n, m).ravel()
    nuisance = np.r_[0.0, np.linspace(FPR, 1 - MARGIN, GRID)]
    tpr = np.maximum(nuisance, FPR) + MARGIN
    px = stats.binom.pmf(np.arange(n + 1)[None, :], n, tpr[:, None])
    py = stats.binom.pmf(np.arange(m + 1)[None, :], m, nuisance[:, None])
    order = np.argsort(-z, kind="stable")
    joint = (px[:, :, None] * py[:, None, :]).reshape(nuisance.size, -1)[:, order]
    ranked = z[order]
    last = np.searchsorted(-ranked, -ranked, side="right") - 1  # ties count as extreme
    p = np.empty(z.size)
    p[order] = np.cumsum(joint, axis=1)[:, last].max(axis=0)
    return p.reshape(n + 1, m + 1)


def binomial_p_values(n: int) -> np.ndarray:
    """The product's test: ``P(Bin(n, tpr_limit) >= x)`` for every ``x``."""
    return stats.binom.sf(np.arange(n + 1) - 1, n, LIMIT)


def _rejected(p: np.ndarray, n: int, m: int, tpr: float, fpr: float, level: float) -> float:
    w = (stats.binom.pmf(np.arange(n + 1), n, tpr)[:, None]
         * stats.binom.pmf(np.arange(m + 1), m, fpr)[None, :])
    return float(w[p <= level].sum())


def rows() -> list[dict[str, object]]:
    """One row per design and case: each test's rejection probability."""
    out: list[dict[str, object]] = []
    for design, n, k in DESIGNS:
        excess = excess_p_values(n, n)
        binomial = np.broadcast_to(binomial_p_values(n)[:, None], excess.shape)
        level = ALPHA / k
        cases = [(f"near copy in {share:.0%} of the person's tables", share + (1 - share) * FPR,
                  FPR) for share in (1.0, 0.5, 0.25)]
        cases += [(f"heavy tail: FPR_t {f:g}, TPR_t {f + 0.01:g}", f + 0.01, f)
                  for f in (0.045, 0.10, 0.19)]
        for case, tpr, fpr in cases:
            out.append({"design": design, "runs a side": n, "level (alpha / K)": level,
                        "case": case,
                        "binomial test rejects": _rejected(binomial, n, n, tpr, fpr, level),
                        "excess test rejects": _rejected(excess, n, n, tpr, fpr, level)})
        size = max(_rejected(excess, n, n, max(f, FPR) + MARGIN, f, ALPHA)
                   for f in np.r_[0.0, np.linspace(FPR, 1 - MARGIN, 200)])
        out.append({"design": design, "runs a side": n, "level (alpha / K)": ALPHA,
                    "case": "excess test's size on its null's boundary (largest of 201 points)",
                    "binomial test rejects": None, "excess test rejects": size})
    return out


def main() -> int:
    table = markdown_table(pd.DataFrame(rows()), floatfmt=".4f")
    text = ("Probability that each per-person magnitude test rejects, computed exactly over "
            "every outcome (`python -m experiments.release_audit.excess_power`); tpr_limit "
            f"{LIMIT:g}, pooled FPR {FPR:g}, alpha {ALPHA:g}.\n\n" + table + "\n")
    TABLE.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
