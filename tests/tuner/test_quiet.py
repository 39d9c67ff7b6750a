"""What the tuner's Python API lets through of Optuna (issue 47 item 7): none of its INFO lines
nor its ExperimentalWarning for the features the tuner chose, and the caller's own set-up back
afterwards."""

from __future__ import annotations

import logging
import warnings

import optuna
import pytest

from tuner._common.quiet import optuna_quiet


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.mark.parametrize("quiet", [True, False], ids=["api", "caller's own set-up"])
def test_the_api_hides_optunas_info_and_experimental_warnings_then_restores_them(
        tmp_path, quiet):
    heard, before = _Lines(), optuna.logging.get_verbosity()
    logging.getLogger("optuna").addHandler(heard)
    optuna.logging.set_verbosity(optuna.logging.INFO)
    url = f"sqlite:///{tmp_path / 's.db'}"
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with optuna_quiet() if quiet else warnings.catch_warnings():
                study = optuna.create_study(storage=url)
                study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
                optuna.storages.RDBStorage(url, heartbeat_interval=60)
                warnings.warn("the tuner's own", UserWarning, stacklevel=1)
        said = [str(w.message)[:30] for w in seen]
        assert optuna.logging.get_verbosity() == optuna.logging.INFO  # the caller's again
        if quiet:
            assert heard.lines == [] and said == ["the tuner's own"]
        else:  # what the same calls say without it: the test can see both
            assert any("finished with value" in line for line in heard.lines)
            assert any("heartbeat_interval" in w for w in said)
    finally:
        logging.getLogger("optuna").removeHandler(heard)
        optuna.logging.set_verbosity(before)
