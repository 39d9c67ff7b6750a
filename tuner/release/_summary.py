"""The release's summary block: what a review board, or a newcomer, reads first.

:func:`summary` renders it from ``manifest.json`` alone, and every place that shows it prints
its lines unchanged: the terminal at the end of ``risk-tuner run``, ``demo`` and ``release``,
and the top of ``report.md`` and ``report.html`` (:mod:`tuner.release._report`), so the two never
say different things. It holds, in this order: what was released; membership disclosure M against
its threshold; the copy ceiling (the M a verbatim copy of the training records scores under the
same attack: whether M can bind at all); every constraint of the study with its metric and
limit; and, when the manifest has one, the release audit's verdict. The detail (every measure,
its meaning, the figures) stays below it in the report.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from typing import Any

from tuner import measures
from tuner.measures import format_number as fmt
from tuner.release._manifest import Constraint, Manifest, checked

TITLE = "Summary for the review board"
WIDTH = 98  # characters a line, so that the terminal's two-space indent fits in 100


def _num(value: Any) -> float:
    """A manifest number as a float; absent or undefined is NaN."""
    try:
        return math.nan if value is None else float(value)
    except (TypeError, ValueError):
        return math.nan


def _release_line(manifest: Manifest) -> str:
    records = manifest["gate"]["released_records"]
    utility = _num(manifest["metrics"].get("utility"))
    metric = manifest["config"].get("utility_metric")
    return (f"Release: trial {manifest['trial']} ({manifest['synthesizer']}) of study "
            f"{manifest['study']!r}: {records:,} records"
            + (f", U = {utility:.4f}" if math.isfinite(utility) else "")
            + (f" ({metric})" if metric and math.isfinite(utility) else ""))


def trials_text(report: Mapping[str, Any]) -> str:
    """How many trials ran, met every constraint and were refused at release: said once, for
    the summary's Study line and the report's table."""
    refused, run = report["trials_refused"], report["trials_run"]
    return (f"{run} trial{'' if run == 1 else 's'} run, {report['trials_feasible']} "
            "met every constraint" + (f", {refused} of them refused at release" if refused
                                      else ""))


def _trials_line(manifest: Manifest) -> list[str]:
    return [f"Study: {trials_text(manifest['report'])}"]


def _threshold(manifest: Manifest) -> float:
    return _num(manifest["membership"].get("m_threshold"))  # the threshold M was judged by


def _membership_lines(manifest: Manifest) -> list[str]:
    """M against its threshold, and what the number means for this attack."""
    mem = manifest["membership"]
    value = _num(mem.get("m"))
    constraint = manifest["constraints"].get("m")
    passed = None if constraint is None else constraint["passed"]
    verdict = "" if passed is None else (": passed" if passed else ": FAILED")
    low, high = _num(mem.get("m_spread_low")), _num(mem.get("m_spread_high"))
    level, repeats = _num(mem.get("m_spread_level")), _num(mem.get("repeats"))
    spread = (f"{level:.0%} of the {repeats:.0f} attack sets on the holdout gave {low:.4f} to "
              f"{high:.4f}" if all(map(math.isfinite, (low, high, level, repeats))) else "")
    keys = manifest["config"].get("keys")
    h = _num(mem.get("hamming_threshold"))
    who = (f"an intruder holding {len(keys)} quasi-identifiers of a person" if keys
           else "an intruder holding a person's record")
    match = ("" if not math.isfinite(h) else ", matched exactly (h = 0)" if h == 0 else
             f", matched within h = {h:.0f} differing")
    return [f"Membership disclosure M = {fmt(value)}, must be <= {_threshold(manifest):g}{verdict}",
            f"  ({who}{match}: M = 0 tells no better than a guess whether they were in the "
            f"training data, M = 1 always right)", *_interval_lines(manifest, spread)]


def _interval_lines(manifest: Manifest, spread: str) -> list[str]:
    """M's confidence interval with its level and what it covers; the attack-set spread under
    its own name."""
    mem = manifest["membership"]
    low, high = _num(mem.get("m_ci_low")), _num(mem.get("m_ci_high"))
    level = _num(mem.get("m_ci_level"))
    upper = manifest["config"].get("m_decision") == "upper"
    lines = []
    if all(map(math.isfinite, (low, high, level))):
        lines.append(
            f"  {level:.0%} confidence interval for M: {low:.4f} to {high:.4f}, over the draw of "
            "the holdout and of the attack sets, for this release, these bins and N (the "
            "release was chosen on the same holdout)"
            + (f" (m_decision = \"upper\": its upper end must be <= {_threshold(manifest):g} too)"
               if upper else ""))
    if spread:
        lines.append(f"  Spread over attack sets (not a confidence interval): {spread}")
    return lines


def _ceiling_lines(manifest: Manifest) -> list[str]:
    """The copy ceiling, and whether M can bind at all (the warning's reason when not)."""
    mem, threshold = manifest["membership"], _threshold(manifest)
    ceiling = _num(manifest["metrics"].get("m_copy_ceiling"))
    binds = bool(mem.get("can_bind", True))
    if math.isfinite(ceiling):
        above = ceiling > threshold
        lines = [f"Copy ceiling: a verbatim copy of the training records would score M = "
                 f"{ceiling:.4f} {'>' if above else '<='} {threshold:g}"
                 + (", so M binds here: it would refuse a copy" if above and binds else "")]
    else:
        lines = ["Copy ceiling: not computed for this release"]
    if not binds:
        lines.append(f"  {measures.cannot_bind(mem.get('warning', ''))}")
    if manifest.get("partial"):
        lines.append("  Partial synthesis: every row carries its own record's kept values, so "
                     "M does not say whether membership is hidden; identification risk does.")
    return lines


def _constraint_line(name: str, outcome: Constraint, width: int) -> str:
    """``name  metric = value <= limit (key): passed`` for one constraint of the manifest, as
    stored (:func:`tuner.measures.constraint_record`)."""
    verdict = "passed" if outcome["passed"] else "FAILED"
    if "metric" not in outcome:  # a constraint no measure declares: its margin only
        return (f"  {name:<{width}} margin {fmt(_num(outcome['margin']))}, must be <= 0: "
                f"{verdict}")
    return (f"  {name:<{width}} {outcome['metric']} = {fmt(_num(outcome.get('value')))}, must "
            f"be {limit_text(outcome)}: {verdict}")


def limit_text(outcome: Constraint) -> str:
    """A stored constraint's limit as every output says it: ``<= 0.2 (m_threshold)``, ``>=``
    for a floor, the ``[risk]`` key that set it when one did."""
    sign = "<=" if outcome.get("sense") == "max" else ">="
    option = outcome.get("limit_key")
    return f"{sign} {_num(outcome.get('limit')):.6g}" + (f" ({option})" if option else "")


def _constraint_lines(manifest: Manifest) -> list[str]:
    constraints = manifest["constraints"]
    if not constraints:
        return ["Constraints: none in this manifest"]
    failed = [k for k, v in constraints.items() if not v["passed"]]
    head = (f"Constraints: all {len(constraints)} passed, each a metric against its [risk] "
            "limit:" if not failed else
            f"Constraints: {len(failed)} of {len(constraints)} FAILED ({', '.join(failed)}):")
    width = max(map(len, constraints))
    return [head, *(_constraint_line(k, v, width) for k, v in constraints.items())]


def summary(manifest: Manifest) -> list[str]:
    """The summary block of a release, as lines of plain text (no trailing newlines).

    Read from ``manifest`` alone (``manifest.json`` as :mod:`tuner.release._export` writes it,
    every key :class:`~tuner.release._manifest.Manifest` requires: :func:`checked`), its last
    line the release audit's verdict ("not audited" and why, where it was not).
    """
    checked(manifest)  # a clear error for what is not one
    lines = [_release_line(manifest), *_trials_line(manifest), *_membership_lines(manifest),
             *_ceiling_lines(manifest), *_constraint_lines(manifest)]
    verdict = manifest["audit"]["verdict"]
    said = manifest["audit"]["summary"].removeprefix(f"{verdict}: ")  # said once
    lines.append(f"Release audit: {verdict}" + (f": {said}" if said else ""))
    return [TITLE, *(part for line in lines for part in _wrapped(line))]


def _wrapped(line: str) -> list[str]:
    """A long line broken at ``WIDTH``, its continuation indented two more spaces."""
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    return textwrap.wrap(line, width=WIDTH, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [line]
