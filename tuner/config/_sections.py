"""The config's plain sections as dataclasses: ``[data]``, ``[study]``, ``[audit]``,
``[utility]``, each key with its default and one line of help (:func:`tuner.config.key`;
the config reference, ``docs/config.md``, prints them). ``[risk]`` comes from the measure
registry and ``[space.FAMILY]`` from the synthesiser registry (:mod:`tuner.config`)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from risk.params import Choices, Range
from tuner.config._values import key
from tuner.synthesis import SYNTHESIZERS

UTILITY_METRICS = ("quality_report", "hellinger", "efficacy")
DEVICES = ("cpu", "cuda")
MODES = ("single", "pareto")
DP_DOMAINS = ("codebook", "data")  # where a DP family's domain may come from ([data] dp_domain)
PICK_RULES = ("utility", "loss", "risk")  # which front point a Pareto study releases
PRUNERS = ("hyperband", "halving", "none")  # what stops a neural trial at a checkpoint
AUDIT_DESIGNS = ("auto", "per_target", "shared")
AUDIT_BACKENDS = ("local", "dask")  # where the refits run (tuner.release._audit_backend)

AT_LEAST_ONE = Range(1)
DEFAULT_TRIALS = 20  # [study] n_trials unset, without a budget_minutes
UNBOUNDED = sys.maxsize  # [study] n_trials unset, with one: the job's clock decides


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """The ``[data]`` section: the table, what an intruder may know, and the split."""

    path: Path = key(help="the table: a CSV (.csv, .data, .test, .txt) or Parquet file, relative "
                          "to the config's folder; or builtin:adult, builtin:fair")
    population_size: int = key(help="N, the people the table was drawn from (M's t = n_train / N);"
                                    " at least the table's records", valid=Range(2))
    population_note: str = key("", help="where N comes from, shown in the report")
    columns: tuple[str, ...] | None = key(None, help="the columns to use (default: every one)")
    header_names: tuple[str, ...] | None = key(
        None, help="names for a CSV without a header row (UCI's adult.data)")
    missing_values: tuple[str, ...] = key((), help='extra strings read as missing, e.g. ["?"]')
    keys: tuple[str, ...] | None = key(
        None, help="what an intruder may know of a person: the quasi-identifiers M's attack "
                   "matches on (default: every column)")
    train_fraction: float = key(0.5, help="share of the records the synthesisers are fitted on",
                                     valid=Range(0, 1, closed="neither"))
    audit_fraction: float = key(
        0.2, help="share sealed for the release audit, read at release only (0: none); the "
                  "holdout is what is left", valid=Range(0, 1, closed="left"))
    stratify: str | None = key(None, help="a column the split keeps the shares of")
    missing_codes: dict[str, tuple[Any, ...]] | None = key(
        None, help="per column, codes read as missing, e.g. {income = [-8]} (SD2011)")
    dates: dict[str, str] | None = key(
        None, help='per column, the date format of a CSV column, e.g. {BIRTHDATE = "%d/%m/%Y"} '
                   "(other date columns are detected); read as dates, released in that format")
    metadata: Path | None = key(
        None, help="SDV metadata JSON (single-table, or multi-table with one table), relative to "
                   "the config's folder: sdtypes, datetime formats; PII, id and key columns are "
                   "released as fake values")
    identifiers: tuple[str, ...] = key((), help="direct identifiers: dropped before anything else")
    codebook: Path | None = key(
        None, help="the public domain, JSON or CSV, relative to the config's folder: per column "
                   'its categories, its range or "public" (docs/usage.md, "The codebook"); the '
                   "DP families' bins and every family's range come from it, and value "
                   "protection leaves its columns alone")
    dp_domain: str = key("codebook", help='"codebook": mst and aim need every column in '
                                          '[data] codebook (else exit 2); "data": a domain read '
                                          "from the data is accepted, and the release is then "
                                          "said not to be DP", valid=Choices(DP_DOMAINS))
    protect_k: int = key(10, help="value protection before any fit: numbers and dates beyond the "
                                 "k-th largest or smallest training value top- or bottom-coded "
                                 "to it, categories held by fewer than k training records merged "
                                 "into one protected level (0: off; full synthesis only)",
                                 valid=Range(0, note="0: off"))
    keep_as_data: tuple[str, ...] = key(
        (), help="columns found as direct identifiers (by name, content or uniqueness) that are "
                 "not: kept and synthesised as data (else refused)")


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """The ``[study]`` section: what is searched, how long, where it is stored."""

    name: str = key("risk-tuner", help="the study's name in Optuna and MLflow")
    synthesizers: tuple[str, ...] = key(("gaussian_copula", "cart"),
                                        help="families searched (see [space.FAMILY] below)",
                                        valid=Choices(SYNTHESIZERS))
    n_trials: int | None = key(None, help="trial budget, over every worker; none: 20, or as "
                                          "many as budget_minutes leaves time for when it is "
                                          "set", valid=AT_LEAST_ONE)
    timeout: float | None = key(None, help="seconds after which no trial starts",
                                      valid=Range(0, closed="neither", unit="seconds"))
    budget_minutes: float | None = key(
        None, help="minutes for the whole job, trials and release audit: the search keeps back "
                   "the audit time estimated from the candidates' own fits (and a refusal's); "
                   "one too small for any audit is refused before the first trial",
                   valid=Range(0, closed="neither", unit="minutes"))
    seed: int = key(0, help="the one seed everything derives from (split, samplers, fits), "
                            "mixed with the study's secret", valid=Range(0))
    public_seed: bool = key(False, help="true: no secret, the split, fits and DP noise follow "
                                        "from seed alone (tests, demos on public data; anyone "
                                        "who guesses it rebuilds the split)")
    workers: int = key(1, help="worker processes on this machine", valid=AT_LEAST_ONE)
    output: Path = key(Path("runs"), help="output folder (study.db, mlflow.db, release/)")
    storage: str | None = key(None, help="Optuna storage URL (default: SQLite in output); "
                                         "postgresql://... for many machines")
    mlflow_uri: str | None = key(None, help="MLflow tracking URI (default: SQLite in output)")
    device: str = key("cpu", help='"cpu" or "cuda" for the neural families', valid=Choices(DEVICES))
    sample_size: int | None = key(None, help="synthetic records per trial (default: n_train)",
                                        valid=Range(1, unit="rows"))
    synthesize: tuple[str, ...] | None = key(
        None, help="partial synthesis: the columns to synthesise (default: every column)")
    synthetic_sets: int = key(1, help="m released sets per trial (Reiter 2003), partial "
                                      "synthesis only", valid=AT_LEAST_ONE)
    mode: str = key("single", help='"single": minimise the risk-utility loss; "pareto": '
                                   "maximise U and minimise M", valid=Choices(MODES))
    pareto_pick: str = key("utility", help='the front point released in Pareto mode: "utility",'
                                           ' "loss" or "risk"', valid=Choices(PICK_RULES))
    checkpoints: bool = key(True, help="neural families (ctgan, tvae, copulagan) scored at "
                                       "epochs first_checkpoint x 3^k and at their last: the "
                                       "trial's candidate is its best feasible checkpoint "
                                       "(full synthesis only)")
    first_checkpoint: int = key(5, help="the first epoch count a neural trial is scored at",
                                   valid=Range(1, unit="epoch"))
    patience: int = key(2, help="a neural trial stops training after this many checkpoints in "
                                "a row over a risk limit (it only memorises more)",
                                valid=Range(1, unit="checkpoint"))
    pruner: str = key("halving", help='stops unpromising neural trials at a checkpoint: '
                                      '"halving" (successive halving), "hyperband" or "none" '
                                      "(single mode only)", valid=Choices(PRUNERS))
    pruner_bootstrap: int = key(1, help="a neural trial is pruned at a rung until this many "
                                        "trials of its family have reached it (Optuna's "
                                        "bootstrap_count): the first trial of a family does "
                                        "not train all its epochs unopposed; a pruned trial's "
                                        "best feasible checkpoint stays a candidate",
                                valid=Range(0, unit="trial"))
    epochs_drawn: bool = key(False, help="with a pruner, neural trials draw their epochs from "
                                         "[space.FAMILY] epochs (true), or each may train up "
                                         "to its top (false: the epochs are the pruner's "
                                         "resource; the pruner, patience and the best "
                                         "feasible checkpoint decide where a trial stops)")

    @property
    def trial_budget(self) -> int:
        """The trials the search may run: ``n_trials``; unset, :data:`DEFAULT_TRIALS`, or
        :data:`UNBOUNDED` when ``budget_minutes`` is set (the job's clock ends the search, which
        keeps its audit's time back: a count drawn in advance would end it early or late)."""
        if self.n_trials is not None:
            return self.n_trials
        return UNBOUNDED if self.budget_minutes is not None else DEFAULT_TRIALS


@dataclasses.dataclass(frozen=True)
class AuditConfig:
    """The ``[audit]`` section: the release audit (design §13, :mod:`tuner.release._audit`)."""

    enabled: bool = key(True, help="run the membership audit at release")
    targets: int = key(40, help="K: the most vulnerable training records attacked, each "
                                "tested one by one", valid=AT_LEAST_ONE)
    shadows: int = key(300, help="R: shadow tables per target, half with it (even); half of "
                                 "them test, and the pooled bound over those fits needs about "
                                 "250 at the defaults (risk.audit.minimum_shadows)",
                                 valid=Range(8, note="half of the runs hold the target, half "
                                                        "of each half calibrates"))
    shadow_size: int = key(1000, help="records per shadow table (the holdout's size when "
                                      "smaller)", valid=Range(2, unit="records"))
    design: str = key("shared", help='"shared" (shadows fits, each holding every target with '
                                     'probability one half), "per_target" (targets x shadows '
                                     'fits), or "auto": per target when it fits in max_minutes, '
                                     "else shared", valid=Choices(AUDIT_DESIGNS))
    jobs: int = key(0, help="processes for the refits; 0: every core this process may use",
                       valid=Range(0, note="0: every core"))
    tpr_limit: float = key(0.05, help="the most the pooled TPR at 1 % FPR of a release may be "
                                      "(its one-sided upper bound over the test fits, at "
                                      "confidence 1 - 0.05 / attempts, must be within it), "
                                      "and any one person's (flagged when shown beyond it)",
                                      valid=Range(0, 1, closed="right"))
    attempts: int = key(3, help="the most candidates the release audits in turn: each one's "
                                "pooled bound is held at confidence 1 - 0.05 / attempts "
                                "(Bonferroni), so a leaky generator passes one of them no more "
                                "often than one audit at 95 % lets it; then no release",
                                valid=AT_LEAST_ONE)
    safer_by: float = key(2.0, help="after the membership audit refuses a candidate, another "
                                    "of its family is audited only when this many times safer "
                                    "on the family's privacy setting (cart: min_samples_leaf "
                                    "this factor larger; neural: epochs, dp: epsilon this "
                                    "factor smaller; gaussian_copula: none is, it is not "
                                    "audited again); other families are audited first",
                          valid=Range(1, unit="times"))
    alpha: float = key(0.05, help="the family-wise level of the per-person test: a release "
                                  "that exposes nobody beyond tpr_limit has someone flagged at "
                                  "most this often", valid=Range(0, 1, closed="neither"))
    backend: str = key("local", help='where the refits run: "local" (jobs processes here) or '
                                     '"dask" (a Dask cluster: the scheduler below, or jobs '
                                     "local workers)", valid=Choices(AUDIT_BACKENDS))
    scheduler: str | None = key(None, help='the Dask scheduler\'s address, "tcp://host:8786" '
                                           '(backend = "dask"; none: a local cluster)')
    max_minutes: float = key(30.0, help="an audit estimated longer does not run: its trial is "
                                        "passed over, the next best feasible one audited",
                                        valid=Range(0, closed="neither", unit="minutes"))
    required: bool = key(True, help="never release unaudited (false: a trial whose audit "
                                    "cannot run is released marked not audited)")

    @property
    def confidence(self) -> float:
        """The confidence of each audit's one-sided pooled bound: ``1 - 0.05 / attempts``, the
        95 % of one audit spent over the candidates the release may audit."""
        return 1.0 - 0.05 / self.attempts


@dataclasses.dataclass(frozen=True)
class UtilityConfig:
    """The ``[utility]`` section: U, the utility the loss rewards."""

    metric: str = key("quality_report", help='"quality_report" (SDMetrics), "hellinger" or '
                                             '"efficacy" (TSTR)', valid=Choices(UTILITY_METRICS))
    target: str | None = key(None, help="the column efficacy predicts")
