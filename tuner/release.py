"""Release candidate (DESIGN section 9): the best feasible trial, re-created and exported.

The synthetic data are made again from the trial's synthesiser, parameters and seed (nothing
was pickled) and scored again; the release is refused if the re-created data do not meet every
constraint. ``release/`` holds the synthetic data, ``manifest.json`` (fingerprint of the data,
never the data; synthesiser, parameters, seeds, package versions, every metric and interval,
each constraint and whether it passed), ``split.json`` (custodian-only: which rows of the data
file were the training records, to recompute M independently) and ``report.md`` with plots.
"""

from __future__ import annotations

import dataclasses
import json
import platform
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import optuna
from filelock import FileLock

import risk
from tuner import plots
from tuner.objective import Evaluation, evaluate
from tuner.study import Context, best_feasible, trials_frame

EXIT_NO_RELEASE = 3
PACKAGES = ("risk-tuner", "sdv", "sdmetrics", "optuna", "mlflow", "torch", "scikit-learn",
            "pandas", "numpy")


class NoFeasibleTrial(RuntimeError):
    """No trial met every constraint; the message says which failed how often."""


def explain_infeasible(study: optuna.Study) -> str:
    """Which constraint failed how often, and what to try."""
    frame = trials_frame(study)
    complete = frame[frame["state"] == "COMPLETE"] if len(frame) else frame
    lines = [f"No feasible trial among {len(frame)} finished ({len(complete)} completed)."]
    for col in [c for c in complete.columns if c.startswith("c.")]:
        failed = int((complete[col] > 0).sum())
        lines.append(f"  constraint {col[2:]!r} failed in {failed}/{len(complete)} trials "
                     f"(best margin {complete[col].min():+.4f}; must be <= 0)")
    failed_runs = frame[frame["state"] == "FAIL"] if len(frame) else frame
    if len(failed_runs):
        reasons = failed_runs["fail_reason"].replace("", "(no reason recorded)").value_counts()
        lines.append(f"  {len(failed_runs)} trial(s) raised:")
        lines += [f"    {n} x {reason}" for reason, n in reasons.items()]
    if not len(complete):
        lines.append("What to try: no trial completed, so no risk was measured; fix the error(s) "
                     "above (data, config or synthesiser) and run the same command again.")
        return "\n".join(lines)
    lines += [
        "What to try: more trials; the 'cart' synthesiser with larger min_samples_leaf "
        "(narrow [space.cart] min_samples_leaf = [20, 200]); fewer quasi-identifiers if the "
        "intruder cannot know them all; check data.population_size (a too small N inflates M); "
        "raise risk.cap_limit / risk.inference_limit only if your disclosure policy allows.",
    ]
    return "\n".join(lines)


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _report(ev: Evaluation, ctx: Context, folder: Path, figures: dict[str, str]) -> str:
    m = ev.membership
    lines = [
        f"# Release candidate: {ev.synthesizer}", "",
        f"Study `{ctx.cfg.study.name}`; data fingerprint `{ctx.fingerprint[:16]}...`; "
        f"{len(ctx.split.train)} training and {len(ctx.split.holdout)} holdout records; "
        f"population size N = {ctx.cfg.data.population_size}.", "",
        "| measure | value |", "|---|---|",
        f"| utility U ({ctx.cfg.utility.metric}) | {ev.utility:.4f} |",
        f"| membership disclosure M (h = {m.hamming_threshold}) | {m.m:.4f} "
        f"[{m.m_interval.low:.4f}, {m.m_interval.high:.4f}] |",
        f"| adversary F1 / naive F1 (t = {m.sampling_fraction:.4f}) | {m.f1:.4f} / "
        f"{m.f_naive:.4f} |",
        f"| risk-utility loss | {ev.loss.loss:.4f} |",
    ]
    for t, c in ev.caps.items():
        lines.append(f"| CAP v1 of {t!r}: train / holdout / baseline | {c.cap_v1:.4f} / "
                     f"{c.holdout_cap_v1:.4f} / {c.baseline:.4f} |")
    for t, r in ev.inference.items():
        lines.append(f"| inference risk of {t!r}: train / holdout / baseline | {r.risk:.4f} / "
                     f"{r.holdout_risk:.4f} / {r.baseline:.4f} |")
    lines += ["", "| constraint (feasible when <= 0) | value | passed |", "|---|---|---|"]
    lines += [f"| {k} | {v:+.4f} | {'yes' if v <= 0 else 'NO'} |"
              for k, v in ev.constraints.items()]
    lines += ["", "Parameters: `" + json.dumps(ev.params, default=str) + f"`, seed {ev.seed}.",
              "", "The synthetic data are in this folder; the model is not (it holds real "
              "values); the release is re-creatable from the parameters and seed by the "
              "custodian.", ""]
    for title, name in figures.items():
        lines += [f"## {title}", "", f"![{title}]({name})", ""]
    return "\n".join(lines)


