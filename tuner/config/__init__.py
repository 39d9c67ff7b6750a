"""The study's configuration: one TOML file (or mapping) read into a typed :class:`Config`.

Sections ``[data]``, ``[study]``, ``[risk]``, ``[utility]``, ``[audit]`` and ``[space.FAMILY]``;
every problem of a file is collected and raised at once as one :class:`ConfigError` naming the
key, the value and what was expected (exit 2 on the command line). ``python -m tuner.config``
prints the reference of every key (``docs/config.md``), generated from the code.

Modules: ``_values`` (TOML values into typed ones, the declared checks and bad values,
generic), ``_sections`` (the plain sections as dataclasses, each key declared once: type,
default, range or choices, help), ``_load`` (the whole config and its checks across keys),
``_fit`` (the config against the data), ``_reference`` (the generated page),
``__main__`` (prints it).
"""

from __future__ import annotations

from tuner.config._fit import check_data, data_problems, identifier_clashes, named_columns
from tuner.config._load import (
    Config,
    RiskConfig,
    check,
    load,
    parse,
    with_overrides,
)
from tuner.config._reference import SECTIONS, reference, section_table
from tuner.config._sections import (
    AUDIT_BACKENDS,
    AUDIT_DESIGNS,
    DEFAULT_TRIALS,
    DEVICES,
    MODES,
    PICK_RULES,
    PRUNERS,
    UNBOUNDED,
    UTILITY_METRICS,
    AuditConfig,
    DataConfig,
    StudyConfig,
    UtilityConfig,
)
from tuner.config._values import (
    ConfigError,
    bad_values,
    coerce,
    declared_problems,
    key,
    kind_of,
    kinds_of,
    raise_all,
    rule_of,
    section,
    table,
)

__all__ = [
    "AUDIT_BACKENDS", "AUDIT_DESIGNS", "DEFAULT_TRIALS", "DEVICES", "MODES", "PICK_RULES",
    "PRUNERS", "SECTIONS", "UNBOUNDED", "UTILITY_METRICS", "AuditConfig", "Config",
    "ConfigError", "DataConfig",
    "RiskConfig", "StudyConfig", "UtilityConfig", "bad_values", "check", "check_data", "coerce",
    "data_problems", "declared_problems", "identifier_clashes", "key", "kind_of", "kinds_of",
    "load", "named_columns", "parse",
    "raise_all", "reference", "rule_of", "section", "section_table", "table",
    "with_overrides",
]
