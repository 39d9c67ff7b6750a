"""A neural trial scored at its checkpoints: the best feasible one is its candidate.

A trial of a family that trains in epochs (``[study] checkpoints``, full synthesis) is fitted
once for its drawn ``epochs`` and scored at the geometric rungs ``first_checkpoint x 3^k`` and
at its last epoch (:func:`tuner.synthesis.rungs`, the rungs Optuna's Hyperband and successive
halving pruners compare trials at). At each checkpoint :class:`Checkpoints`:

- keeps the best *feasible* checkpoint (lowest loss, every constraint <= 0, and under a job's
  time budget an audit that fits in what each audit may take): the trial's candidate,
  re-created at release by a plain fit of its epochs (the same records,
  :mod:`tuner.synthesis._checkpoints`), and the audit's shadows train to the same epochs;
- logs the checkpoint's loss, U, M and feasibility to the trial's MLflow run at step = epochs
  and keeps the learning curve on the trial (:data:`tuner._common.attrs.CURVE`);
- reports to Optuna (single mode: Optuna has no intermediate values for several objectives)
  the loss the trial would return if it stopped now, the best feasible loss so far, and while
  none is feasible the checkpoint's own loss: an under-trained network often fails a limit at
  its first checkpoints and meets them later (in the pruning benchmark of issue 46, 9 of seed
  0's 17 pruned trials were pruned at epoch 5 on the worst loss 0 reported for "none feasible
  yet", among them TVAE configurations the full-fidelity arm trained to -0.86; one trial
  infeasible at epoch 5 was the arm's best at 235), and a trial that stays infeasible stops by
  ``patience`` below; the pruner may then stop the trial (PRUNED, Li et al. 2018);
- stops training after ``[study] patience`` checkpoints in a row over a risk limit: a
  generator that memorises does not unlearn by training on (SDV issues #222 and #264);
  once the job's time budget needs the rest for the audit (:mod:`tuner.release._budget`); and,
  under that budget, at the first checkpoint whose fit is too long for its audit to fit in what
  each audit may take (a longer fit only costs more): its best checkpoint before that is the
  candidate, and a trial with none is pruned (no release could audit it; in the third
  acceptance run of issue 46 the best CTGAN and TVAE trials, at 100 and 243 epochs, would each
  have taken about 30 min to audit where the budget gave each audit 5, and nothing was
  released).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, Protocol

import optuna
from optuna.trial import Trial

from tuner._common import attrs
from tuner.config import Config
from tuner.scoring import Evaluation, UnusableSynthesis
from tuner.search._tracking import Tracker
from tuner.synthesis import SYNTHESIZERS, StopTraining, rungs


class Unauditable(Protocol):
    """Why the release audit of a fit of family ``name`` taking ``seconds`` on the training
    records with ``threads`` threads would not fit in what each audit may take, "" where it
    would (:meth:`tuner.release.JobBudget.unauditable`)."""

    def __call__(self, name: str, seconds: float, *, threads: int) -> str: ...


def checkpointed(cfg: Config, name: str) -> bool:
    """Whether trials of ``name`` are scored at checkpoints under ``cfg``."""
    return bool(cfg.study.checkpoints and SYNTHESIZERS[name].has_epochs
                and not cfg.study.synthesize)


def prunes(cfg: Config) -> bool:
    """Whether a pruner may stop checkpointed trials under ``cfg`` (single mode only: Optuna
    has no intermediate values for several objectives)."""
    return bool(cfg.study.pruner != "none" and cfg.study.mode == "single"
                and cfg.study.checkpoints)


def epochs_as_resource(cfg: Config, name: str) -> bool:
    """Whether trials of ``name`` train up to the top of their epochs' range rather than draw
    their epochs (``[study] epochs_drawn = false`` under a pruner). Drawn, a trial that draws
    fewer epochs than the first rung completes unpruned while one that draws many is pruned
    there, and TPE, which ranks a pruned trial below every completed one, learns to draw few:
    in issue 46's pruning benchmark (seed 0, successive halving) 60 of the last 70 trials were
    CTGAN with 1 to 24 epochs, best loss -0.815 against -0.879 for the full-fidelity search.
    As the pruner's resource, the epochs are what Hyperband (Li et al., JMLR 18, 2018) and
    successive halving allocate, and the best feasible checkpoint is the trial's candidate."""
    return checkpointed(cfg, name) and prunes(cfg) and not cfg.study.epochs_drawn


def checkpoints_of(cfg: Config, params: dict[str, Any]) -> tuple[int, ...]:
    """The epoch counts a trial with ``params`` is scored at."""
    return rungs(int(params["epochs"]), first=cfg.study.first_checkpoint)