def export(ctx: Context, study: optuna.Study, folder: Path | None = None) -> Path:
    """Re-create the best feasible trial's data and write the release folder."""
    best = best_feasible(study)
    if best is None:
        raise NoFeasibleTrial(explain_infeasible(study))
    folder = folder or ctx.output / "release"
    folder.mkdir(parents=True, exist_ok=True)
    # invocations working on one study each export at their end: one writer at a time
    with FileLock(str(folder.parent / f".{folder.name}.lock"), timeout=3600):
        return _export(ctx, best, folder)


def _export(ctx: Context, best: optuna.trial.FrozenTrial, folder: Path) -> Path:
    name = best.params["synthesizer"]
    params = {k.split(".", 1)[1]: v for k, v in best.params.items() if k.startswith(f"{name}.")}
    seed = int(best.user_attrs["seed"])
    ev = evaluate(ctx.cfg, ctx.split, name, params, seed=seed)
    if not ev.feasible:
        raise NoFeasibleTrial(
            f"trial {best.number} was feasible but its re-created data are not "
            f"(constraints {ev.constraints}); the synthesiser is not reproducible here")
    ev.synthetic.to_csv(folder / "synthetic.csv", index=False)
    figures = {"Adversary F1 against the Hamming threshold": "f1_curve.png"}
    plots.f1_curve(ev.membership.f1_by_threshold, ev.membership.f_naive,
                   ev.membership.hamming_threshold, folder / "f1_curve.png")
    keys = list(ctx.cfg.risk.cap_keys)
    for t in ctx.cfg.risk.cap_targets:
        kw: dict[str, Any] = dict(keys=keys, target=t, numeric_bins=ctx.cfg.risk.numeric_bins,
                                  missing="category")
        before = risk.cap_per_record(ctx.split.train, ctx.split.train, **kw).to_numpy()
        after = risk.cap_per_record(ctx.split.train, ev.synthetic, **kw).to_numpy()
        fname = f"cap_scatter_{t}.png"
        plots.cap_scatter(before, after, t, folder / fname, seed=seed)
        figures[f"Record-level CAP of {t!r}: original vs synthetic"] = fname
    cfg = ctx.cfg
    manifest: dict[str, Any] = {
        "study": cfg.study.name, "trial": best.number, "synthesizer": name, "params": params,
        "seeds": {"study": cfg.study.seed, "trial": seed},
        "data": {"fingerprint_sha256": ctx.fingerprint, "rows": len(ctx.frame),
                 "columns": list(map(str, ctx.frame.columns)),
                 "population_size": cfg.data.population_size,
                 "population_note": cfg.data.population_note},
        "split": {"train_fraction": cfg.data.train_fraction, "stratify": cfg.data.stratify,
                  "n_train": len(ctx.split.train), "n_holdout": len(ctx.split.holdout),
                  "rows_file": "split.json"},
        "config": {k: _plain(v) for k, v in dataclasses.asdict(cfg.risk).items()}
        | {"utility_metric": cfg.utility.metric,
           "quasi_identifiers": list(cfg.data.quasi_identifiers or ctx.frame.columns)},
        "metrics": ev.metrics(),
        "membership": ev.membership.to_dict(),
        "constraints": {k: {"value": v, "passed": v <= 0} for k, v in ev.constraints.items()},
        "versions": _versions(),
        "synthetic_file": "synthetic.csv",
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    (folder / "split.json").write_text(json.dumps({
        "note": "custodian-only: 0-based row positions of the data file used for training",
        "train_rows": ctx.split.train_positions.tolist(),
        "holdout_rows": ctx.split.holdout_positions.tolist()}))
    (folder / "report.md").write_text(_report(ev, ctx, folder, figures))
    return folder


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
