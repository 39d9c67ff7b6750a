"""CTGAN and CART on 4,000 Adult records with ``[audit] max_minutes = 3`` (issue 32, item 6).

A CTGAN fit takes seconds to minutes on a CPU, so its audit (100 to 2,000 refits) does not fit
in three minutes: the trial the release would take is passed over with the reason, never a stop
and never released unaudited, and the next candidate is audited. On Adult, CTGAN at affordable
epochs never has the better risk-utility loss (U about 0.6 against CART's 0.9), so the study
runs in Pareto mode releasing the front point with the lowest M (``pareto_pick = "risk"``),
which is CTGAN's: the release must pass it over. One CTGAN trial (20 epochs) and two CART trials
are enqueued so that the run does not depend on the sampler's first draws.

    python -m experiments.release_audit.passed_over            # about 5 minutes on 2 cores

It prints the tuner's own output (the trials, why each was refused, the release summary) and
exits with the tuner's exit code (0: an audited release). The data and the study stay in
``--work`` (``/tmp/passed_over``).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from experiments.datasets import read_adult
from tuner._common.quiet import quiet_libraries
from tuner.api import load_config
from tuner.cli import main as cli_main
from tuner.search import open_study, prepare

ROWS = 4000


STUDY = """\
[data]
path = "{work}/adult4000.csv"
population_size = 48842

[study]
name = "ctgan-cart"
synthesizers = ["ctgan", "cart"]
n_trials = 3
seed = 2026
output = "{work}/out"
mode = "pareto"
pareto_pick = "risk"

[risk]
attribute_keys = ["age", "sex", "race", "marital_status", "education", "native_country"]
cap_targets = ["income"]
inference_targets = ["income"]

[utility]
metric = "quality_report"

[space.ctgan]
epochs = [20, 20]
batch_size = [500]

[space.cart]
min_samples_leaf = [20, 200]

[audit]
max_minutes = 3
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/passed_over"))
    args = parser.parse_args(argv)
    quiet_libraries()  # as the command line does, from the study's creation on
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    read_adult().sample(ROWS, random_state=7).to_csv(args.work / "adult4000.csv", index=False)
    path = args.work / "study.toml"
    path.write_text(STUDY.format(work=args.work))
    study = open_study(prepare(load_config(path)))
    for name in ("ctgan", "cart", "cart"):
        study.enqueue_trial({"synthesizer": name})
    return cli_main(["run", str(args.work / "study.toml"), "--no-progress"])


if __name__ == "__main__":
    raise SystemExit(main())
