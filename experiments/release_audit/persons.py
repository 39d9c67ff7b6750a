"""Does the per-person verdict find one exposed person, and leave alone a generator that exposes
nobody? (issue 44, "what it must show").

Each cell plays :func:`risk.membership_audit` at the demo's settings (40 targets x 300 shadow
tables of 1,000 records in the shared design; 20 x 100 per target) on Adult (3,000 training,
1,800 reference records, as ``calibration.py``) and decides with
:meth:`risk.MembershipAuditResult.verdict` (``tpr_limit`` 0.05, ``alpha`` 0.05), ``--audits``
times over seeds, in both designs, with generators whose truth is known:

* ``blind``: records of 6,000 other people, whatever the table (no leak: a refusal is a false
  alarm);
* ``one_person_s``: the same, plus a near copy of one chosen training record (the seventh most
  vulnerable; its ``fnlwgt`` moved by 1) in a share ``s`` of the tables that hold it (1, 0.5,
  0.25): one person exposed, nobody else;
* ``gaussian_copula``: SDV's Gaussian copula fitted on the table (a realistic near-null
  generator), on data protected as the tuner protects them (``[data] protect_k`` = 10), shared
  design only (its per-target game is 2,000 fits).

A cell reports how often the verdict refused (with its exact Clopper-Pearson 95 % interval),
how often the per-person part flagged someone, how often the pooled bound alone refused, the
people with a signal not shown beyond the limit, the largest own TPR at 1 % FPR of anyone not
chosen, and, for ``one_person``, how often the chosen person was the worst target and their
own TPR.

    python -m experiments.release_audit.persons --audits 8            # the committed table
    python -m experiments.release_audit.persons --quick               # a smoke size
    python -m experiments.release_audit.persons --audits 60 --only blind:shared blind:per_target
    python -m experiments.release_audit.persons --summary-only

Rows are appended to ``results/persons_size.csv`` as each audit finishes (a rerun skips what is
there; the rows of the randomisation test alone are in ``persons_fits.csv``, those before the
bound over fits in ``persons.csv``); ``results/persons.md``
holds the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

import risk
from experiments.datasets import read_adult
from experiments.reporting import append_rows, share_with_interval

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
# rows since the per-person test's size part (a person flagged only when their own TPR is shown
# beyond tpr_limit too); persons_fits.csv holds the rows of the randomisation test alone at the
# default game, persons.csv those before the bound over fits (20 x 100, the clustered interval):
# kept, no longer summarised
CSV = RESULTS / "persons_size.csv"
TABLE = RESULTS / "persons.md"
N_TRAIN, N_REFERENCE, N_POOL = 3000, 1800, 6000
TARGETS, SHADOWS, SHADOW_SIZE = 40, 300, 1000  # the default game (shared)
# per target the game is targets x shadows fits: 12,000 at the default, so that design plays
# 20 x 100 (2,000 fits, Clopper-Pearson's bound: valid at any size)
PER_TARGET = (20, 100)
CHOSEN = 6  # the seventh most vulnerable training record is the one exposed


def _hash(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


@dataclasses.dataclass(frozen=True)
class Blind:
    """Records of ``pool``, as many as the table, whatever it holds; with ``share`` > 0, a near
    copy of ``person`` (``fnlwgt`` + 1) in that share of the tables that hold it (a coin per
    fit, from its seed)."""

    pool: pd.DataFrame
    person: pd.DataFrame | None = None
    share: float = 0.0

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        out = self.pool.sample(len(table), replace=True,
                               random_state=seed).reset_index(drop=True)
        if self.person is not None and np.isin(_hash(self.person), _hash(table)).any() \
                and np.random.default_rng([seed, 1]).random() < self.share:
            near = self.person.copy()
            near["fnlwgt"] = near["fnlwgt"] + 1
            out.iloc[[0]] = near.to_numpy()
        return out


@dataclasses.dataclass(frozen=True)
class Copula:
    """SDV's Gaussian copula fitted on the table, as a trial fits it."""

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        from tuner.release import ReleasedFamily

        return ReleasedFamily("gaussian_copula", {}, "cpu", "remove")(table, seed)


