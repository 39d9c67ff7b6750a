"""anonymeter's singling-out and linkability risks on the release-audit experiment's releases.

anonymeter (Giomi et al., PoPETs 2023; statice/anonymeter) pins pandas and numpy versions the
project does not use, so this script runs in an environment of its own and imports nothing of
ours: it reads the CSV files ``run.py`` leaves in its work folder (the releases, and the
training and audit records, which are confidential and never leave that folder).

    python -m venv /tmp/venv-anon && /tmp/venv-anon/bin/pip install anonymeter
    /tmp/venv-anon/bin/python experiments/release_audit/anonymeter_risks.py \
        --work /tmp/release_audit --out experiments/release_audit/results/anonymeter.csv

For each release: ``ori`` = the training records, ``syn`` = the release, ``control`` = the sealed
audit records (never seen by the generator: anonymeter's baseline); singling out in univariate
mode and linkability with the columns split into two halves an intruder would hold separately,
500 attacks each, the risk with its 95 % interval as anonymeter reports it.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

import pandas as pd
from anonymeter.evaluators import LinkabilityEvaluator, SinglingOutEvaluator

ATTACKS = 500


def _risks(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame) -> dict[str, float]:
    out: dict[str, float] = {}
    single = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=ATTACKS)
    single.evaluate(mode="univariate")
    risk = single.risk()
    out |= {"singling_out": risk.value, "singling_out_low": risk.ci[0],
            "singling_out_high": risk.ci[1]}
    cols = list(ori.columns)
    half = len(cols) // 2
    link = LinkabilityEvaluator(ori=ori, syn=syn, control=control, n_attacks=ATTACKS,
                                aux_cols=(cols[:half], cols[half:]), n_neighbors=10)
    link.evaluate(n_jobs=1)
    risk = link.risk()
    return out | {"linkability": risk.value, "linkability_low": risk.ci[0],
                  "linkability_high": risk.ci[1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/release_audit"))
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "anonymeter.csv")
    args = parser.parse_args()
    done = set()
    if args.out.exists():
        done = {(r["dataset"], r["generator"]) for r in csv.DictReader(args.out.open())}
    for path in sorted(args.work.glob("release_*.csv")):
        name, generator = re.match(r"release_([a-z]+)_(.*)\.csv", path.name).groups()
        if (name, generator) in done:
            continue
        ori = pd.read_csv(args.work / f"{name}_train.csv")
        control = pd.read_csv(args.work / f"{name}_audit.csv")
        syn = pd.read_csv(path)[list(ori.columns)]
        row = {"dataset": name, "generator": generator, **_risks(ori, syn, control)}
        print(row, flush=True)
        new = not args.out.exists()
        with args.out.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
