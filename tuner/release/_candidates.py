"""Which feasible trial the release audits next, and why it is the release (design §13.4).

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

An audit's refusal also moves its family back: the next candidate is the best of a family the
membership audit has not refused, where one is feasible, and only then a safer setting of a
refused family. Seen in the second acceptance run of issue 46 (the same study with a 20-minute
budget): three CART candidates at ever larger leaves were refused in turn (pooled upper bounds
7.9 %, 5.3 %, 5.3 %) and the job ended with nothing, the feasible CTGAN and TVAE trials never
audited; with ``audit.attempts`` audits in all, each one spent on a family already refused
is one fewer for a family that may pass.

Passed-over trials are not refused: they stay in the study, and a rule of another factor (or
none: ``safer_by = 1``) makes them candidates again.
"""

from __future__ import annotations

import optuna
from optuna.trial import FrozenTrial

from tuner._common import attrs
from tuner.release._audit import audited_candidates
from tuner.release._audit_verdict import MEMBERSHIP_REFUSAL
from tuner.release._manifest import Selection
from tuner.search import (
    Context,
    best_feasible,
    is_pareto,
    loss_of,
    pareto_choice,
    rejected,
    releasable,
    trial_params,
)
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


def _twins(pool: list[FrozenTrial], refused: list[FrozenTrial],
           safer_by: float) -> dict[int, str]:
    """The trials of ``pool`` no safer than one of ``refused`` (trial number -> why)."""
    out: dict[int, str] = {}
    for trial in pool if refused else []:
        for one in refused:
            if (why := _twin_of(trial, one, safer_by)) is not None:
                out[trial.number] = why
                break
    return out


def passed_over(ctx: Context, study: optuna.Study) -> dict[int, str]:
    """The feasible trials the release does not audit because they are no safer than one the
    membership audit refused (trial number -> why)."""
    return _twins(releasable(study), audit_refused(study), ctx.cfg.audit.safer_by)


def candidates(ctx: Context, study: optuna.Study) -> list[FrozenTrial]:
    """The feasible trials the release may still audit: not refused, not passed over."""
    skip = passed_over(ctx, study)
    return [t for t in releasable(study) if t.number not in skip]


def _family(trial: FrozenTrial) -> str:
    return str(trial.params.get("synthesizer"))


def _pool(study: optuna.Study, pool: list[FrozenTrial],
          refused: list[FrozenTrial]) -> list[FrozenTrial]:
    """The trials of ``pool`` the release picks among: those of the families none of
    ``refused`` is of, where one is feasible, else all of ``pool``. An audit's refusal is
    evidence against its family, and the few audits ``audit.attempts`` allows are better spent
    on one that has not been refused yet."""
    spent = {_family(t) for t in refused}
    fresh = [t for t in pool if _family(t) not in spent]
    return fresh if best_feasible(study, fresh) is not None else pool


def picked_among(ctx: Context, study: optuna.Study) -> list[FrozenTrial]:
    """The candidates the release's next pick is made among (:func:`next_candidate`): in
    Pareto mode the front the manifest shows is theirs."""
    return _pool(study, candidates(ctx, study), audit_refused(study))


def next_candidate(ctx: Context, study: optuna.Study) -> FrozenTrial | None:
    """The trial the release takes next: the study's best among :func:`candidates`, of a
    family the membership audit has not refused where one is feasible."""
    return best_feasible(study, picked_among(ctx, study))


def audit_order(ctx: Context, study: optuna.Study, n: int) -> list[FrozenTrial]:
    """The first ``n`` trials the release would audit, each refused in turn: what the job's
    time budget keeps back for (:class:`tuner.release._budget.JobBudget`)."""
    refused = audit_refused(study)
    feasible = releasable(study)
    order: list[FrozenTrial] = []
    for _ in range(n):
        taken = {t.number for t in order}
        pool = [t for t in feasible if t.number not in taken]
        skip = _twins(pool, refused + order, ctx.cfg.audit.safer_by)
        chosen = best_feasible(study, _pool(study, [t for t in pool if t.number not in skip],
                                            refused + order))
        if chosen is None:
            break
        order.append(chosen)
    return order


def rotation_said(study: optuna.Study, chosen: FrozenTrial) -> str:
    """How the families the membership audit refused shaped the choice of ``chosen``, in the
    words of the manifest's selection ("" where they did not)."""
    refused = audit_refused(study)
    spent = sorted({_family(t) for t in refused})
    if not spent or _family(chosen) in spent:
        return ""
    trials = ", ".join(str(t.number) for t in refused if _family(t) in spent)
    return (f", taken first among the families the membership audit has not refused "
            f"({', '.join(spent)} refused: trial(s) {trials})")


def selection(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial) -> Selection:
    """Why ``best`` is the release: the study's mode, rule, and (Pareto mode) its front; the
    trials refused at release, and those passed over as no safer than one the membership audit
    refused (:mod:`tuner.release._candidates`)."""
    refused = {str(n): why for n, why in sorted(rejected(study).items())}
    passed = {str(n): why for n, why in sorted(passed_over(ctx, study).items())}
    among = "the feasible trials" + (" not refused at release" if refused else "") + (
        f" nor passed over ({len(passed)}: no safer than one the membership audit refused)"
        if passed else "")
    if not is_pareto(study):
        return {"mode": "single", "rule": "the lowest risk-utility loss among the feasible "
                "trials (every constraint <= 0) whose data pass in full at release",
                "reason": f"trial {best.number} has the lowest loss, {loss_of(best):.4f}, of "
                          f"{among}{rotation_said(study, best)}",
                "refused": refused, "passed_over": passed}
    choice = pareto_choice(study, picked_among(ctx, study))
    assert choice is not None  # best came from it
    _, front, reason = choice
    reason += rotation_said(study, best)
    return {"mode": "pareto", "rule": study.user_attrs.get(attrs.PARETO_PICK, "utility"),
            "front": sorted(t.number for t in front), "reason": reason, "refused": refused,
            "passed_over": passed}
