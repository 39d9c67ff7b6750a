"""The study's TOML configuration, read with ``tomllib`` into frozen dataclasses.

Every section and key is checked: an unknown key is an error naming the valid ones, a bad
value an error naming the key, the value and what was expected. Relative paths are resolved
against the config file's folder. See ``tuner/demo.toml`` for a complete, commented example.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from tuner.spaces import SPACES, narrow

UTILITY_METRICS = ("quality_report", "hellinger", "efficacy")
DEVICES = ("cpu", "cuda")


class ConfigError(ValueError):
    """A configuration file is malformed; the message names the key and the problem."""


@dataclasses.dataclass(frozen=True)
class DataConfig:
    path: Path
    population_size: int
    population_note: str = ""
    columns: tuple[str, ...] | None = None
    header_names: tuple[str, ...] | None = None  # names for a CSV without a header row
    missing_values: tuple[str, ...] = ()  # strings read as missing (e.g. "?" in UCI files)
    quasi_identifiers: tuple[str, ...] | None = None
    train_fraction: float = 0.5
    stratify: str | None = None


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    name: str = "risk-tuner"
    synthesizers: tuple[str, ...] = ("gaussian_copula", "cart")
    n_trials: int = 20
    timeout: float | None = None
    seed: int = 0
    workers: int = 1
    output: Path = Path("runs")
    storage: str | None = None
    mlflow_uri: str | None = None
    device: str = "cpu"
    sample_size: int | None = None


@dataclasses.dataclass(frozen=True)
class RiskConfig:
    m_threshold: float = 0.2
    hamming_threshold: int = 0
    repeats: int = 100
    cap_keys: tuple[str, ...] = ()
    cap_targets: tuple[str, ...] = ()
    cap_limit: float = 0.05
    inference_targets: tuple[str, ...] = ()
    inference_limit: float = 0.05
    numeric_bins: int = 20


@dataclasses.dataclass(frozen=True)
class UtilityConfig:
    metric: str = "quality_report"
    target: str | None = None


@dataclasses.dataclass(frozen=True)
class Config:
    data: DataConfig
    study: StudyConfig
    risk: RiskConfig
    utility: UtilityConfig
    spaces: dict[str, dict[str, Any]]
    source: Path | None = None


def _fields(cls: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def _section(raw: dict[str, Any], name: str, cls: type, base: Path) -> Any:
    table = raw.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table, got {table!r}")
    fields = _fields(cls)
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ConfigError(f"unknown key(s) {unknown} in [{name}]; valid keys: {sorted(fields)}")
    values: dict[str, Any] = {}
    for key, value in table.items():
        f = fields[key]
        where = f"{name}.{key}"
        kind = str(f.type)
        if "Path" in kind:
            if not isinstance(value, str):
                raise ConfigError(f"{where} must be a path string, got {value!r}")
            p = Path(value)
            builtin = value.startswith("builtin:")
            values[key] = p if (p.is_absolute() or builtin) else (base / p)
        elif "tuple" in kind:
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{where} must be a list of strings, got {value!r}")
            values[key] = tuple(value)
        elif kind.startswith("int") or kind == "int | None":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{where} must be an integer, got {value!r}")
            values[key] = value
        elif "float" in kind:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where} must be a number, got {value!r}")
            values[key] = float(value)
        else:
            if not isinstance(value, str):
                raise ConfigError(f"{where} must be a string, got {value!r}")
            values[key] = value
    try:
        return cls(**values)
    except TypeError as exc:
        missing = [k for k, f in fields.items() if f.default is dataclasses.MISSING
                   and k not in values]
        raise ConfigError(f"[{name}] lacks required key(s) {missing}") from exc


def check(cfg: Config) -> None:
    """Raise :class:`ConfigError` naming the key when a value is out of range or inconsistent."""
    d, s, r, u = cfg.data, cfg.study, cfg.risk, cfg.utility
    if d.population_size < 2:
        raise ConfigError(f"data.population_size must be >= 2, got {d.population_size}")
    if not 0.0 < d.train_fraction < 1.0:
        raise ConfigError(f"data.train_fraction must be in (0, 1), got {d.train_fraction}")
    unknown = [x for x in s.synthesizers if x not in SPACES]
    if unknown or not s.synthesizers:
        raise ConfigError(
            f"study.synthesizers has unknown name(s) {unknown or s.synthesizers!r}; "
            f"valid: {sorted(SPACES)}"
        )
    if s.n_trials < 1:
        raise ConfigError(f"study.n_trials must be >= 1, got {s.n_trials}")
    if s.workers < 1:
        raise ConfigError(f"study.workers must be >= 1, got {s.workers}")
    if s.timeout is not None and s.timeout <= 0:
        raise ConfigError(f"study.timeout must be > 0 seconds, got {s.timeout}")
    if s.device not in DEVICES:
        raise ConfigError(f"study.device must be one of {DEVICES}, got {s.device!r}")
    if not 0.0 < r.m_threshold < 1.0:
        raise ConfigError(f"risk.m_threshold must be in (0, 1), got {r.m_threshold}")
    if r.repeats < 1 or r.hamming_threshold < 0:
        raise ConfigError("risk.repeats must be >= 1 and risk.hamming_threshold >= 0")
    if (r.cap_targets or r.inference_targets) and not r.cap_keys:
        raise ConfigError("risk.cap_keys must name the intruder's keys when targets are given")
    clash = sorted(set(r.cap_keys) & (set(r.cap_targets) | set(r.inference_targets)))
    if clash:
        raise ConfigError(f"column(s) {clash} are both a key and a target in [risk]")
    if u.metric not in UTILITY_METRICS:
        raise ConfigError(f"utility.metric must be one of {UTILITY_METRICS}, got {u.metric!r}")
    if u.metric == "efficacy" and not u.target:
        raise ConfigError("utility.metric = 'efficacy' needs utility.target (a column)")
    for synth, narrowed in cfg.spaces.items():
        if synth not in SPACES:
            raise ConfigError(f"[space.{synth}] is not a synthesiser; valid: {sorted(SPACES)}")
        bad = sorted(set(narrowed) - set(SPACES[synth]))
        if bad:
            raise ConfigError(
                f"[space.{synth}] has unknown parameter(s) {bad}; valid: {sorted(SPACES[synth])}"
            )
        try:
            narrow(synth, narrowed)
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc)) from exc


def check_data(cfg: Config, columns: list[str], n_rows: int) -> None:
    """Raise :class:`ConfigError` when the config does not fit the data it was run on.

    Every column named in ``[data]``, ``[risk]`` and ``[utility]`` must exist, and the
    population must hold at least the table's records (the table is a sample of it, so
    ``n_train / N < 1``). Checked once the data are read, before any trial is run, so that a
    misnamed column is one clear error rather than every trial failing.
    """
    d, r, u = cfg.data, cfg.risk, cfg.utility
    named = {
        "data.quasi_identifiers": list(d.quasi_identifiers or ()),
        "data.stratify": [d.stratify] if d.stratify else [],
        "risk.cap_keys": list(r.cap_keys),
        "risk.cap_targets": list(r.cap_targets),
        "risk.inference_targets": list(r.inference_targets),
        "utility.target": [u.target] if u.target else [],
    }
    for key, cols in named.items():
        unknown = [c for c in cols if c not in columns]
        if unknown:
            raise ConfigError(
                f"{key} names column(s) {unknown} that the data do not have; the data's columns "
                f"are {columns}"
            )
    if d.population_size < n_rows:
        raise ConfigError(
            f"data.population_size = {d.population_size} is smaller than the {n_rows} records "
            "of the data, which are a sample of that population; give the size N of the "
            "population the data were drawn from"
        )


def parse(raw: dict[str, Any], *, base: Path, source: Path | None = None) -> Config:
    """Build a :class:`Config` from a TOML mapping; paths relative to ``base``."""
    sections = {"data", "study", "risk", "utility", "space"}
    unknown = sorted(set(raw) - sections)
    if unknown:
        raise ConfigError(f"unknown section(s) {unknown}; valid sections: {sorted(sections)}")
    if "data" not in raw:
        raise ConfigError("the [data] section is required (path, population_size)")
    spaces = raw.get("space", {})
    if not isinstance(spaces, dict) or not all(isinstance(v, dict) for v in spaces.values()):
        raise ConfigError("[space.NAME] sections must be tables of parameter = [low, high] "
                          "or [choices]")
    cfg = Config(
        data=_section(raw, "data", DataConfig, base),
        study=_section(raw, "study", StudyConfig, base),
        risk=_section(raw, "risk", RiskConfig, base),
        utility=_section(raw, "utility", UtilityConfig, base),
        spaces={k: dict(v) for k, v in spaces.items()},
        source=source,
    )
    check(cfg)
    return cfg


def load(path: Path) -> Config:
    """Read and check a TOML config file."""
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse(raw, base=path.resolve().parent, source=path.resolve())


def with_overrides(cfg: Config, **study: Any) -> Config:
    """A copy with some [study] values replaced (CLI flags such as --trials, --output)."""
    given = {k: v for k, v in study.items() if v is not None}
    out = dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, **given))
    check(out)
    return out
