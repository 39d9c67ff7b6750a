"""The registry's logic: every measure by name, its options, bounds and checks (the room's
``__init__`` exports it; ``docs/architecture.md`` says how to add a measure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import risk
from risk.params import problem
from tuner.measures import _attribute as attribute
from tuner.measures import _gate as gate
from tuner.measures import _identification as identification
from tuner.measures import _membership as membership
from tuner.measures import _partial_gate as partial_gate
from tuner.measures._base import Bound, MeasureSpec, Option, Outcome

MEASURES: Mapping[str, MeasureSpec] = MappingProxyType(
    {m.name: m for m in (*membership.SPECS, *gate.SPECS, *attribute.SPECS,
                         *identification.SPECS, *partial_gate.SPECS)})


def options() -> dict[str, Option]:
    """Every ``[risk]`` option of every measure, by key (a key may be declared once only)."""
    out: dict[str, Option] = {}
    for spec in MEASURES.values():
        for opt in spec.options:
            if opt.key in out and out[opt.key] != opt:
                raise RuntimeError(f"[risk] option {opt.key!r} is declared twice differently")
            out[opt.key] = opt
    return out


def enabled(opts: Mapping[str, Any]) -> list[MeasureSpec]:
    """The measures a trial computes under these options, in registry order."""
    return [m for m in MEASURES.values() if m.enabled(opts)]


def bound_of(name: str, among: Iterable[str] | None = None
             ) -> tuple[MeasureSpec, Bound, str] | None:
    """The measure and bound of constraint ``name`` (``bound`` or ``bound.LABEL``), and the
    flat metric it bounds; ``None`` for a name no measure declares. Partial synthesis's copies
    constraints share full synthesis's names (and metrics and limits): ``among``, the names of
    the measures a trial computed, picks the one it ran."""
    bound_name, _, label = name.partition(".")
    allowed = None if among is None else set(among)
    for spec in MEASURES.values():
        if allowed is not None and spec.name not in allowed:
            continue
        for bound in spec.bounds:
            if bound.name == bound_name:
                return spec, bound, f"{bound.metric}.{label}" if label else bound.metric
    return None


def _result_of(name: str, outcomes: Mapping[str, Outcome]
               ) -> tuple[MeasureSpec, Bound, Any] | None:
    """The measure, bound and result object behind constraint ``name`` in ``outcomes``."""
    found = bound_of(name, among=outcomes)
    if found is None:
        return None
    spec, bound, _ = found
    result = outcomes.get(spec.name, Outcome({})).results.get(name.partition(".")[2])
    return None if result is None else (spec, bound, result)


def constraint_result(name: str, outcomes: Mapping[str, Outcome], *,
                      on_scale_of: Mapping[str, Outcome] | None = None
                      ) -> tuple[Bound, float, risk.Interval | None] | None:
    """Constraint ``name``'s bound, the metric it bounds and that metric's interval (``None``
    where the bound has none), from a trial's outcomes; ``None`` for an unknown constraint.
    With ``on_scale_of`` (the outcomes of the same data scored against the holdout), a bound
    that declares ``rescale`` gives its metric on their scale (:attr:`Bound.rescale`)."""
    found = _result_of(name, outcomes)
    if found is None:
        return None
    spec, bound, result = found
    seen = None if on_scale_of is None else _result_of(name, on_scale_of)
    if bound.rescale is not None and seen is not None:
        return bound, *bound.rescale(result, seen[2])
    value = spec.metrics(result).get(bound.metric, math.nan)
    return bound, value, bound.interval(result) if bound.interval else None


def constraint_record(name: str, margin: float, metrics: Mapping[str, float],
                      options: Mapping[str, Any]) -> dict[str, Any]:
    """Constraint ``name`` as a release stores it: the metric it bounds, its measured value,
    the limit in force and the option that set it, the sense, the margin (``metric - limit``
    or ``limit - metric``) and whether it passed (margin <= 0). Every output reads these; none
    rebuilds a limit from a margin. A name no measure declares keeps its margin only."""
    found = bound_of(name)
    record: dict[str, Any] = {"margin": float(margin), "passed": bool(margin <= 0)}
    if found is None:
        return record
    _, bound, key = found
    return {"metric": key, "value": float(metrics.get(key, math.nan)),
            "limit": bound.limit_of(options),
            "limit_key": bound.limit if isinstance(bound.limit, str) else None,
            "sense": bound.sense} | record


def sampled_constraint(name: str) -> bool:
    """Whether constraint ``name`` belongs to a measure a trial estimates on a sample and the
    release computes on every record (``MeasureSpec.sampled``)."""
    found = bound_of(name)
    return found is not None and found[0].sampled


def limits_of(constraints: Mapping[str, float], options: Mapping[str, Any]
              ) -> dict[str, float]:
    """Each of ``constraints``' limit in force under ``options``: what a trial stores
    (``attrs.LIMITS``), so that the release judges it under the limits it ran with, read, never
    rebuilt from a margin. A name no measure declares has none."""
    return {name: found[1].limit_of(options) for name in constraints
            if (found := bound_of(name)) is not None}


def margin_under(name: str, metrics: Mapping[str, float], limit: float) -> float:
    """Constraint ``name``'s margin for ``metrics`` under ``limit`` (``metric - limit``, or
    ``limit - metric`` for a floor; feasible when <= 0); NaN when the metric or the limit is
    missing or no measure declares the name."""
    found = bound_of(name)
    if found is None:
        return math.nan
    _, bound, key = found
    return bound.margin(float(metrics.get(key, math.nan)), limit)


def column_options(opts: Mapping[str, Any]) -> dict[str, Sequence[str]]:
    """``risk.KEY`` -> column names, for every option that names columns of the data."""
    return {f"risk.{k}": list(opts[k]) for k, o in options().items() if o.kind == "columns"}


def check(opts: Mapping[str, Any]) -> list[str]:
    """Every problem with the option values (empty when they are fine)."""
    errors = [said for k, o in options().items() if o.valid is not None and opts[k] is not None
              and (said := problem(f"risk.{k}", o.valid, opts[k]))]
    for spec in MEASURES.values():
        if spec.checks:
            errors += spec.checks(opts)
    return errors
