"""The tuner's Python API; the ``risk-tuner`` command is a thin layer over it.

>>> import tuner
>>> study = tuner.tune("study.toml", trials=20)        # or a dict shaped like the TOML
>>> study.trials_frame()                                 # one row per trial, released marked
>>> study.released_trial, study.release_folder
>>> again = tuner.load("runs/adult")                    # from the output folder alone
>>> tuner.load("study.toml")                             # or its config (any worker's host)
>>> tuner.load(storage="postgresql://...", study="adult") # or the storage URL alone

``load`` needs only the output folder (``run.json``, the Optuna storage, the release's
manifest), the config, or a storage URL and a study name: reading the trials and writing the
report again need no access to the confidential data; ``release()`` does (it re-creates the
synthetic data from the trial) and needs the config.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from tuner import config as config_module
from tuner._common import attrs
from tuner._common.quiet import optuna_quiet
from tuner.config import Config, ConfigError
from tuner.errors import InputError
from tuner.release import (
    JobBudget,
    Manifest,
    NoFeasibleTrial,
    check_audit_backend,
    check_fits,
    export_release,
    read_manifest,
    write_report,
)
from tuner.search import (
    SecretChanged,
    best_feasible,
    claim_lock,
    is_pareto,
    local_uri,
    open_storage,
    open_study,
    pareto_choice,
    prepare,
    run_study,
    trials_frame,
)
from tuner.synthesis import SYNTHESIZERS

RUN_FILE = "run.json"


@dataclasses.dataclass(frozen=True)
class TunedStudy:
    """A study's output folder: its trials, its release, and how to make them again."""

    output: Path
    name: str
    storage_url: str
    mlflow_uri: str
    config_source: str | None
    config_dict: dict[str, Any] | None = None
    # [study] values the run was given on top of its config (--mode, --synthesizers)
    study_overrides: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    @optuna_quiet()
    def optuna_study(self) -> optuna.Study:
        return optuna.load_study(study_name=self.name, storage=open_storage(self.storage_url))

    @property
    def released_trial(self) -> int | None:
        """Number of the trial whose data are in ``release/`` (``None`` before a release)."""
        value = self.optuna_study.user_attrs.get(attrs.RELEASED)
        return None if value is None else int(value)

    @property
    def release_folder(self) -> Path | None:
        folder = self.output / "release"
        return folder if (folder / "manifest.json").exists() else None

    def trials_frame(self) -> pd.DataFrame:
        """One row per finished trial; ``released`` marks the released one."""
        study = self.optuna_study
        frame = trials_frame(study)
        released = study.user_attrs.get(attrs.RELEASED)
        if len(frame):
            frame.insert(1, "released", frame["number"] == released)
            if is_pareto(study):  # Pareto mode: the feasible front the release was picked from
                choice = pareto_choice(study)
                front = {t.number for t in choice[1]} if choice else set()
                frame.insert(2, "front", frame["number"].isin(front))
        return frame

    def best_feasible(self) -> optuna.trial.FrozenTrial | None:
        return best_feasible(self.optuna_study)

    def manifest(self) -> Manifest | None:
        folder = self.release_folder
        return None if folder is None else read_manifest(folder / "manifest.json")

    def write_report(self) -> list[Path]:
        """``report.md`` and ``report.html`` again, from the manifest (no data needed)."""
        manifest = self.manifest()
        if manifest is None:
            raise FileNotFoundError(f"{self.output / 'release'} holds no release "
                                    "(manifest.json); run `risk-tuner release` first")
        if "report" not in manifest:
            raise InputError(f"{self.output / 'release' / 'manifest.json'} has no report "
                             "data, which every release writes (was it edited?); run "
                             "`risk-tuner release` again to re-create it")
        assert self.release_folder is not None
        return write_report(self.release_folder, manifest)

    def config(self) -> Config:
        source = self.config_source or self.config_dict
        if not source:
            raise ConfigError(f"{self.output / RUN_FILE} names no config")
        return load_config(source, output=self.output, **self.study_overrides)

    @optuna_quiet()
    def release(self, folder: Path | None = None) -> Path:
        """Re-create the best feasible trial's data (reads the data) and export it."""
        ctx = prepare(self.config())
        # open_study refuses a study that was run on other data (DataChanged, exit 2)
        return export_release(ctx, open_study(ctx), folder)


