"""The release's report for a disclosure-review board (``release/report.md``).

Every enabled measure of :data:`tuner.measures.MEASURES` contributes its rows (value, limit,
one sentence of what it means); the constraints follow with whether each passed. No real
record is ever written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tuner import measures
from tuner.context import Context
from tuner.evaluation import Evaluation


def measure_rows(ev: Evaluation, ctx: Context) -> pd.DataFrame:
    """One row per reported number, from the registry's report functions."""
    rows = [measures.ReportRow(f"utility U ({ctx.cfg.utility.metric})", f"{ev.utility:.4f}", "",
                               "1 is a perfect copy of the training data's distributions."),
            measures.ReportRow("risk-utility loss", f"{ev.loss.loss:.4f}", "",
                               "-w(M) U, minimised by the study (El Emam et al. 2022).")]
    for name, outcome in ev.outcomes.items():
        spec = measures.MEASURES[name]
        if spec.report is None:
            continue
        for label, result in outcome.results.items():
            rows += spec.report(label, result, ctx.cfg.risk)
    return pd.DataFrame([r.__dict__ for r in rows])


def markdown(ev: Evaluation, ctx: Context, trial: int, figures: dict[str, str]) -> str:
    """The report's Markdown text."""
    cfg = ctx.cfg
    constraints = pd.DataFrame(
        [{"constraint (feasible when <= 0)": k, "value": f"{v:+.4f}",
          "passed": "yes" if v <= 0 else "NO"} for k, v in ev.constraints.items()])
    lines = [
        f"# Release candidate: {ev.synthesizer} (trial {trial})", "",
        f"Study `{cfg.study.name}`; data fingerprint `{ctx.fingerprint[:16]}...`; "
        f"{len(ctx.split.train)} training and {len(ctx.split.holdout)} holdout records; "
        f"population size N = {cfg.data.population_size}.", "",
        measure_rows(ev, ctx).to_markdown(index=False), "",
        constraints.to_markdown(index=False), "",
        "Parameters: `" + json.dumps(ev.params, default=str) + f"`, seed {ev.seed}.", "",
        "The synthetic data are in this folder; the model is not (it holds real values); the "
        "release is re-creatable from the parameters and seed by the custodian.", "",
    ]
    for title, name in figures.items():
        lines += [f"## {title}", "", f"![{title}]({name})", ""]
    return "\n".join(lines)


def write(folder: Path, ev: Evaluation, ctx: Context, trial: int,
          figures: dict[str, str]) -> Path:
    path = folder / "report.md"
    path.write_text(markdown(ev, ctx, trial, figures))
    return path
