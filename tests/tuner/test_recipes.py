"""docs/architecture.md's recipes, followed on toy examples (issue 47 item 8): a new measure
(its function in ``risk``, one ``MeasureSpec``), a new family (one ``SynthesizerSpec``) and the
report rows a measure contributes. Each recipe's edits are the ones the page names, and what
the page promises follows without any other: the ``[risk]`` option's row, check and bad values,
the trial's constraint, the report's row; the family's place in the config and its search
space. (The config key's recipe: tests/tuner/config/test_declared.py.)"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

import risk
from risk.params import Range
from tests.tuner.conftest import write_config
from tests.tuner.memoriser import OutlierMemoriser
from tuner import config, measures
from tuner.config import bad_values, reference
from tuner.measures import _registry as registry
from tuner.release import _report as report
from tuner.scoring import Evaluation, evaluate, score
from tuner.search._context import prepare
from tuner.synthesis import SYNTHESIZERS, register, unregister
from tuner.synthesis._families import SynthesizerSpec


def _toy_copies(inp: measures.Inputs) -> measures.Outcome:
    # the recipe's "its function in risk/": an existing one read another way
    return measures.Outcome({"": risk.exact_copies(inp.train, inp.as_sampled)})


TOY = measures.MeasureSpec(
    "toy_copies",
    options=(measures.Option("toy_limit", "float", 0.5, "train copy share <= toy_limit",
                             valid=Range(0, 1)),),
    enabled=lambda o: True,
    compute=_toy_copies,
    metrics=lambda r: {"toy_share": float(r.train_share)},
    bounds=(measures.Bound("toy", "toy_share", "toy_limit"),),
    report=lambda label, r, o: [measures.ReportRow(
        "toy: share of synthetic records copying a training record",
        f"{r.train_share:.4f}", f"<= {o['toy_limit']}", "A toy row, from the recipe.")],
)


@pytest.fixture
def toy_measure(monkeypatch):
    """The recipe's one edit: the spec listed in the registry (here for this test only)."""
    with_toy = MappingProxyType({**registry.MEASURES, TOY.name: TOY})
    monkeypatch.setattr(registry, "MEASURES", with_toy)
    monkeypatch.setattr(measures, "MEASURES", with_toy)
    return TOY


def test_a_new_measure_gets_its_option_row_check_constraint_and_report_row(tmp_path,
                                                                          toy_measure):
    # the [risk] option: declared once, it has its reference row and its generated bad values
    assert "toy_limit" in measures.options()
    assert "| `toy_limit` | float | `0.5` | in [0, 1] | train copy share <= toy_limit |" \
        " toy_copies |" in reference()
    for bad in bad_values("float", TOY.options[0].valid):
        raw = {"data": {"path": "builtin:fair", "population_size": 100_000},
               "risk": {"toy_limit": bad}}
        with pytest.raises(config.ConfigError, match="risk.toy_limit"):
            config.parse(raw, base=tmp_path)
    # a trial computes it and is constrained by it: the exact copy share against its limit
    cfg = config.load(write_config(tmp_path, synthesizers=("cart",),
                                   extra_risk="toy_limit = 0.25"))
    ctx = prepare(cfg)
    copied = ctx.split.train.sample(frac=1.0, random_state=0).reset_index(drop=True)
    scored = score(cfg, ctx.split, copied, seed=1)
    share = scored.outcomes["toy_copies"].results[""].train_share
    assert share > 0.25 and scored.constraints["toy"] == pytest.approx(share - 0.25)
    # its row in the release report, from its report function
    ev = Evaluation.of(scored, synthesizer="cart", params={}, seed=1, fit_seconds=0.0,
                       sample_seconds=0.0)
    rows = report.measure_rows(ev, cfg.risk, cfg.utility.metric)
    toy_rows = [r for r in rows if r["measure"].startswith("toy:")]
    assert toy_rows == [{"measure": "toy: share of synthetic records copying a training record",
                         "value": f"{share:.4f}", "limit": "<= 0.25",
                         "meaning": "A toy row, from the recipe."}]
    # the stored constraint says its metric, value and limit (what the summary and report read)
    record = measures.constraint_record("toy", scored.constraints["toy"], ev.metrics(), cfg.risk)
    assert record["metric"] == "toy_share" and record["limit"] == 0.25
    assert record["limit_key"] == "toy_limit" and record["passed"] is False


@pytest.fixture
def toy_family():
    """The recipe's one edit: a spec in the registry (for a family outside the package,
    tuner.synthesis.register does it at run time, as here)."""
    spec = SynthesizerSpec("toy_columns", "columns drawn on their own (a toy family)",
                           lambda: OutlierMemoriser, {}, seed_argument="random_state")
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


def test_a_new_family_is_searchable_evaluated_and_in_the_reference(tmp_path, toy_family):
    assert toy_family.name in SYNTHESIZERS
    assert "### [space.toy_columns]" in reference()
    cfg = config.load(write_config(tmp_path, synthesizers=("toy_columns",)))  # a valid choice
    assert cfg.study.synthesizers == ("toy_columns",)
    split = prepare(cfg).split
    ev = evaluate(cfg, split, "toy_columns", {}, seed=3)
    assert ev.synthesizer == "toy_columns" and len(ev.synthetic) > 0 and ev.constraints
    again = evaluate(cfg, split, "toy_columns", {}, seed=3)
    assert again.data_sha256() == ev.data_sha256()  # its seed argument is honoured


def _recipe(page: str, heading: str) -> str:
    return page.split(f"**{heading}**", 1)[1].split("\n\n", 1)[0]


def test_the_page_names_these_recipes_and_their_tests():
    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    assert "MeasureSpec" in _recipe(page, "A new measure in the study")
    assert "SynthesizerSpec" in _recipe(page, "A new synthesiser")
    assert "test_a_new_key_by_the_recipe" in page and "tests/tuner/test_recipes.py" in page
