"""Every key the tuner stores on an Optuna study or trial, in one place.

A study's attributes are its memory across processes and machines (which data it was run on,
how they were split, which worker exports the release, what the audit found): a key written
in one module and read in another must be the same string, so each is declared here once.
"""

from __future__ import annotations

# study user attributes
DATA_FINGERPRINT = "data_fingerprint"  # SHA-256 of the table the study was run on
STUDY_SEED = "seed"  # the study's seed
N_TRAIN = "n_train"  # training records of its split
SECRET = "secret"  # the study's secret as hex, "" for public_seed (tuner.search._stored_split)
SPLIT = "split"  # {"train_fraction", "audit_fraction", "stratify"} (tuner.search._stored_split)
PARETO_PICK = "pareto_pick"  # the front-point rule of a Pareto-mode study
RELEASED = "released_trial"  # the number of the released trial
CLAIM = "release_claim"  # which worker exports which trial
WHERE = "release_where"  # where the release was written and logged
REJECTED_PREFIX = "release_rejected:"  # + trial number: why it was refused at release ("": no more)
OVER_BUDGET_PREFIX = "audit_over_budget:"  # + trial number: the audit.max_minutes it exceeded
AUDIT_PREFIX = "audit:"  # + trial number: its release audit, kept for a second export
WORKER_PREFIX = "worker."  # + slot: "host:pid" of the worker holding it
INTERRUPTED_PREFIX = "interrupted."  # + trial number: cut short by a kill
SURPLUS_PREFIX = "surplus."  # + trial number: run past the budget by a racing worker

# trial user attributes
TRIAL_SEED = "seed"  # the seed its synthesiser was fitted with
THREADS = "threads"  # torch threads it ran with (the data depend on them)
HOST = "host"  # the machine that ran it ...
PID = "pid"  # ... and the process
METRICS = "metrics"  # every metric it logged
MLFLOW_RUN_ID = "mlflow_run_id"  # its MLflow run
M_WARNING = "m_warning"  # why M cannot bind on its data ("" when it can)
FAIL_REASON = "fail_reason"  # why it failed
DATA_SHA256 = "data_sha256"  # fingerprint of the synthetic data it scored
LIMITS = "limits"  # each constraint's limit when it ran: what the release judges it under
EPOCHS = "checkpoint_epochs"  # a neural trial's scored checkpoint: the epochs the release fits
CURVE = "learning_curve"  # a neural trial's checkpoints: epochs, loss, U, M, feasible, seconds
STOPPED = "stopped"  # why a neural trial ended before its last epoch ("" when it did not)
