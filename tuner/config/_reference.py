"""The config reference, generated from the code: ``docs/config.md``.

Every key of every section with its type, default and one line of help, read from the config
dataclasses (:func:`tuner.config.key`), the measure registry's ``[risk]`` options
(:class:`tuner.measures.Option`) and the synthesiser registry's search spaces; a test holds the
committed page equal to what this module prints, so the page cannot drift from the code.

    python -m tuner.config > docs/config.md
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from tuner import measures
from tuner.config import _load as config
from tuner.config._values import kinds_of, rule_of
from tuner.synthesis import SYNTHESIZERS

SECTIONS = (("data", config.DataConfig), ("study", config.StudyConfig),
            ("utility", config.UtilityConfig), ("audit", config.AuditConfig))


def _toml(value: Any) -> str:
    """A default as it would be written in TOML (unset when it has none)."""
    if value is None:
        return "unset"
    if value is dataclasses.MISSING:
        return "**required**"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | Path):
        return f'`"{value}"`'
    if isinstance(value, tuple | list):
        return "`[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value) + "]`"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _type(kind: str) -> str:
    """How the page names a key's kind (:func:`tuner.config.kind_of`)."""
    return {"columns": "list of strings", "codes": "table of lists",
            "formats": "table of strings"}.get(kind, kind)


def _space(dist: Any) -> str:
    if isinstance(dist, CategoricalDistribution):
        return "one of " + ", ".join(f"`{c}`" for c in dist.choices)
    if isinstance(dist, IntDistribution | FloatDistribution):
        scale = " (log scale)" if dist.log else ""
        return f"`[{dist.low:g}, {dist.high:g}]`{scale}"
    return type(dist).__name__


def _allowed(rule: Any) -> str:
    """A key's declared range or choices as the page says it ("" for its type only)."""
    return "" if rule is None else rule.expected().replace("|", "\\|")


def section_table(name: str, cls: type) -> list[str]:
    """The lines of section ``[name]``: its dataclass's first docstring line and one row per
    key, read from the key's declaration alone (:func:`tuner.config.key`)."""
    doc = (cls.__doc__ or "").strip().splitlines()[0].replace("``", "`")
    out = [f"## [{name}]", "", doc, "",
           "| key | type | default | allowed | what |", "|---|---|---|---|---|"]
    kinds = kinds_of(cls)
    for f in dataclasses.fields(cls):
        out.append(f"| `{f.name}` | {_type(kinds[f.name])} | {_toml(f.default)} | "
                   f"{_allowed(rule_of(f))} | {f.metadata.get('help', '')} |")
    return out + [""]


def reference() -> str:
    """The page, as Markdown."""
    out = ["# Config reference", "",
           "Generated from the code by `python -m tuner.config` (a test holds this "
           "page equal to its output). A study's config is a TOML file of these sections; an "
           "unknown key, a value of the wrong type or out of range, or a column the data lack "
           "is refused before any trial, naming the key (exit 2).", ""]
    for name, cls in SECTIONS:
        out += section_table(name, cls)
    out += ["## [risk]", "",
            "Every option of the measure registry (`tuner/measures/`): a limit bounds a "
            "constraint of every trial; an unset limit is logged, not enforced.", "",
            "| key | type | default | allowed | what | measure |", "|---|---|---|---|---|---|"]
    owner = {o.key: spec.name for spec in measures.MEASURES.values() for o in spec.options}
    for key, opt in measures.options().items():
        out.append(f"| `{key}` | {_type(opt.kind)} | {_toml(opt.default)} | "
                   f"{_allowed(opt.valid)} | {opt.help} | {owner[key]} |")
    out += ["", "## [space.FAMILY]", "",
            "Each family's search space; a config may narrow a range or a set of choices "
            "(`[space.ctgan] epochs = [5, 20]`), never widen it.", ""]
    for spec in SYNTHESIZERS.values():
        out += [f"### [space.{spec.name}]", "", spec.summary, "",
                "| parameter | searched over |", "|---|---|"]
        out += [f"| `{p}` | {_space(d)} |" for p, d in spec.space.items()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"