@dataclasses.dataclass
class Checkpoints:
    """The policy at each checkpoint of one trial (see the module docstring)."""

    trial: Trial
    cfg: Config
    tracker: Tracker
    run: str
    # the job's budget: the monotonic time this trial stops at, given the seconds it has run
    stop_at: Callable[[float], float] | None = None
    # the job's budget: why the audit of a fit of these seconds would not fit ("" where it would)
    unauditable: Callable[[float], str] | None = None
    best: Evaluation | None = None
    last: Evaluation | None = None
    unusable: UnusableSynthesis | None = None
    over: int = 0  # checkpoints in a row over a risk limit
    curve: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    stopped: str = ""
    began: float = dataclasses.field(default_factory=time.monotonic)

    def __call__(self, epochs: int, ev: Evaluation | UnusableSynthesis) -> None:
        if isinstance(ev, UnusableSynthesis):  # not a candidate; later epochs may be usable
            self.unusable = ev
            self.curve.append({"epochs": epochs, "unusable": str(ev)[:300]})
            self._stop_if_time_is_up(epochs)  # no later epochs then
            return
        self.last = ev
        too_long = self.unauditable(ev.fit_seconds + ev.sample_seconds) if self.unauditable else ""
        if ev.feasible and not too_long and (self.best is None
                                              or ev.loss.loss < self.best.loss.loss):
            self.best = ev
        self.over = 0 if ev.feasible else self.over + 1
        point = {"epochs": epochs, "loss": ev.loss.loss, "utility": ev.utility,
                 "m": ev.membership.m, "feasible": ev.feasible,
                 "fit_seconds": ev.fit_seconds, "auditable": not too_long}
        self.curve.append(point)
        self.tracker.log(self.run, step=epochs, metrics={
            f"checkpoint.{k}": float(v) for k, v in point.items() if k != "epochs"})
        self.trial.set_user_attr(attrs.CURVE, self.curve)
        if self.cfg.study.mode == "single" and self.cfg.study.pruner != "none":
            self.trial.report((self.best or ev).loss.loss, step=epochs)
            if self.trial.should_prune():
                self._constraints_of(self.best or ev)
                self.stopped = f"pruned at epoch {epochs}"
                raise optuna.TrialPruned(f"{self.stopped}: its loss so far was not among the "
                                         "best of the trials that reached this epoch")
        if too_long:
            self._too_long(epochs, too_long)
        self._stop_if_time_is_up(epochs)
        if self.over >= self.cfg.study.patience and epochs < self.trial_epochs():
            self.stopped = (f"stopped at epoch {epochs}: {self.over} checkpoint(s) in a row "
                            "over a risk limit")
            raise StopTraining(self.stopped)

    def _too_long(self, epochs: int, why: str) -> None:
        """A fit too long to audit: prune a trial with no candidate yet, else stop training
        (its best checkpoint before this one is its candidate)."""
        if self.best is None:
            self.stopped = f"pruned at epoch {epochs}"
            self._constraints_of(self.last)
            raise optuna.TrialPruned(f"{self.stopped}: no checkpoint met every limit with a fit "
                                     f"short enough to audit ({why})")
        if epochs < self.trial_epochs():
            self.stopped = (f"stopped at epoch {epochs}: a fit this long could not be audited "
                            f"({why})")
            raise StopTraining(self.stopped)

    def _constraints_of(self, ev: Evaluation | None) -> None:
        """A trial about to be pruned carries the constraints of the checkpoint it reported, so
        that TPE ranks one pruned over a limit among the infeasible trials (Optuna's
        ``_split_trials``), not as a feasible trial with that loss."""
        for key, value in ({} if ev is None else ev.constraints).items():
            self.trial.set_constraint(key, value)

    def _stop_if_time_is_up(self, epochs: int) -> None:
        if self.time_is_up() and epochs < self.trial_epochs():
            self.stopped = f"stopped at epoch {epochs}: the job's time left is the release's"
            raise StopTraining(self.stopped)

    def time_is_up(self) -> bool:
        """Whether the job's budget needs the rest for the audit: training stops at the next
        checkpoint, which the fit then makes at the end of the epoch under way
        (:func:`tuner.synthesis.synthesize_checkpoints`' ``due``), not at the next rung."""
        now = time.monotonic()
        return self.stop_at is not None and now >= self.stop_at(now - self.began)

    def trial_epochs(self) -> int:
        return int(self.trial.params[f"{self.trial.params['synthesizer']}.epochs"])

    def chosen(self) -> Evaluation:
        """The trial's candidate: its best feasible checkpoint, else its last scored one."""
        pick = self.best or self.last
        if pick is None:
            assert self.unusable is not None
            raise self.unusable
        return pick
