"""The measure registry checked generically, as scikit-learn's ``check_estimator`` checks an
estimator: every :class:`tuner.measures.MeasureSpec` that is registered is checked here without
being named, so a new measure cannot escape and a misspelt bound cannot make every trial
infeasible in silence."""

from __future__ import annotations

import math

import pytest

from tests.tuner.conftest import write_config
from tuner import config, measures
from tuner.data import read_builtin, split
from tuner.measures import MEASURES, Inputs

FULL = {"replicated_uniques": "remove", "disco_limit": 20.0}
ALSO = {"replicated_uniques": "infeasible"}  # turns on the measure "unique_copies"


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """Fair's survey split as a study splits it: train, holdout and fresh records (the sealed
    audit set: drawn from the same population, seen by nothing), and a config of every measure."""
    folder = tmp_path_factory.mktemp("registry")
    cfg = config.load(write_config(folder, extra_risk="disco_limit = 20.0"))
    sp = split(read_builtin("builtin:fair").sample(1500, random_state=3).reset_index(drop=True),
               train_fraction=0.5, seed=7, audit_fraction=0.25)
    return cfg, sp


def _options(cfg, changes):  # noqa: ANN001
    return {**cfg.risk, **changes}


def _inputs(cfg, sp, synthetic, options) -> Inputs:  # noqa: ANN001
    return Inputs(train=sp.train, holdout=sp.holdout, synthetic=synthetic, options=options,
                  population_size=cfg.data.population_size,
                  keys=cfg.data.keys, seed=5, study_seed=7,
                  release=True)


def _full_synthesis_specs(cfg) -> list[str]:  # noqa: ANN001
    on = {s.name for c in (FULL, ALSO) for s in measures.enabled(_options(cfg, c))}
    return sorted(on)


def test_every_bound_names_a_declared_option_and_one_meaning(parts):
    cfg, _ = parts
    declared = measures.options()
    seen: dict[str, tuple] = {}
    for spec in MEASURES.values():
        for bound in spec.bounds:
            assert bound.sense in ("max", "min"), (spec.name, bound)
            if isinstance(bound.limit, str):
                assert bound.limit in declared, (spec.name, bound.name, bound.limit)
            else:
                assert math.isfinite(bound.limit), (spec.name, bound)
            # partial synthesis's copies constraints keep the names of full synthesis's: the
            # same metric and limit, so a constraint name means one thing in a manifest
            meaning = (bound.metric, bound.limit, bound.sense)
            assert seen.setdefault(bound.name, meaning) == meaning, (spec.name, bound.name)
    partial = config.RiskConfig(dict(cfg.risk), synthesized=("affairs",))
    for options in (_options(cfg, FULL), _options(cfg, ALSO), partial):
        names = [b.name for spec in measures.enabled(options) for b in spec.bounds]
        assert len(names) == len(set(names)), names  # measures on together: names unique


def test_only_partial_synthesis_measures_are_left_to_tests_of_partial_mode(parts):
    cfg, _ = parts
    partial = {s.name for s in MEASURES.values() if s.name not in _full_synthesis_specs(cfg)}
    # each of these is enabled by [study] synthesize alone;
    # tests/tuner/synthesis/test_partial.py runs them
    assert partial == {"identification", "partial_copies", "partial_near_copies"}
    options = config.RiskConfig(dict(cfg.risk), synthesized=("affairs",))
    assert partial <= {s.name for s in measures.enabled(options)}


@pytest.mark.parametrize("changes", [FULL, ALSO], ids=["remove", "infeasible"])
def test_every_measure_logs_the_metrics_its_bounds_name_and_its_rows_render(parts, changes):
    cfg, sp = parts
    options = _options(cfg, changes)
    for spec in measures.enabled(options):
        outcome = spec.compute(_inputs(cfg, sp, sp.audit, options))
        assert outcome.results, spec.name
        for label, result in outcome.results.items():
            logged = spec.metrics(result)
            for bound in spec.bounds:
                assert bound.metric in logged, (spec.name, bound.name, bound.metric,
                                                 sorted(logged))
            if spec.report is not None:
                rows = spec.report(label, result, options)
                assert rows, spec.name
                for row in rows:
                    assert row.measure.strip() and row.value.strip() and row.meaning.strip()
        constraints = spec.constraints(outcome, options)
        assert all(isinstance(v, float) for v in constraints.values()), spec.name


@pytest.mark.parametrize("changes", [FULL, ALSO], ids=["remove", "infeasible"])
def test_a_verbatim_copy_never_scores_safer_than_fresh_records(parts, changes):
    # the ideal generator's output: records of the same population that nothing was fitted on
    cfg, sp = parts
    options = _options(cfg, changes)
    checked = 0
    for spec in measures.enabled(options):
        copy = spec.constraints(spec.compute(_inputs(cfg, sp, sp.train, options)), options)
        fresh = spec.constraints(spec.compute(_inputs(cfg, sp, sp.audit, options)), options)
        assert copy.keys() == fresh.keys(), spec.name
        for name in copy:
            assert copy[name] > fresh[name], (spec.name, name, copy[name], fresh[name])
            checked += 1
    assert checked >= 6


def test_a_bound_on_a_metric_the_measure_does_not_log_is_a_bug_said_at_once(parts):
    cfg, sp = parts
    import dataclasses

    spec = MEASURES["copies"]
    misspelt = dataclasses.replace(spec, bounds=(dataclasses.replace(spec.bounds[0],
                                                                     metric="copies_diference"),))
    outcome = spec.compute(_inputs(cfg, sp, sp.audit, cfg.risk))
    with pytest.raises(RuntimeError, match="copies_diference.*copies_difference"):
        misspelt.constraints(outcome, cfg.risk)


def test_every_synthesizer_space_is_narrowable_and_every_choice_decodes():
    # the synthesiser registry checked as the measure registry is (each family fits and samples
    # in tests/tuner/search/test_study.py::test_every_synthesizer_end_to_end..., enqueued from the
    # registry itself)
    from optuna.distributions import CategoricalDistribution

    from tuner.synthesis import SYNTHESIZERS
    from tuner.synthesis._spaces import decode, narrow

    for name, spec in SYNTHESIZERS.items():
        assert spec.summary and spec.space, name
        assert narrow(name, None) == dict(spec.space)
        for param, dist in spec.space.items():
            if isinstance(dist, CategoricalDistribution):
                for choice in dist.choices:
                    decoded = decode({param: choice})[param]
                    if isinstance(choice, str) and "x" in choice:  # layer widths "128x128"
                        assert decoded == tuple(int(w) for w in choice.split("x")), choice
                    elif param == "max_depth" and choice == 0:  # CART's "no limit"
                        assert decoded is None
                    else:
                        assert decoded == choice, (name, param, choice)
