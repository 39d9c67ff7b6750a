"""Reading TOML tables into typed values: the generic part of :mod:`tuner.config`.

A key's kind comes from its dataclass field's type, resolved (path, list of columns, int,
float, bool, str, per-column codes; any other type is refused when the key is read); every
problem is collected, naming the key, the value and what was expected, so that a file's
mistakes are reported at once.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from risk.params import Rule, problem
from tuner.errors import ConfigError


def key(default: Any = dataclasses.MISSING, *, help: str,  # noqa: A002
        valid: Rule | None = None) -> Any:
    """A config key, declared once: its type (the field's annotation), its default (none:
    required), its range or choices (``valid``, a :mod:`risk.params` rule) and one line of help.
    From this come its check (:func:`declared_problems`), its row in the config reference
    (``docs/config.md``) and its bad-value tests (:func:`bad_values`)."""
    return dataclasses.field(default=default, metadata={"help": help, "valid": valid})


def rule_of(field: dataclasses.Field[Any]) -> Rule | None:
    """The range or choices a config key was declared with (``None``: its type only)."""
    rule: Rule | None = field.metadata.get("valid")
    return rule


def declared_problems(name: str, values: Any) -> list[str]:
    """Every key of section ``[name]`` (a section dataclass) outside its declared range or
    choices, in :func:`risk.params.problem`'s words (an unset key is not checked)."""
    return [said for f in dataclasses.fields(values)
            if (rule := rule_of(f)) is not None and (value := getattr(values, f.name)) is not None
            and (said := problem(f"{name}.{f.name}", rule, value))]


# a value of the wrong type for each kind of key (TOML's types: a float for an int, ...)
_WRONG_TYPE: dict[str, Any] = {
    "path": 1, "columns": "age", "codes": ["-8"], "formats": {"a": "day-month"},
    "bool": "yes", "int": 2.5, "float": "0.5", "str": 1,
}


def bad_values(kind: str, rule: Rule | None) -> list[Any]:
    """The values a test gives a key of ``kind`` declared with ``rule``, each of which must be
    refused naming the key: one of the wrong type, and those just beyond its range or outside
    its choices (for a list, a list holding one). A kind without a wrong-type value fails."""
    if kind not in _WRONG_TYPE:
        raise TypeError(f"no bad value is known for a config key of kind {kind!r}")
    out = [_WRONG_TYPE[kind]]
    if rule is not None:
        outside = list(rule.outside(integer=kind == "int"))
        out += [[v] for v in outside] if kind == "columns" else outside
    return out


_KINDS: dict[Any, str] = {Path: "path", bool: "bool", int: "int", float: "float", str: "str"}


def kind_of(annotation: Any) -> str:
    """The option kind of a dataclass field's type (``X | None`` as ``X``): ``Path`` a path,
    ``tuple[str, ...]`` a list of columns, ``dict[str, tuple[...]]`` per-column codes,
    ``dict[str, str]`` per-column formats (``strftime`` directives), and
    ``bool``, ``int``, ``float``, ``str`` themselves. Any other type is a programming error
    (a new key whose type no reader knows), raised, never read as a string."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return kind_of(args[0])
    if origin is tuple and args == [str, Ellipsis]:
        return "columns"
    if origin is dict and args == [str, str]:
        return "formats"
    if origin is dict and args and args[0] is str:
        return "codes"
    if annotation in _KINDS:
        return _KINDS[annotation]
    raise TypeError(f"no config reader for a key of type {annotation!r}")


def kinds_of(cls: type) -> dict[str, str]:
    """The option kind of every field of the section dataclass ``cls``."""
    hints = typing.get_type_hints(cls)
    return {f.name: kind_of(hints[f.name]) for f in dataclasses.fields(cls)}


def coerce(where: str, kind: str, value: Any, base: Path) -> Any:
    """``value`` of TOML key ``where`` as ``kind``, or :class:`ConfigError` saying why not."""
    if kind == "path":
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a path string, got {value!r}")
        p = Path(value)
        return p if (p.is_absolute() or value.startswith("builtin:")) else (base / p)
    if kind == "codes":
        ok = isinstance(value, dict) and all(
            isinstance(v, list) and v and all(isinstance(x, (int, float, str))
                                              and not isinstance(x, bool) for x in v)
            for v in value.values())
        if not ok:
            raise ConfigError(f"{where} must be a table of column = [codes read as missing], "
                              f"e.g. {{ income = [-8] }}, got {value!r}")
        return {str(k): tuple(v) for k, v in value.items()}
    if kind == "formats":
        ok = isinstance(value, dict) and all(isinstance(v, str) and "%" in v
                                             for v in value.values())
        if not ok:
            raise ConfigError(f"{where} must be a table of column = \"strftime format\", e.g. "
                              f"{{ BIRTHDATE = \"%d/%m/%Y\" }}, got {value!r}")
        return {str(k): v for k, v in value.items()}
    if kind == "columns":
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{where} must be a list of strings, got {value!r}")
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ConfigError(f"{where} names {twice} more than once: name each once, got "
                              f"{value!r}")
        return tuple(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer, got {value!r}")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}")
    return value


def table(raw: dict[str, Any], name: str, kinds: Mapping[str, str], base: Path,
           errors: list[str]) -> dict[str, Any]:
    """The values of section ``[name]`` coerced to ``kinds``; problems appended to ``errors``."""
    table = raw.get(name, {})
    if not isinstance(table, dict):
        errors.append(f"[{name}] must be a table, got {table!r}")
        return {}
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        errors.append(f"unknown key(s) {unknown} in [{name}]; valid keys: {sorted(kinds)}")
    values: dict[str, Any] = {}
    for key in sorted(set(table) & set(kinds)):
        try:
            values[key] = coerce(f"{name}.{key}", kinds[key], table[key], base)
        except ConfigError as exc:
            errors.append(str(exc))
    return values


def section(raw: dict[str, Any], name: str, cls: type, base: Path, errors: list[str]) -> Any:
    kinds = kinds_of(cls)
    values = table(raw, name, kinds, base, errors)
    absent = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING
              and f.name not in values]
    if absent:
        given = raw.get(name)
        if not isinstance(given, dict):
            return None  # a section that is not a table was said once already
        missing = [k for k in absent if k not in given]  # a bad value was said already
        if missing:
            errors.append(f"[{name}] lacks required key(s) {missing}")
        return None
    return cls(**values)


def raise_all(errors: list[str]) -> None:
    if len(errors) == 1:
        raise ConfigError(errors[0])
    if errors:
        raise ConfigError(f"{len(errors)} problems in the configuration:\n" +
                          "\n".join(f"  - {e}" for e in errors))
