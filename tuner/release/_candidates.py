"""Which feasible trial the release audits next (design §13.4).

The release audits at most ``audit.attempts`` candidates, each at a confidence that spends one
audit's 95 % over them (Bonferroni), so an audit spent on a near twin of a refused candidate is
an audit lost. After the membership audit refuses a trial, the next candidate is still the best
feasible trial by the study's own rule (lowest loss, or the Pareto pick), but among those that
differ from every refused one: of another family, or of the refused one's family at a setting
``audit.safer_by`` times safer on that family's privacy argument
(:attr:`tuner.synthesis.SynthesizerSpec.privacy`: CART's ``min_samples_leaf`` that many times
larger, synthpop's ``minbucket``; a neural family's epochs, the time it has to memorise its
records, or a DP family's epsilon that many times smaller). A family without such an argument
(the Gaussian copula) is not audited again once refused: none of its settings is known to be
safer. With the default factor of 2 three audits of one family span a factor 4 (CART leaves of
13, 26, 52 records), what one step of a log-scale search space is doubled each time.

Seen in issue 46's acceptance run (4,000 Adult records, CTGAN, TVAE and CART): the three best
trials were CART at 1, 14 and 13 records a leaf, all refused by the membership audit (pooled
upper bounds 23.6 %, 6.9 %, 9.4 % against 5 %), and the release ended with nothing while CART at
50 records a leaf and both neural families were feasible and not audited.

Passed-over trials are not refused: they stay in the study, and a rule of another factor (or
none: ``safer_by = 1``) makes them candidates again.
"""

from __future__ import annotations

import optuna
from optuna.trial import FrozenTrial

from tuner.release._audit import audited_candidates
from tuner.release._audit_verdict import MEMBERSHIP_REFUSAL
from tuner.search import Context, best_feasible, rejected, releasable, trial_params
from tuner.synthesis import SYNTHESIZERS


def audit_refused(study: optuna.Study) -> list[FrozenTrial]:
    """The trials the membership audit refused: refused at release by their membership audit
    (a refusal on the sealed audit set, or by a measure scored in full, is not one, even after
    an audit that passed)."""
    ran = audited_candidates(study)
    refused = {n for n, why in rejected(study).items() if why.startswith(MEMBERSHIP_REFUSAL)}
    return [t for t in study.get_trials(deepcopy=False)
            if t.number in ran and t.number in refused]


def _twin_of(trial: FrozenTrial, refused: FrozenTrial, safer_by: float) -> str | None:
    """Why ``trial`` is no safer than the audit-refused ``refused`` (None: it differs)."""
    name, params = trial_params(trial)
    refused_name, refused_params = trial_params(refused)
    if name != refused_name:
        return None
    privacy = SYNTHESIZERS[name].privacy if name in SYNTHESIZERS else None
    if privacy is None:
        return (f"{name}, as trial {refused.number} the membership audit refused, and no "
                f"setting of {name} is known to be safer")
    argument, way = privacy
    mine, theirs = params.get(argument), refused_params.get(argument)
    if mine is None or theirs is None:
        return None  # a space without the argument: nothing to compare
    needed = float(theirs) * safer_by if way > 0 else float(theirs) / safer_by
    if (float(mine) >= needed) if way > 0 else (float(mine) <= needed):
        return None
    return (f"{name} {argument} = {mine:g}, no safer than trial {refused.number}'s {theirs:g} "
            f"the membership audit refused (audit.safer_by = {safer_by:g} asks for "
            f"{'at least' if way > 0 else 'at most'} {needed:g})")


def passed_over(ctx: Context, study: optuna.Study) -> dict[int, str]:
    """The feasible trials the release does not audit because they are no safer than one the
    membership audit refused (trial number -> why)."""
    refused = audit_refused(study)
    out: dict[int, str] = {}
    if not refused:
        return out
    for trial in releasable(study):
        for one in refused:
            if (why := _twin_of(trial, one, ctx.cfg.audit.safer_by)) is not None:
                out[trial.number] = why
                break
    return out


def candidates(ctx: Context, study: optuna.Study) -> list[FrozenTrial]:
    """The feasible trials the release may still audit: not refused, not passed over."""
    skip = passed_over(ctx, study)
    return [t for t in releasable(study) if t.number not in skip]


def next_candidate(ctx: Context, study: optuna.Study) -> FrozenTrial | None:
    """The trial the release takes next: the study's best among :func:`candidates`."""
    return best_feasible(study, candidates(ctx, study))
