"""Every config key and ``[risk]`` option is declared once (type, default, range or choices,
help), and its bad-value tests are generated from that declaration: a key added to a section
or to a measure gets them without a line of test written for it (issue 47 item 1)."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from risk.params import Choices, Range
from tuner import config, measures
from tuner.config import SECTIONS, StudyConfig, bad_values, key, kinds_of, rule_of

BASE = {"data": {"path": "builtin:adult", "population_size": 100_000}}


def _cases() -> list[tuple[str, str, Any]]:
    """(section, key, bad value) for every declared key: none is left out."""
    out = []
    for name, cls in SECTIONS:
        kinds = kinds_of(cls)
        for f in dataclasses.fields(cls):
            out += [(name, f.name, v) for v in bad_values(kinds[f.name], rule_of(f))]
    for k, opt in measures.options().items():
        out += [("risk", k, v) for v in bad_values(opt.kind, opt.valid)]
    return out


CASES = _cases()


def _refusal(section: str, name: str, value: Any) -> str:
    raw = {s: dict(v) for s, v in BASE.items()}
    raw.setdefault(section, {})[name] = value
    with pytest.raises(config.ConfigError) as info:
        config.parse(raw, base=Path("."))
    return str(info.value)


def test_every_declared_key_has_generated_bad_values():
    keyed = {(s, k) for s, k, _ in CASES}
    declared = {(n, f.name) for n, cls in SECTIONS for f in dataclasses.fields(cls)}
    declared |= {("risk", k) for k in measures.options()}
    assert declared <= keyed, sorted(declared - keyed)
    # the ranges and choices are tried too, not only a value of the wrong type
    assert len(CASES) > len(declared) + 40


@pytest.mark.parametrize(("section", "name", "value"), CASES,
                         ids=[f"{s}.{k}={v!r}" for s, k, v in CASES])
def test_a_bad_value_is_refused_naming_the_key_and_the_value(section, name, value):
    text = _refusal(section, name, value)
    assert f"{section}.{name}" in text, text
    shown = repr(value) if not isinstance(value, list) or name != "synthesizers" else value[0]
    assert str(shown).strip("[]") in text or repr(value) in text, text


def test_a_range_check_says_what_was_expected():
    text = _refusal("audit", "tpr_limit", 1.5)
    assert "audit.tpr_limit must be in (0, 1], got 1.5" in text
    text = _refusal("study", "pruner", "asha")
    assert "study.pruner must be one of ('hyperband', 'halving', 'none'), got 'asha'" in text
    # a list under choices names only what is not a choice
    text = _refusal("study", "synthesizers", ["cart", "gan"])
    assert text.endswith("got ['gan']"), text


def test_a_declared_range_is_checked_on_an_override_too():
    cfg = config.parse({s: dict(v) for s, v in BASE.items()}, base=Path("."))
    with pytest.raises(config.ConfigError, match=r"study.n_trials must be >= 1, got 0"):
        config.with_overrides(cfg, n_trials=0)


def test_value_protection_refuses_a_negative_k():
    # before the declaration, protect_k = -3 was read as "off" without a word
    assert "data.protect_k must be >= 0 (0: off), got -3" in _refusal("data", "protect_k", -3)


def test_a_new_key_by_the_recipe_gets_its_row_its_check_and_its_bad_values():
    """docs/architecture.md, 'Add a config key': the key's declaration is the one edit that
    gives it a row in the reference, a check and bad-value tests."""
    toy = dataclasses.make_dataclass(
        "ToyStudy", [("toy_rounds", int, key(3, help="rounds of the toy",
                                             valid=Range(1, 9, unit="rounds")))],
        bases=(StudyConfig,), frozen=True)
    rows = config.section_table("study", toy)
    assert "| `toy_rounds` | int | `3` | in [1, 9] rounds | rounds of the toy |" in rows
    bad = bad_values(kinds_of(toy)["toy_rounds"], rule_of(dataclasses.fields(toy)[-1]))
    assert bad == [2.5, 0, 10]
    errors: list[str] = []
    values = config.section({"study": {"toy_rounds": 2.5}}, "study", toy, Path("."), errors)
    assert errors == ["study.toy_rounds must be an integer, got 2.5"] and values is not None
    for v in bad[1:]:
        read = config.section({"study": {"toy_rounds": v}}, "study", toy, Path("."), [])
        assert config.declared_problems("study", read) == [
            f"study.toy_rounds must be in [1, 9] rounds, got {v}"]
    ok = config.section({"study": {"toy_rounds": 9}}, "study", toy, Path("."), [])
    assert config.declared_problems("study", ok) == []


def test_a_kind_without_a_bad_value_fails_loudly():
    with pytest.raises(TypeError, match="no bad value is known"):
        bad_values("matrix", None)


def test_every_choice_key_reads_its_choices_from_one_constant():
    # the constants the rest of the code compares with are the declared choices themselves
    fields = {f.name: f for _, cls in SECTIONS for f in dataclasses.fields(cls)}
    assert rule_of(fields["pruner"]) == Choices(config.PRUNERS)
    assert rule_of(fields["mode"]) == Choices(config.MODES)
    assert rule_of(fields["design"]) == Choices(config.AUDIT_DESIGNS)
    hints = typing.get_type_hints(config.AuditConfig)
    assert hints["design"] is str