def load_config(source: str | Path | Mapping[str, Any] | None, **overrides: Any) -> Config:
    """A config from a TOML path, a dict shaped like the TOML (paths relative to the current
    folder), or ``None`` for the embedded demo; with ``[study]`` overrides."""
    from importlib import resources

    if source is None:
        with resources.as_file(resources.files("tuner") / "demo.toml") as demo:
            cfg = config_module.load(demo)
        cfg = _demo_codebook(cfg, overrides.get("synthesizers"))
    elif isinstance(source, Mapping):
        raw = json.loads(json.dumps(dict(source), default=str))
        raw.setdefault("data", {})
        if isinstance(raw["data"], dict) and isinstance(raw["data"].get("path"), str) and \
                not raw["data"]["path"].startswith("builtin:"):
            raw["data"]["path"] = str(Path(raw["data"]["path"]).resolve())
        cfg = dataclasses.replace(config_module.parse(raw, base=Path.cwd()), raw=raw)
    else:
        cfg = config_module.load(Path(source))
    return config_module.with_overrides(cfg, **overrides)


def _demo_codebook(cfg: Config, synthesizers: Sequence[str] | None) -> Config:
    """The demo with a DP family among ``synthesizers``: its table's public codebook
    (``tuner/demo_data/adult_codebook.json``, from UCI's documentation of Adult), so that MST
    and AIM are DP as released; the other families' demo keeps value protection instead."""
    from importlib import resources

    if not any(SYNTHESIZERS[n].private for n in synthesizers or () if n in SYNTHESIZERS):
        return cfg
    book = Path(str(resources.files("tuner") / "demo_data" / "adult_codebook.json"))
    return dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, codebook=book))


def _save_run_file(cfg: Config, storage_url: str, mlflow_uri: str) -> None:
    info = {"config": str(cfg.source) if cfg.source else None, "config_dict": cfg.raw,
            "study": cfg.study.name,
            "storage": storage_url, "mlflow_uri": mlflow_uri,
            "overrides": {"output": str(cfg.study.output.resolve()),
                          "n_trials": cfg.study.trial_budget, "mode": cfg.study.mode,
                          "synthesizers": list(cfg.study.synthesizers),
                          "public_seed": cfg.study.public_seed}}
    (cfg.study.output / RUN_FILE).write_text(json.dumps(info, indent=2))


@optuna_quiet()
def load(output: str | Path | None = None, *, storage: str | None = None,
         study: str | None = None, mlflow_uri: str | None = None) -> TunedStudy:
    """The study of ``output``: a folder written by :func:`tune` or ``risk-tuner run``, or a
    TOML config (its ``study.storage``, or the SQLite file in its output folder); or, with
    ``storage`` and ``study``, the study of that name in that Optuna storage (a PostgreSQL
    URL, from any host)."""
    if storage is not None:
        if not study:
            raise ConfigError("a storage URL needs the study's name (study.name)")
        folder = Path(output or ".").resolve()
        return TunedStudy(output=folder, name=study, storage_url=storage,
                          mlflow_uri=mlflow_uri or local_uri(folder), config_source=None)
    if output is None:
        raise ConfigError("load needs an output folder, a config file, or storage and study")
    path = Path(output)
    if path.is_file() and path.suffix == ".toml":
        cfg = load_config(path)
        out = cfg.study.output.resolve()
        return TunedStudy(output=out, name=cfg.study.name,
                          storage_url=cfg.study.storage or f"sqlite:///{out / 'study.db'}",
                          mlflow_uri=cfg.study.mlflow_uri or local_uri(out),
                          config_source=str(path.resolve()))
    run_file = path / RUN_FILE
    if not run_file.exists():
        raise FileNotFoundError(f"{run_file} not found: is {str(path)!r} an output folder of "
                                "`risk-tuner run` or `risk-tuner demo`, or a config file?")
    info = json.loads(run_file.read_text())
    resolved = Path(info["overrides"]["output"])
    return TunedStudy(
        output=resolved, name=info["study"],
        storage_url=info.get("storage") or f"sqlite:///{resolved / 'study.db'}",
        mlflow_uri=info.get("mlflow_uri") or f"sqlite:///{resolved / 'mlflow.db'}",
        config_source=info.get("config"), config_dict=info.get("config_dict"),
        study_overrides={k: tuple(v) if isinstance(v, list) else v
                         for k, v in info["overrides"].items()
                         if k in ("mode", "synthesizers", "public_seed")})


