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


def scaled_rows(n_release: int, n_train: int, shadow_size: int, rng: np.random.Generator
                ) -> np.ndarray:
    """The release's rows scored: a seeded subsample at the shadows' scale (module
    docstring), in their order."""
    keep = n_release if shadow_size >= n_train else max(1, round(n_release * shadow_size /
                                                                 n_train))
    return np.sort(rng.choice(n_release, keep, replace=False))


def _log_normal(z: float, sample: np.ndarray) -> float:
    sd = max(float(sample.std(ddof=1)), SD_FLOOR)
    return float(stats.norm.logpdf(z, float(sample.mean()), sd))


def release_figures(release_z: np.ndarray, threshold: float, *, target: np.ndarray,
                    member: np.ndarray, z: np.ndarray) -> dict[str, Any]:
    """Per target, the release's standardised score ``release_z``, whether it is above the 1 %
    ``threshold``, its conformal p-value and log likelihood ratio against the test runs'
    ``target``, ``member`` and standardised ``z``; how many were called and how many would be
    by chance (module docstring)."""
    score = np.nan_to_num(np.asarray(release_z, dtype=float), nan=-np.inf)
    called = score > threshold
    p_values, log_lr, chance = [], [], 0.0
    for t in range(score.size):
        mine = target == t
        inside, outside = z[mine & member], z[mine & ~member]
        p_values.append(float((1 + np.sum(outside >= score[t])) / (1 + outside.size)))
        if min(inside.size, outside.size) < 2:
            ratio = 0.0  # a Gaussian needs two runs a side: no evidence either way
        elif np.isfinite(score[t]):
            ratio = _log_normal(score[t], inside) - _log_normal(score[t], outside)
        else:
            ratio = -LOG_LR_CLIP if score[t] < 0 else LOG_LR_CLIP
        log_lr.append(float(np.clip(ratio, -LOG_LR_CLIP, LOG_LR_CLIP)))
        chance += float(np.mean(outside > threshold)) if outside.size else 0.0
    return {"release_z": tuple(float(v) for v in score),
            "release_called": tuple(bool(c) for c in called),
            "release_p_values": tuple(p_values), "release_log_lr": tuple(log_lr),
            "n_release_called": int(called.sum()), "release_expected_called": chance}
