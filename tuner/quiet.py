"""Quieting library noise for the command line (never done at import)."""

from __future__ import annotations

import logging
import os
import warnings

NOISY_LOGGERS = ("sdv", "sdmetrics", "rdt", "copulas", "ctgan", "mlflow", "alembic", "optuna",
                 "SingleTableSynthesizer", "MultiTableSynthesizer", "matplotlib")


def quiet_libraries() -> None:
    """Silence SDV/SDMetrics warnings and bars and INFO logs: for the CLI and its workers only,
    called by them; library users keep their own logging and warnings set-up."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    warnings.filterwarnings("ignore")
    import mlflow  # noqa: F401  (mlflow sets up its own handlers at import; quiet them after)
    import optuna

    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