def start(cfg: Config, *, progress: bool = False) -> tuple[TunedStudy, Any]:
    """Prepare and run (or resume) the study of ``cfg``; return it and its context."""
    ctx = dataclasses.replace(prepare(cfg), progress=progress)
    if cfg.audit.enabled:  # an audit scheduler that is not there: said before any trial
        check_audit_backend(cfg.audit)
    # a study of other data or of the other mode is refused before the folder's run file is
    # rewritten (else `report`/`release` of the folder would read the refused config)
    try:
        with claim_lock(ctx, "stores"):
            open_study(ctx)
    except SecretChanged:  # another worker made the study first: its secret, its split
        ctx = dataclasses.replace(prepare(cfg), progress=progress)
        with claim_lock(ctx, "stores"):
            open_study(ctx)
    _save_run_file(cfg, ctx.storage_url, ctx.mlflow_uri)
    if cfg.study.budget_minutes is None:
        run_study(ctx, progress=progress)
        return load(cfg.study.output), ctx
    budget = JobBudget(ctx, cfg.study.budget_minutes * 60.0)
    # a budget too small for one audit: refused before any trial
    budget.pilot_floor = check_fits(ctx, limit=budget.per_audit())
    # no trial starts after the budget's end
    ends = min(budget.left(), cfg.study.timeout or math.inf)
    searching = dataclasses.replace(ctx, cfg=dataclasses.replace(
        cfg, study=dataclasses.replace(cfg.study, timeout=ends)))
    run_study(searching, progress=progress, clock=budget, helpers_clock=budget.for_helpers())
    # the audit takes what is left, at most audit.max_minutes
    left = dataclasses.replace(cfg.audit, max_minutes=budget.audit_minutes())
    return load(cfg.study.output), dataclasses.replace(ctx, cfg=dataclasses.replace(
        cfg, audit=left), deadline=budget.started + budget.seconds)


@optuna_quiet()
def tune(config: str | Path | Mapping[str, Any] | None, *, output: str | Path | None = None,
         trials: int | None = None, workers: int | None = None, mode: str | None = None,
         synthesizers: Sequence[str] | None = None, progress: bool = False) -> TunedStudy:
    """Run (or resume) a study and export its release when a trial passed every constraint.

    ``config`` is a TOML path, a dict shaped like the TOML, or ``None`` for the demo. Without a
    feasible trial the study is returned with ``released_trial`` ``None``; ``release()`` then
    raises :class:`tuner.release.NoFeasibleTrial` saying which constraint failed how often.
    """
    cfg = load_config(config, output=Path(output) if output is not None else None,
                      n_trials=trials, workers=workers, mode=mode,
                      synthesizers=tuple(synthesizers) if synthesizers is not None else None)
    study, ctx = start(cfg, progress=progress)
    try:
        export_release(ctx, study.optuna_study, once=True)
    except NoFeasibleTrial:
        pass
    return study
