"""The released table itself scored by the membership audit (issue 44 item 2): where each
target's score on the *real* release falls in its own shadow runs.

The shadow game measures what the generator *could* disclose about each target; the release is
one draw of it, trained on a table that holds every target. For each target the attack chosen on
its calibration runs scores the release as it scored every shadow output, standardised by the
same calibration non-members (:func:`risk._audit_stats.null_z`), and the release is read three
ways:

- **called**: its standardised score is above the pooled 1 % FPR threshold, as a test run would
  be called a member. If nothing of anyone reached the release, about ``expected`` of the K
  would be called by chance: the sum over targets of their own non-member test runs' share
  called.
- **p-value**: ``(1 + #{non-member test runs scoring at least the release}) / (1 + n)``, how
  unusual the release's score would be for a table without the person (the conformal p-value of
  Vovk et al., *Algorithmic learning in a random world*, 2005, exact if the release were
  exchangeable with those runs). Its floor, ``1 / (1 + n)``, is above Holm's smallest level at
  the default game, so it ranks people rather than flags them.
- **log likelihood ratio**: online LiRA's ``log N(z; mu_in, sd_in) - log N(z; mu_out, sd_out)``
  with Gaussians fitted to the target's member and non-member test runs (Carlini et al.,
  "Membership inference attacks from first principles", IEEE S&P 2022, the online attack):
  above 0, the release looks more like the tables that held the person.

The release was trained on the whole training table, the shadows on ``shadow_size`` records, and
the distance attack's score grows with the number of synthetic records searched; so the release
is scored on a seeded subsample of ``len(release) * shadow_size / len(train)`` of its records
(every record when the shadows are not smaller), the scale at which each shadow output was
sampled from its table.

Every figure here names a person's exposure: custodian-only, like the targets' labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

SD_FLOOR = 1e-3  # standardised units: a spike of identical runs stays a finite Gaussian
LOG_LR_CLIP = 50.0
MAX_Z = 1e6  # standardised scores beyond this are as far out as any: log densities stay finite


def scaled_rows(n_release: int, n_train: int, shadow_size: int, rng: np.random.Generator
                ) -> np.ndarray:
    """The release's rows scored: a seeded subsample at the shadows' scale (module
    docstring), in their order."""
    keep = n_release if shadow_size >= n_train else max(1, round(n_release * shadow_size /
                                                                 n_train))
    return np.sort(rng.choice(n_release, keep, replace=False))


def _group_normal(z: np.ndarray, groups: np.ndarray, k: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of ``k``: the runs' count, mean and sd (ddof = 1, at least :data:`SD_FLOOR`;
    NaN below two runs)."""
    n = np.bincount(groups, minlength=k).astype(float)
    total = np.bincount(groups, weights=z, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        squares = np.bincount(groups, weights=(z - mean[groups]) ** 2, minlength=k)
        sd = np.sqrt(squares / (n - 1))
    return n, mean, np.where(n >= 2, np.maximum(sd, SD_FLOOR), np.nan)


def release_figures(release_z: np.ndarray, threshold: float, *, target: np.ndarray,
                    member: np.ndarray, z: np.ndarray) -> dict[str, Any]:
    """Per target, the release's standardised score ``release_z``, whether it is above the 1 %
    ``threshold``, its conformal p-value and log likelihood ratio against the test runs'
    ``target``, ``member`` and standardised ``z``; how many were called and how many would be
    by chance (module docstring)."""
    score = np.nan_to_num(np.asarray(release_z, dtype=float), nan=-np.inf, posinf=np.inf,
                          neginf=-np.inf)
    k = score.size
    called = score > threshold
    out_t, out_z = target[~member], z[~member]
    n_out, mu_out, sd_out = _group_normal(out_z, out_t, k)
    n_in, mu_in, sd_in = _group_normal(z[member], target[member], k)
    at_least = np.bincount(out_t, weights=out_z >= score[out_t], minlength=k)
    p_values = (1 + at_least) / (1 + n_out)
    with np.errstate(invalid="ignore", divide="ignore"):
        chance = np.bincount(out_t, weights=out_z > threshold, minlength=k) / n_out
        # a finite score far out is held at a million sd-floors' reach, where both log
        # densities stay finite; +-inf: their difference would be NaN, the sign says the side
        far = np.clip(score, -MAX_Z, MAX_Z)
        ratio = stats.norm.logpdf(far, mu_in, sd_in) - stats.norm.logpdf(far, mu_out, sd_out)
    ratio = np.where(np.isinf(score), np.sign(score) * LOG_LR_CLIP, ratio)
    # a Gaussian needs two runs a side: no evidence either way
    ratio = np.where((n_in >= 2) & (n_out >= 2), np.clip(ratio, -LOG_LR_CLIP, LOG_LR_CLIP), 0.0)
    return {"release_z": tuple(float(v) for v in score),
            "release_called": tuple(bool(c) for c in called),
            "release_p_values": tuple(float(v) for v in p_values),
            "release_log_lr": tuple(float(v) for v in ratio),
            "n_release_called": int(called.sum()),
            "release_expected_called": float(np.nansum(chance))}
