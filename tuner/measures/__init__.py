"""The measure registry: every risk measure a trial computes, as data.

Each :class:`MeasureSpec` says which ``[risk]`` options feed it (:class:`Option`, with type,
default and check), how to compute it from a trial's frames (a function of ``risk``'s public
API), which flat metrics it logs (MLflow, the manifest, the trials table), which of those numbers
are constraints (:class:`Bound`: metric, limit option, direction) and what the release report
says about it. The config loader, the objective, MLflow logging and the release report all read
this registry; adding a measure is one function in ``risk/``, one entry in a module here and its
tests (``docs/architecture.md``).

A constraint's value is ``metric - limit`` for an upper limit and ``limit - metric`` for a lower
one, feasible when <= 0 (Optuna's convention). An undefined metric (NaN) makes the trial
infeasible: a measure that could not be computed never passes a gate.
Modules: ``_base`` (the spec's types), ``_registry`` (the registry and its queries), one module per
family of measures: ``_membership``, ``_gate``, ``_attribute``, ``_identification``,
``_partial_gate``.
"""

from __future__ import annotations

from tuner.measures._base import Bound, Inputs, MeasureSpec, Option, Outcome, ReportRow
from tuner.measures._base import fmt as format_number
from tuner.measures._gate import remove_replicated_uniques, removed_by_gate
from tuner.measures._identification import PartialInputs, identification_options
from tuner.measures._identification import data_problems as identification_data_problems
from tuner.measures._membership import cannot_bind
from tuner.measures._registry import (
    MEASURES,
    bound_of,
    check,
    column_options,
    constraint_record,
    constraint_result,
    enabled,
    limits_of,
    margin_under,
    options,
    sampled_constraint,
)

__all__ = ["MEASURES", "Bound", "Inputs", "MeasureSpec", "Option", "Outcome", "PartialInputs",
           "ReportRow", "bound_of", "cannot_bind", "check", "column_options", "constraint_record",
           "constraint_result", "enabled", "format_number", "identification_data_problems",
           "identification_options", "limits_of", "margin_under", "options",
           "remove_replicated_uniques", "removed_by_gate", "sampled_constraint"]
