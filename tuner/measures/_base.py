"""The measure protocol: options, bounds, a trial's inputs, outcomes and report rows."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import pandas as pd

import risk
from risk.params import Range, Rule


@dataclasses.dataclass(frozen=True)
class Option:
    """One ``[risk]`` key, declared once: its type (``float``, ``int``, ``columns`` for a list
    of column names), default, one line of help and its range or choices (``valid``, a
    :mod:`risk.params` rule; an unset option is not checked). Its check
    (:func:`tuner.measures.check`), its row in ``docs/config.md`` and its bad-value tests come
    from this."""

    key: str
    kind: Literal["float", "int", "columns", "bool", "str"]
    default: Any
    help: str
    valid: Rule | None = None


@dataclasses.dataclass(frozen=True)
class Bound:
    """A constraint on metric ``metric`` (per label), limited by option ``limit``.

    ``sense = "max"``: feasible when ``metric <= limit``; ``"min"``: when ``metric >= limit``.
    The constraint is named ``name`` (``name.LABEL`` for a per-target measure). ``limit``
    names a ``[risk]`` option, or is a fixed number (0 for "never").
    """

    name: str
    metric: str
    limit: str | float  # a [risk] option, or a fixed number
    sense: Literal["max", "min"] = "max"
    # the metric's interval from its result, for the measures that compare with the holdout
    # (the release shows them beside the sealed audit set's); None: no interval
    interval: Callable[[Any], risk.Interval | None] | None = None
    # the metric (and interval) of a result scored against another set of real records, put on
    # the scale of the result the trials saw: ``rescale(other, seen)``. For a metric whose
    # value for the same release depends on the size of the set it is compared with (DCR's
    # excess: the release's audit-set check); None: comparable as it is
    rescale: Callable[[Any, Any], tuple[float, risk.Interval | None]] | None = None
    # whether the bound applies under the [risk] options (e.g. M's "upper" decision); None:
    # always
    when: Callable[[Mapping[str, Any]], bool] | None = None

    def limit_of(self, options: Mapping[str, Any]) -> float:
        """The limit in force under ``options`` (the named option's value, or the number)."""
        return float(options[self.limit] if isinstance(self.limit, str) else self.limit)

    def margin(self, metric: float, limit: float) -> float:
        """``metric - limit``, or ``limit - metric`` for a floor: feasible when <= 0."""
        return metric - limit if self.sense == "max" else limit - metric

    def value(self, metric: float, options: Mapping[str, Any]) -> float:
        """The constraint's margin under ``options``' limit (infinite for a missing metric)."""
        if metric is None or not math.isfinite(metric):
            return math.inf
        return self.margin(metric, self.limit_of(options))


@dataclasses.dataclass(frozen=True)
class Inputs:
    """What a measure sees of one trial: the split, the synthetic data, options, data config."""

    train: pd.DataFrame
    holdout: pd.DataFrame
    synthetic: pd.DataFrame
    options: Mapping[str, Any]
    population_size: int
    keys: tuple[str, ...] | None
    seed: int
    removed_rows: int = 0  # synthetic records the gate removed before scoring (replicated uniques)
    sampled: pd.DataFrame | None = None  # the synthetic data as sampled, before the gate
    study_seed: int = 0  # the study's seed: for what depends on the split only, not the trial
    # the release's evaluation: also what only the report shows (M's F1 at every threshold);
    # a trial computes what its constraints need (the same numbers for those)
    release: bool = False

    @property
    def as_sampled(self) -> pd.DataFrame:
        """The synthetic data before the gate removed anything: what the generator made."""
        return self.synthetic if self.sampled is None else self.sampled


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A measure's results, one per label ("" when the measure has no target), and any extra
    metrics that are not fields of a result (e.g. rows left out)."""

    results: Mapping[str, risk.Result]
    extra: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ReportRow:
    """One line of the release report: what, the value, its limit (or ""), what it means."""

    measure: str
    value: str
    limit: str
    meaning: str


@dataclasses.dataclass(frozen=True)
class MeasureSpec:
    """A risk measure as the tuner uses it (see the module docstring)."""

    name: str
    options: tuple[Option, ...]
    enabled: Callable[[Mapping[str, Any]], bool]
    compute: Callable[[Inputs], Outcome]
    metrics: Callable[[risk.Result], dict[str, float]]
    bounds: tuple[Bound, ...] = ()
    report: Callable[[str, risk.Result, Mapping[str, Any]], list[ReportRow]] | None = None
    checks: Callable[[Mapping[str, Any]], list[str]] | None = None
    # a trial estimates it on a sample of the synthetic records, the release on every one: a
    # trial whose data then fail it is refused at release (tuner.release._recreate.ReleaseRejected)
    sampled: bool = False
    # it compares the training records with the holdout (a train-minus-holdout difference, M's
    # non-members): recomputed on the sealed audit set at release (tuner.release._audit_set)
    reads_holdout: bool = True

    def flat_metrics(self, outcome: Outcome) -> dict[str, float]:
        """Every metric of ``outcome``, named ``metric`` or ``metric.LABEL``."""
        out: dict[str, float] = {}
        for label, result in outcome.results.items():
            suffix = f".{label}" if label else ""
            out |= {f"{k}{suffix}": v for k, v in self.metrics(result).items()}
        return out | dict(outcome.extra)

    def constraints(self, outcome: Outcome, options: Mapping[str, Any]) -> dict[str, float]:
        """Each bound's value per label (feasible when <= 0)."""
        out: dict[str, float] = {}
        for bound in self.bounds:
            if isinstance(bound.limit, str) and options[bound.limit] is None:
                continue  # an optional limit that is not set: logged, not constrained
            if bound.when is not None and not bound.when(options):
                continue  # a bound the options switch off
            for label, result in outcome.results.items():
                name = f"{bound.name}.{label}" if label else bound.name
                logged = self.metrics(result)
                if bound.metric not in logged:  # a misspelt metric: every trial infeasible
                    raise RuntimeError(
                        f"measure {self.name!r}: bound {bound.name!r} names metric "
                        f"{bound.metric!r}, which its metrics do not log ({sorted(logged)})")
                out[name] = bound.value(logged[bound.metric], options)
        return out


def num(value: float | None) -> float:
    """A result field as a float; ``None`` (undefined) becomes NaN, never 0."""
    return math.nan if value is None else float(value)


def fmt(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals as the report and the summary show it; ``undefined``
    for None, NaN or an infinity (a measure that could not be computed)."""
    return "undefined" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


# the range several options share: a limit on a train-minus-holdout difference of two shares
# lies in [0, 1]. A negative limit would ask the release to resemble the holdout more than its
# own training data: chance alone fails that about half the time, so it refuses safe data at
# random
DIFFERENCE_LIMIT = Range(0, 1, note="a difference; 0: the release may not resemble the "
                                       "training records more than the holdout")
