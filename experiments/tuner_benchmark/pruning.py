"""Neural families with and without checkpoints and pruning, at one wall-clock budget (issue 46).

For each seed, one study of CTGAN + TVAE per arm on the same Adult records, each given the same
``study.timeout`` (and ``budget_minutes``) on the same cores: ``full``, every trial trained to
its drawn epochs and scored once (``[study] checkpoints = false``, the search before issue 46);
``pruned``, the product's defaults: trials scored at their checkpoints (epochs 5 x 3^k and
their last), each allowed the most epochs of its family's range (the pruner's resource), the
best feasible checkpoint its candidate (a pruned trial's too), stopped after two checkpoints
over a risk limit and pruned by successive halving within its family, the first trial of a
family at each rung pruned there (``pruner_bootstrap = 1``). With ``--arms``, two more:
``hyperband`` and ``halving``, epochs drawn and no bootstrap (the defaults before, and their
successive-halving variant). All use the product's spaces, objective and constraints (the
benchmark's ``[risk]``, ``[utility]``), public seeds, no release audit. Printed and written
to ``--results`` (``pruning.csv``, ``pruning.md``; rows of arms not run are kept from the
``pruning.csv`` there): configurations tried (trials started), completed, pruned, and the best
feasible loss (lower is better).

    python -m experiments.tuner_benchmark.pruning --rows 10000 --budget 480 --seeds 0 1 2

(the issue's size: six studies of 8 minutes, about 50 minutes of both cores).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from experiments.tuner_benchmark.plan import load
from tuner import tune
from tuner.search import best_feasible, loss_of

HERE = Path(__file__).resolve().parent
# each arm's [study] keys; "pruned" is the product's defaults since the benchmark of 2026-12-06
# (fourth); "hyperband" and "halving" the arms of the runs before it (the first was then the
# defaults, and the tables before 2026-12-06's fourth call it "pruned")
ARMS = {"full": {"checkpoints": False, "pruner": "none"},
        "pruned": {"checkpoints": True, "pruner": "halving", "pruner_bootstrap": 1,
                   "epochs_drawn": False},
        "hyperband": {"checkpoints": True, "pruner": "hyperband", "pruner_bootstrap": 0,
                      "epochs_drawn": True},
        "halving": {"checkpoints": True, "pruner": "halving", "pruner_bootstrap": 0,
                    "epochs_drawn": True}}
DEFAULT_ARMS = ["full", "pruned"]  # the comparison; the others with --arms


def run_arm(raw: dict[str, Any], arm: str, output: Path) -> dict[str, Any]:
    """One study of ``arm``; its counts and best feasible loss."""
    cfg = copy.deepcopy(raw)
    # the job's time budget too: a checkpointed trial stops after the epoch under way once the
    # budget is spent (a full-fidelity one runs to its end, as the search before issue 46 did)
    cfg["study"] |= {**ARMS[arm], "name": f"{cfg['study']['name']}-{arm}",
                     "output": str(output), "budget_minutes": cfg["study"]["timeout"] / 60}
    start = time.monotonic()
    tuned = tune(cfg)
    took = time.monotonic() - start
    study = tuned.optuna_study
    states = [t.state for t in study.get_trials(deepcopy=False)]
    best = best_feasible(study)
    return {"arm": arm, "tried": len(states),
            "complete": states.count(optuna.trial.TrialState.COMPLETE),
            "pruned": states.count(optuna.trial.TrialState.PRUNED),
            "best_loss": loss_of(best) if best else math.nan,
            "best_family": best.params["synthesizer"] if best else "",
            "seconds": round(took, 1)}


def _verdicts(frame: pd.DataFrame) -> list[str]:
    """Each checkpointed arm against ``full``, seed by seed (the issue's test: better in at least
    2 of 3 seeds and on average, with at least 3 times the configurations)."""
    if "full" not in frame.arm.values:
        return []
    wide = frame.pivot(index="seed", columns="arm", values="best_loss")
    full = frame[frame.arm == "full"]
    lines = []
    for arm in [a for a in ARMS if a != "full" and a in frame.arm.values]:
        both = wide[[arm, "full"]].dropna()
        better = int((both[arm] < both["full"]).sum())
        mine = frame[frame.arm == arm]
        lines.append(f"{arm} ({ARMS[arm]['pruner']}) better in {better} of {len(both)} seeds; "
                     f"mean best loss {mine.best_loss.mean():.4f} vs {full.best_loss.mean():.4f} "
                     f"(full); configurations tried {mine.tried.sum()} vs {full.tried.sum()} "
                     f"({mine.tried.sum() / full.tried.sum():.1f}x)")
    return lines


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000, help="Adult records drawn")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds per study")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-epochs", type=int, default=300,
                        help="the epochs' range narrowed to [1, this] (300: the product's own)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tuner_pruning"))
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=DEFAULT_ARMS,
                        help="the arms run (default: full and pruned); the other arms' rows "
                             "are read from --results' pruning.csv, e.g. the pruned arm again "
                             "after a change to pruning alone")
    args = parser.parse_args(argv)
    plan = load(datasets=["adult"], budget=args.budget)
    adult = dataclasses.replace(plan.datasets[0], rows=args.rows)
    args.work.mkdir(parents=True, exist_ok=True)
    data = args.work / "adult.csv"
    adult.read().to_csv(data, index=False)
    kept = args.results / "pruning.csv"
    old = pd.read_csv(kept) if kept.exists() else None
    rows = [] if old is None else old[~old.arm.isin(args.arms)
                                      & old.seed.isin(args.seeds)].to_dict("records")
    for seed in args.seeds:
        raw = plan.tuner_config(adult, data, seed, args.work / f"seed-{seed}")
        raw["study"]["synthesizers"] = ["ctgan", "tvae"]
        # the product's own spaces (epochs 1-300), not the benchmark's narrowed ones
        raw["space"] = {} if args.max_epochs >= 300 else {
            name: {"epochs": [1, args.max_epochs]} for name in ("ctgan", "tvae")}
        for arm in args.arms:
            row = {"seed": seed, **run_arm(raw, arm, args.work / f"seed-{seed}-{arm}")}
            print(row, flush=True)
            rows.append(row)
    frame = pd.DataFrame(rows).sort_values(["seed", "arm"], ignore_index=True)
    args.results.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.results / "pruning.csv", index=False)
    lines = [f"# Checkpoints and pruning vs full-fidelity trials: Adult, {args.rows:,} records, "
             f"ctgan + tvae, {args.budget:g} s a study, seeds {args.seeds}", "",
             frame.to_markdown(index=False), ""] + _verdicts(frame)
    (args.results / "pruning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return frame


if __name__ == "__main__":
    main()
