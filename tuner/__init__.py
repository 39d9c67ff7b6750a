"""Risk-aware tuning of SDV synthesisers with Optuna, tracked in MLflow (issue 3)."""
