"""Every public argument with a range or choices is declared once (risk._arguments), and its
bad values are tried on every public function that takes it, generated from the declaration
(issue 47 item 1): a function that takes a declared argument without declaring it fails here."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

import risk
import risk.audit
from risk._arguments import ARGUMENTS
from risk.params import Choices, Range, declared, problem

# where a name of ARGUMENTS means something else, and why
OTHER_MEANING = {("membership_audit", "targets"): "a count of targets or their labels"}


def _public() -> dict[str, Any]:
    out = {n: getattr(risk, n) for n in risk.__all__ if inspect.isfunction(getattr(risk, n))}
    # risk.audit's own functions and what it re-exports ("import x as x")
    source = inspect.getsource(risk.audit)
    out |= {n: f for n, f in vars(risk.audit).items() if inspect.isfunction(f) and (
        f.__module__ == "risk.audit" and not n.startswith("_") or f"import {n} as {n}" in source)}
    out["MembershipAuditResult.verdict"] = risk.audit.MembershipAuditResult.verdict
    return out


PUBLIC = _public()


def _bad(rule: Any) -> list[Any]:
    # a list is no one choice: hypothesis found design=[] let through (an empty list's items
    # are all choices)
    wrong_types = ["0.5"] if isinstance(rule, Range) else [1, []]
    return [*wrong_types, *rule.outside(integer=isinstance(rule, Range) and rule.integer)]


CASES = [(name, arg, value) for name, fn in PUBLIC.items()
         for arg, rule in getattr(fn, "declared", {}).items() for value in _bad(rule)]


def test_every_public_argument_of_a_declared_name_is_declared():
    missing = [(name, p) for name, fn in PUBLIC.items()
               for p in inspect.signature(fn).parameters
               if p in ARGUMENTS and p not in getattr(fn, "declared", {})
               and (name, p) not in OTHER_MEANING]
    assert not missing, missing
    assert len(CASES) > 80


@pytest.mark.parametrize(("name", "arg", "value"), CASES,
                         ids=[f"{n}-{a}={v!r}" for n, a, v in CASES])
def test_a_bad_value_is_refused_naming_the_argument(name, arg, value):
    with pytest.raises((risk.RiskInputError, TypeError)) as info:
        PUBLIC[name](**{arg: value})
    text = str(info.value)
    assert f"`{arg}`" in text and repr(value) in text, text


def test_a_declared_value_in_range_is_let_through_to_the_body():
    # values inside the range, and a closed bound itself (tpr_limit = 1), reach
    # the body and give its result
    assert risk.naive_f1(0.5) == pytest.approx(2 / 3)
    assert 0.0 <= risk.audit.null_refusal_rate(10, 200, design="shared", tpr_limit=1.0) <= 1.0
    assert risk.audit.minimum_shadows(4, design="shared", tpr_limit=0.5) >= 8


def test_one_message_format_for_every_setting():
    # the config, the [risk] options and risk's arguments say a bad value the same way
    rule = Range(0, 1, closed="right")
    assert problem("audit.tpr_limit", rule, 1.5) == "audit.tpr_limit must be in (0, 1], got 1.5"
    with pytest.raises(risk.RiskInputError) as info:
        risk.audit.null_refusal_rate(10, 60, design="shared", tpr_limit=1.5)
    assert str(info.value) == "`tpr_limit` must be in (0, 1], got 1.5"
    assert problem("x", Choices(("a", "b")), ["a", "c"]) == "x must be one of ('a', 'b'), got ['c']"


def test_a_declaration_of_an_argument_the_function_lacks_is_an_error():
    with pytest.raises(TypeError, match=r"has no argument\(s\) \['depth'\]"):
        declared(depth=Range(1))(lambda x: x)


def test_none_passes_only_where_the_signature_allows_it():
    # numeric_bins: int | None (no binning) may be None; sampling_fraction's None default too
    fn = declared(bins=Range(1, integer=True), level=Range(0, 1))(
        lambda bins, level=None: (bins, level))
    assert fn(3) == (3, None)
    with pytest.raises(TypeError, match="`bins` must be an integer, got None"):
        fn(None)


def test_no_message_in_the_product_says_but_got():
    # the imperative checks (types, frames, pairs of arguments) say a bad value in the declared
    # rules' form too ("`NAME` must be EXPECTED, got VALUE"), so a user reads one form
    root = Path(risk.__file__).parent.parent
    said = [f"{path.relative_to(root)}:{n}" for folder in ("risk", "tuner")
            for path in sorted((root / folder).rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "but " + "got" in line]
    assert said == []