def _frames(protect_k: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    adult = read_adult().sample(N_TRAIN + N_REFERENCE + N_POOL, random_state=2026)
    adult = adult.reset_index(drop=True)
    train = adult.iloc[:N_TRAIN].reset_index(drop=True)
    reference = adult.iloc[N_TRAIN:N_TRAIN + N_REFERENCE].reset_index(drop=True)
    pool = adult.iloc[N_TRAIN + N_REFERENCE:].reset_index(drop=True)
    if protect_k:
        from tuner.data import protect

        coded, _ = protect({"train": train, "holdout": reference, "pool": pool}, protect_k)
        train, reference, pool = coded["train"], coded["holdout"], coded["pool"]
    return train, reference, pool


def cells(quick: bool) -> list[tuple[str, str]]:
    generators = ["blind", "one_person_1", "one_person_0.5", "one_person_0.25"]
    # the shared design first: 100 fits an audit, where the per-target game plays 2,000
    shared = [(g, "shared") for g in generators]
    per_target = [(g, "per_target") for g in generators]
    return shared + per_target if quick else shared + [("gaussian_copula", "shared")] + per_target


def run_cell(generator: str, design: str, seed: int, jobs: int) -> dict[str, object]:
    train, reference, pool = _frames(10 if generator == "gaussian_copula" else 0)
    order = risk.vulnerability(train, reference=reference).sort_values(
        ascending=False, kind="stable").index
    chosen = order[CHOSEN]
    if generator == "gaussian_copula":
        fit_sample = Copula()
    elif generator == "blind":
        fit_sample = Blind(pool)
    else:
        fit_sample = Blind(pool, train.loc[[chosen]], float(generator.rsplit("_", 1)[1]))
    start = time.perf_counter()
    k, r = (TARGETS, SHADOWS) if design == "shared" else PER_TARGET
    res = risk.membership_audit(train, reference, fit_sample, targets=k, shadows=r,
                                shadow_size=SHADOW_SIZE, design=design, n_jobs=jobs,
                                random_state=seed)
    verdict = res.verdict()
    return {"generator": generator, "design": design, "seed": seed,
            "refused": verdict.refused, "person_flagged": verdict.n_flagged > 0,
            "pooled_refused": verdict.pooled_refused, "flagged": verdict.n_flagged,
            "signalled": verdict.n_signalled,
            "chosen_tpr": verdict.target_tpr[list(res.target_labels).index(chosen)]
            if chosen in res.target_labels else float("nan"),
            "largest_other_tpr": max((t for lab, t in zip(res.target_labels, verdict.target_tpr,
                                                           strict=True) if lab != chosen),
                                     default=float("nan")),
            "worst_is_chosen": verdict.worst_target == chosen,
            "chosen_p": verdict.target_p_values[list(res.target_labels).index(chosen)]
            if chosen in res.target_labels else float("nan"),
            "worst_p": verdict.worst_p_value, "pooled_upper": verdict.pooled_upper,
            "seconds": time.perf_counter() - start}


def summarise(frame: pd.DataFrame) -> str:
    rows = []
    for (gen, design), cell in frame.groupby(["generator", "design"], sort=False):
        one = gen.startswith("one_person")
        rows.append({
            "generator": gen, "design": design, "audits": len(cell),
            "refused [95 % CI]": share_with_interval(cell["refused"]),
            "someone flagged": share_with_interval(cell["person_flagged"]),
            "pooled bound alone refused": share_with_interval(cell["pooled_refused"]),
            "worst target is the exposed person": (
                share_with_interval(cell["worst_is_chosen"]) if one else ""),
            "median p of the exposed person": f"{cell['chosen_p'].median():.2g}" if one else "",
            "median own TPR of the exposed person": f"{cell['chosen_tpr'].median():.2f}" if one
            else "",
            "largest own TPR of anyone else": f"{cell['largest_other_tpr'].max():.2f}",
            "people with a signal, flagged or not (mean)": f"{cell['signalled'].mean():.1f}",
            "seconds per audit": f"{cell['seconds'].mean():.0f}"})
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    head = (f"Adult: 3,000 training, 1,800 reference records; shared: {TARGETS} targets x "
            f"{SHADOWS} shadow tables of {SHADOW_SIZE:,}, per target: {PER_TARGET[0]} x "
            f"{PER_TARGET[1]}; verdict at tpr_limit 0.05, alpha 0.05 (Holm over each person's "
            "intersection-union p-value: the randomisation test and their own TPR at 1 % FPR "
            "against the limit), the pooled bound one-sided at 95 % over the test fits. "
            "`python -m experiments.release_audit.persons --audits 8`, then `--audits 60 --only "
            "blind:shared blind:per_target` for the no-leak rate. [a, b]: the exact "
            "(Clopper-Pearson) 95 % interval.\n\n")
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audits", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="2 audits, no copula")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--only", nargs="*", metavar="GENERATOR:DESIGN",
                        help="these cells only, e.g. blind:shared (more no-leak audits)")
    args = parser.parse_args(argv)
    audits = 2 if args.quick else args.audits
    if not args.summary_only:
        done = pd.read_csv(CSV) if CSV.exists() else pd.DataFrame(
            columns=["generator", "design", "seed"])
        seen = set(zip(done["generator"], done["design"], done["seed"], strict=True))
        chosen = [tuple(c.split(":", 1)) for c in args.only] if args.only else cells(args.quick)
        for gen, design in chosen:
            for seed in range(audits):
                if (gen, design, seed) in seen:
                    continue
                row = run_cell(gen, design, seed, args.jobs)
                append_rows(CSV, [row])
                print(f"{gen:16} {design:10} seed {seed}: refused={row['refused']} "
                      f"flagged={row['flagged']} worst_p={row['worst_p']:.2g} "
                      f"({row['seconds']:.0f} s)", flush=True)
    TABLE.write_text(summarise(pd.read_csv(CSV)))
    print(TABLE.read_text())


if __name__ == "__main__":
    main()
