"""The study's TOML configuration, read with ``tomllib`` into frozen dataclasses.

Every section and key is checked: an unknown key is an error naming the valid ones, a bad
value an error naming the key, the value and what was expected. Relative paths are resolved
against the config file's folder. See ``tuner/demo.toml`` for a complete, commented example.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import risk
import risk.audit
from tuner import measures
from tuner.config._sections import (
    AUDIT_BACKENDS,
    AuditConfig,
    DataConfig,
    StudyConfig,
    UtilityConfig,
)
from tuner.config._values import ConfigError, declared_problems, raise_all, section, table
from tuner.synthesis import SYNTHESIZERS, narrow

# more than any population of people (UN World Population Prospects 2024: 8.16e9)
WORLD_POPULATION = 8_200_000_000



class RiskConfig(Mapping[str, Any]):
    """The ``[risk]`` section: one value per option of :data:`tuner.measures.MEASURES`.

    Read-only; a value is reached as ``cfg.risk.cap_limit`` or ``cfg.risk["cap_limit"]``.
    Unset options take the registry's defaults. ``synthesized`` (not a key) is the study's
    ``[study] synthesize`` in partial mode, ``()`` under full synthesis: the measures read the
    mode from the options they are given (:func:`tuner.measures._identification.synthesized`).
    """

    def __init__(self, values: Mapping[str, Any] | None = None, *,
                 synthesized: tuple[str, ...] = ()) -> None:
        known = measures.options()
        unknown = sorted(set(values or {}) - set(known))
        if unknown:
            raise ConfigError(f"unknown key(s) {unknown} in [risk]; valid keys: {sorted(known)}")
        self._values: dict[str, Any] = {k: o.default for k, o in known.items()} | dict(
            values or {})
        self.synthesized = tuple(synthesized)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.__dict__["_values"][key]
        except KeyError:
            raise AttributeError(f"[risk] has no option {key!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        extra = f", synthesized={self.synthesized!r}" if self.synthesized else ""
        return f"RiskConfig({dict(self._values)!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RiskConfig) and dict(self) == dict(other)
                and self.synthesized == other.synthesized)

    def __hash__(self) -> int:
        return hash((tuple(sorted((k, repr(v)) for k, v in self._values.items())),
                     self.synthesized))


@dataclasses.dataclass(frozen=True)
class Config:
    data: DataConfig
    study: StudyConfig
    risk: RiskConfig
    utility: UtilityConfig
    spaces: dict[str, dict[str, Any]]
    audit: AuditConfig = dataclasses.field(default_factory=AuditConfig)
    source: Path | None = None
    raw: dict[str, Any] | None = None  # the mapping a config made from a dict came from



def _problems(cfg: Config) -> list[str]:
    """Every value outside its declared range or choices (:func:`tuner.config.key`), then
    what no single key's declaration says: limits across keys, and what follows from them.
    Each names its key; a key already refused is not refused again for what follows from it."""
    d, s, u = cfg.data, cfg.study, cfg.utility
    errors = [said for name, values in (("data", d), ("study", s), ("utility", u))
              for said in declared_problems(name, values)]
    if d.population_size > WORLD_POPULATION:
        errors.append(
            f"data.population_size = {d.population_size:,} is more people than live on Earth "
            f"(about {WORLD_POPULATION:,}, UN World Population Prospects 2024); give the size N "
            "of the population the data were drawn from")
    if 0.0 < d.train_fraction < 1.0 and d.audit_fraction >= 1.0 - d.train_fraction:
        errors.append(f"data.audit_fraction must be in [0, 1 - data.train_fraction = "
                      f"{1.0 - d.train_fraction:g}) so that a holdout is left, got "
                      f"{d.audit_fraction}")
    if not s.synthesizers:
        errors.append(f"study.synthesizers is empty; name one or more of {sorted(SYNTHESIZERS)}")
    if not s.name.strip():
        errors.append(f"study.name must be a non-empty name, got {s.name!r}")
    errors += _partial_problems(s)
    errors += measures.check(cfg.risk)
    errors += _audit_problems(cfg.audit)
    if u.metric == "efficacy" and not u.target:
        errors.append("utility.metric = 'efficacy' needs utility.target (a column)")
    for synth, narrowed in cfg.spaces.items():
        if synth not in SYNTHESIZERS:
            errors.append(f"[space.{synth}] is not a synthesiser; valid: {sorted(SYNTHESIZERS)}")
            continue
        space = SYNTHESIZERS[synth].space
        bad = sorted(set(narrowed) - set(space))
        if bad:
            errors.append(f"[space.{synth}] has unknown parameter(s) {bad}; valid: "
                          f"{sorted(space)}")
            continue
        try:
            narrow(synth, narrowed)
        except (TypeError, ValueError) as exc:
            errors.append(str(exc))
    return errors


def _audit_problems(a: AuditConfig) -> list[str]:
    """The ``[audit]`` keys, each problem naming its key: the declared ranges, an even number
    of shadows, the backend, and a game large enough for the limit."""
    errors = declared_problems("audit", a)
    if a.shadows % 2:
        errors.append(f"audit.shadows must be even (half of the runs hold the target), got "
                      f"{a.shadows}")
    errors += _backend_problems(a)
    if a.enabled and not errors:
        errors += _audit_size_problems(a)
    return errors


def _audit_size_problems(a: AuditConfig) -> list[str]:
    """Too few targets or shadows for ``tpr_limit``: an audit of a generator that leaks
    nothing would be refused too often (the model of :func:`risk.audit.null_refusal_rate` allows
    2.5 %, so that the audit's measured rate stays within 5 %: docs/audit.md). In the shared
    design the shadows are what is short (the bound is over its test fits), per target the
    targets. A limit of 1 refuses nothing, and is let through whatever the size (the figures
    are then shown only)."""
    if a.tpr_limit >= 1.0:
        return []
    designs = ("per_target", "shared") if a.design == "auto" else (a.design,)
    rates = {d: risk.audit.null_refusal_rate(a.targets, a.shadows, design=d, tpr_limit=a.tpr_limit,
                                             confidence=a.confidence) for d in designs}
    bad = {d: r for d, r in rates.items() if not r <= risk.audit.NULL_REFUSAL_ALLOWANCE}
    if not bad:
        return []
    said = ", ".join(f"{d.replace('_', ' ')} {r:.0%}" if r == r else
                     f"{d.replace('_', ' ')}: no threshold at 1 % FPR (fewer than 99 "
                     "calibration non-member runs)" for d, r in bad.items())
    needs = []
    if "shared" in bad:
        need = risk.audit.minimum_shadows(a.targets, design="shared", tpr_limit=a.tpr_limit,
                                          confidence=a.confidence)
        needs.append(f"audit.shadows = {need} with audit.targets = {a.targets} (shared)")
    if "per_target" in bad:
        need = risk.audit.minimum_targets(a.shadows, design="per_target",
                                          tpr_limit=a.tpr_limit, confidence=a.confidence)
        needs.append(f"audit.targets = {need} with audit.shadows = {a.shadows} (per target: "
                     f"targets x shadows = {need * a.shadows:,})")
    return [f"audit.targets = {a.targets} with audit.shadows = {a.shadows} is too small a game "
            f"for audit.tpr_limit = {a.tpr_limit} at audit.attempts = {a.attempts}: an audit of "
            f"a generator that leaks nothing would be refused too often (modelled: {said}; at "
            f"most {risk.audit.NULL_REFUSAL_ALLOWANCE:.1%} allowed); the minimum is "
            f"{' or '.join(needs)}; or raise audit.tpr_limit, or lower audit.attempts"]


def _backend_problems(a: AuditConfig) -> list[str]:
    """``audit.backend`` and ``audit.scheduler``, each problem naming its key."""
    import importlib.util

    if a.backend not in AUDIT_BACKENDS:
        return []  # said by its declaration
    if a.backend == "local" and a.scheduler:
        return [f"audit.scheduler = {a.scheduler!r} is for audit.backend = 'dask', and the "
                "backend is 'local': set backend = \"dask\", or remove the scheduler"]
    if a.scheduler and not a.scheduler.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
        return [f"audit.scheduler = {a.scheduler!r} is not a Dask scheduler address: expected "
                "tcp://HOST:PORT (or tls://, ucx://)"]
    if a.backend == "dask" and importlib.util.find_spec("distributed") is None:
        return ["audit.backend = 'dask' needs Dask's distributed, which is not installed (the "
                "`dask` extra): python -m pip install -e \".[dask]\""]
    return []


def _partial_problems(s: StudyConfig) -> list[str]:
    """The partial-synthesis keys of ``[study]``, each problem naming its key."""
    errors = []
    if s.synthesize is not None:
        if not s.synthesize:
            errors.append("study.synthesize is empty; name the columns to synthesise (leave it "
                          "out to synthesise every column)")
        elif doubled := sorted({c for c in s.synthesize if s.synthesize.count(c) > 1}):
            errors.append(f"study.synthesize names column(s) {doubled} more than once")
        if s.sample_size is not None:
            errors.append(f"study.sample_size = {s.sample_size} cannot be used with "
                          "study.synthesize: a partially synthetic release has one row per "
                          "training record (row i is record i)")
    if s.synthetic_sets > 1 and s.synthesize is None:
        errors.append(f"study.synthetic_sets = {s.synthetic_sets} needs study.synthesize: m "
                      "sets are released in partial synthesis (row i of each is record i); a "
                      "fully synthetic release is one set")
    return errors



def check(cfg: Config) -> None:
    """Raise :class:`ConfigError` listing every value out of range or inconsistent."""
    raise_all(_problems(cfg))


def parse(raw: dict[str, Any], *, base: Path, source: Path | None = None) -> Config:
    """Build a :class:`Config` from a TOML mapping; paths relative to ``base``.

    Every problem of the file is reported at once (one :class:`ConfigError`, one line each).
    """
    sections = {"data", "study", "risk", "utility", "space", "audit"}
    errors: list[str] = []
    unknown = sorted(set(raw) - sections)
    if unknown:
        errors.append(f"unknown section(s) {unknown}; valid sections: {sorted(sections)}")
    if "data" not in raw:
        errors.append("the [data] section is required (path, population_size)")
    spaces = raw.get("space", {})
    if not isinstance(spaces, dict) or not all(isinstance(v, dict) for v in spaces.values()):
        errors.append("[space.NAME] sections must be tables of parameter = [low, high] or "
                      "[choices]")
        spaces = {}
    data = section(raw, "data", DataConfig, base, errors)
    study = section(raw, "study", StudyConfig, base, errors)
    utility = section(raw, "utility", UtilityConfig, base, errors)
    audit = section(raw, "audit", AuditConfig, base, errors)
    kinds = {k: o.kind for k, o in measures.options().items()}
    risk_values = table(raw, "risk", kinds, base, errors)
    if data is None or study is None or utility is None or audit is None:
        raise_all(errors)
    cfg = Config(data=data, study=study,
                 risk=RiskConfig(risk_values, synthesized=study.synthesize or ()),
                 utility=utility, spaces={k: dict(v) for k, v in spaces.items()}, audit=audit,
                 source=source)
    # values that parsed are checked too, all at once; not what follows from a bad value
    # (attribute_keys = "age" is said, not also "cap_targets need attribute_keys")
    risk_raw = raw.get("risk")
    given = risk_raw if isinstance(risk_raw, dict) else {}
    failed = [f"risk.{k}" for k in given if k in kinds and k not in risk_values]
    raise_all(errors + [p for p in _problems(cfg) if not any(k in p for k in failed)])
    return cfg


def load(path: Path) -> Config:
    """Read and check a TOML config file."""
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    if path.is_dir():
        raise ConfigError(f"config file {str(path)!r} is a folder, not a TOML file")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a TOML file (TOML is UTF-8 text; byte {exc.start} is "
                          f"{exc.object[exc.start:exc.start + 1]!r})") from None
    return parse(raw, base=path.resolve().parent, source=path.resolve())


def with_overrides(cfg: Config, **study: Any) -> Config:
    """A copy with some [study] values replaced (CLI flags such as --trials, --output)."""
    given = {k: v for k, v in study.items() if v is not None}
    out = dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, **given))
    check(out)
    return out
