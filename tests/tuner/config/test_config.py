"""Bad configs are clear errors; good ones parse; spaces only narrow."""

from __future__ import annotations

import math
import re

import pytest

from tests.tuner.conftest import write_config
from tuner import config
from tuner.cli import main
from tuner.synthesis import _spaces as spaces
from tuner.synthesis._families import SYNTHESIZERS


def test_good_config_parses(tmp_path):
    cfg = config.load(write_config(tmp_path))
    assert cfg.data.population_size == 100000
    assert cfg.study.output == tmp_path / "out"
    assert cfg.risk.cap_targets == ("affairs",)
    assert cfg.spaces["ctgan"]["epochs"] == [1, 2]


def _raw(tmp_path):
    import tomllib

    return tomllib.loads(write_config(tmp_path).read_text())


@pytest.mark.parametrize(("where", "old"), [("data", "quasi_identifiers"),
                                           ("risk", "cap_keys"), ("data", "keep_unique")])
def test_a_name_no_released_version_used_is_an_unknown_key(tmp_path, where, old):
    # 0.1.0 is the first release (CHANGELOG.md): the names used before it are not read
    raw = _raw(tmp_path)
    raw[where][old] = ["age"]
    with pytest.raises(config.ConfigError, match=rf"unknown key\(s\) \['{old}'\] in \[{where}\]"):
        config.parse(raw, base=tmp_path)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"extra": "[bogus]\nx = 1\n"}, "unknown section"),
    ({"extra": "[space.ctgan2]\nepochs = [1, 2]\n"}, "not a synthesiser"),
    ({"extra": "[space.cart]\nleaves = [1, 2]\n"}, "unknown parameter"),
    ({"extra_risk": "m_threshold = 1.5"}, "m_threshold must be in"),
    ({"extra_risk": "frobnicate = 2"}, "unknown key"),
    ({"extra_risk": "hamming_threshold = 'many'"}, "must be an integer"),
    ({"extra": "[space.cart]\nmin_samples_leaf = [0, 500]\n"}, r"1 <= low <= high <= 200"),
    ({"extra": "[space.gaussian_copula]\ndefault_distribution = [\"gaussian_kde\"]\n"},
     "may only narrow"),
])
def test_bad_configs_are_clear_errors(tmp_path, kwargs, match):
    with pytest.raises(config.ConfigError, match=match):
        config.load(write_config(tmp_path, **kwargs))


def test_missing_population_size_and_unknown_synthesizer(tmp_path):
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace("population_size = 100000\n", ""))
    with pytest.raises(config.ConfigError, match="population_size"):
        config.load(path)
    with pytest.raises(config.ConfigError,
                       match=r"study.synthesizers must be one of .*got \[.gan9000.\]"):
        config.load(write_config(tmp_path, synthesizers=("cart", "gan9000")))


def test_space_narrows_never_widens():
    narrowed = spaces.narrow("cart", {"min_samples_leaf": [10, 50]})
    assert (narrowed["min_samples_leaf"].low, narrowed["min_samples_leaf"].high) == (10, 50)
    with pytest.raises(ValueError, match="narrowing"):
        spaces.narrow("cart", {"min_samples_leaf": [0, 500]})
    with pytest.raises(ValueError, match="may only narrow"):
        spaces.narrow("ctgan", {"pac": [3]})


def test_ctgan_batch_sizes_divisible_by_every_pac():
    space = SYNTHESIZERS["ctgan"].space
    for batch in space["batch_size"].choices:
        for pac in space["pac"].choices:
            assert batch % pac == 0


def test_decode():
    assert spaces.decode({"generator_dim": "128x128", "max_depth": 0, "epochs": 3}) == {
        "generator_dim": (128, 128), "max_depth": None, "epochs": 3}


def test_cli_reports_config_error_with_exit_2(tmp_path, capsys):
    path = write_config(tmp_path, extra_risk="frobnicate = 2")
    assert main(["run", str(path), "--no-progress"]) == 2
    assert "unknown key" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "nope.toml")]) == 2


def test_headerless_csv_with_missing_marker(tmp_path):
    # UCI-style file: no header row, a space after each comma, '?' for missing
    (tmp_path / "people.data").write_text("39, State-gov, ?\n50, ?, Husband\n38, Private, "
                                          "Not-in-family\n52, Private, Wife\n")
    cfg_path = tmp_path / "study.toml"
    cfg_path.write_text(
        '[data]\npath = "people.data"\nheader_names = ["age", "workclass", "relationship"]\n'
        'missing_values = ["?"]\npopulation_size = 100\naudit_fraction = 0.0\n'
    )
    cfg = config.load(cfg_path)
    from tuner.search._context import prepare

    frame = prepare(config.with_overrides(cfg, output=tmp_path / "out")).frame
    assert list(frame.columns) == ["age", "workclass", "relationship"]
    assert frame["workclass"].isna().sum() == 1 and frame["relationship"].isna().sum() == 1
    assert frame.loc[2, "workclass"] == "Private"  # the leading space is gone
    assert frame["age"].tolist() == [39, 50, 38, 52]


def test_unsupported_data_suffix_is_a_clear_error(tmp_path):
    (tmp_path / "t.xlsx").write_text("a\n1\n")
    from tuner.data import read_table

    with pytest.raises(ValueError, match=r"must be CSV .* or Parquet .*'\.xlsx'"):
        read_table(tmp_path / "t.xlsx")


@pytest.mark.parametrize(("replace", "match"), [
    (("attribute_keys = [", 'attribute_keys = ["no_such_column", '),
     r"risk\.attribute_keys names column\(s\) "
     r"\['no_such_column'\]"),
    (('cap_targets = ["affairs"]', 'cap_targets = ["afairs"]'), r"risk\.cap_targets .*'afairs'"),
    (('inference_targets = ["affairs"]', 'inference_targets = ["x"]'),
     r"risk\.inference_targets .*\['x'\]"),
    (("train_fraction = 0.5", 'train_fraction = 0.5\nkeys = ["age", "zz"]'),
     r"data\.keys .*\['zz'\]"),
    (("population_size = 100000", "population_size = 5000"),
     r"data\.population_size = 5000 is smaller than the 6366 records"),
])
def test_config_that_does_not_fit_the_data_fails_before_any_trial(tmp_path, capsys, replace,
                                                                   match):
    # caught once the data are read, with exit 2, instead of every trial failing one by one
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace(*replace, 1))
    assert main(["run", str(path), "--no-progress"]) == 2
    assert re.search(match, capsys.readouterr().err)
    assert not (tmp_path / "out" / "study.db").exists()


def test_every_problem_of_a_file_is_reported_at_once(tmp_path):
    path = write_config(tmp_path,
                        extra_risk="m_threshold = 1.5\nhamming_threshold = -1\nfrobnicate = 2")
    path.write_text(path.read_text().replace('name = "t"', 'name = ""'))
    with pytest.raises(config.ConfigError) as info:
        config.load(path)
    text = str(info.value)
    assert text.startswith("4 problems in the configuration")
    for part in ("risk.m_threshold must be in (0, 1), got 1.5",
                 "risk.hamming_threshold must be >= 0", "unknown key(s) ['frobnicate'] in [risk]",
                 "study.name must be a non-empty"):
        assert part in text, part


def test_risk_keys_come_from_the_measure_registry(tmp_path):
    from tuner import measures

    cfg = config.load(write_config(tmp_path))
    assert set(cfg.risk) == set(measures.options())
    # an option left out takes the registry's default, a given one its value
    assert cfg.risk.cap_limit == measures.options()["cap_limit"].default
    assert cfg.risk.cap_targets == ("affairs",)
    with pytest.raises(AttributeError, match="no option"):
        _ = cfg.risk.no_such_option


def _table_with(tmp_path, **columns):
    import pandas as pd

    frame = pd.DataFrame({"a": [1, 2, 1, 2] * 25, "b": ["x", "y", "y", "x"] * 25, **columns})
    frame.to_csv(tmp_path / "t.csv", index=False)
    return frame


def _tiny_run_config(tmp_path, data_extra=""):
    path = tmp_path / "study.toml"
    path.write_text(f'[data]\npath = "t.csv"\npopulation_size = 1000\n{data_extra}\n'
                    '[study]\noutput = "out"\n')
    return config.load(path)


def test_an_undeclared_identifier_stops_the_run_naming_the_fix(tmp_path):
    from tuner.search._context import prepare

    _table_with(tmp_path, person=[f"P{i:04d}" for i in range(100)])
    with pytest.raises(config.ConfigError, match=r"'person': .*takes a different value in every "
                       r"record(.|\n)*identifiers = \['person'\](.|\n)*keep_as_data"):
        prepare(_tiny_run_config(tmp_path))
    ctx = prepare(_tiny_run_config(tmp_path, 'identifiers = ["person"]'))
    assert list(ctx.frame.columns) == ["a", "b"]  # dropped before anything else
    ctx = prepare(_tiny_run_config(tmp_path, 'keep_as_data = ["person"]'))
    assert "person" in ctx.frame.columns
    with pytest.raises(config.ConfigError, match=r"data\.identifiers names column\(s\) \['pid'\]"):
        prepare(_tiny_run_config(tmp_path, 'identifiers = ["pid"]'))


def test_a_nearly_unique_column_is_warned_about_and_measurements_are_not_judged(tmp_path,
                                                                               capsys):
    import numpy as np

    from tuner.search._context import prepare

    ids = list(range(97)) + [0, 1, 2]  # 97 % unique
    _table_with(tmp_path, code=ids, income=np.random.default_rng(0).normal(size=100))
    ctx = prepare(_tiny_run_config(tmp_path))
    assert "column 'code' is unique for 97.0% of the records" in capsys.readouterr().out
    assert "income" in ctx.frame.columns  # a float measurement, all distinct: not an identifier


def test_cli_exits_2_on_an_identifier_column(tmp_path, capsys):
    _table_with(tmp_path, record_no=list(range(100)))
    _tiny_run_config(tmp_path)
    assert main(["run", str(tmp_path / "study.toml"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "'record_no': named like a record identifier\n" in err  # not also counted


@pytest.mark.parametrize(("text", "names", "match"), [
    ("a,b,c\n1,2,3\n4,5\n", None,
     r"ragged: line 3 has 2 fields where line 1 has 3 \(1 row\(s\) with 2 fields, "
     r"2 row\(s\) with 3"),
    ("a,b\n1,2,3\n", None, "ragged"),
    ("1,2,3\n4,5,6\n", ["x", "y"], r"header_names names 2 columns, but the rows .* have 3"),
])
def test_csv_that_would_lose_rows_or_columns_is_refused(tmp_path, text, names, match):
    from tuner.data import read_table

    (tmp_path / "t.csv").write_text(text)
    with pytest.raises(ValueError, match=match):
        read_table(tmp_path / "t.csv", header_names=names)


def test_missing_codes_are_read_as_missing_not_synthesised(tmp_path):
    from tests.data import require
    from tuner.search._context import prepare

    data = require("sd2011/sd2011_orig.csv")
    path = tmp_path / "s.toml"
    path.write_text(f'[data]\npath = "{data}"\npopulation_size = 31000000\n'
                    'missing_codes = { income = [-8] }\n[study]\noutput = "out"\n')
    frame = prepare(config.load(path)).frame
    assert (frame["income"] == -8).sum() == 0
    assert frame["income"].isna().sum() == 603 + 683  # SD2011: 603 x -8 beside 683 NAs
    path.write_text(path.read_text().replace("income =", "incme ="))
    with pytest.raises(config.ConfigError, match=r"data\.missing_codes names column\(s\) "
                       r"\['incme'\]"):
        prepare(config.load(path))
    path.write_text(path.read_text().replace("{ incme = [-8] }", '"-8"'))
    with pytest.raises(config.ConfigError, match="missing_codes must be a table"):
        config.load(path)


def test_data_changed_under_an_existing_study_is_exit_2_naming_the_data(tmp_path, capsys):
    from tuner.data import read_builtin
    from tuner.search._context import prepare
    from tuner.search._storage import open_study

    fair = read_builtin("builtin:fair")
    fair.to_csv(tmp_path / "fair.csv", index=False)
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace('path = "builtin:fair"', 'path = "fair.csv"'))
    open_study(prepare(config.load(path)))  # the study now knows the data's fingerprint
    fair.assign(age=fair["age"] + 1).to_csv(tmp_path / "fair.csv", index=False)
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "was run on other data" in err and "fair.csv" in err and "Traceback" not in err


def test_margin_under_the_limit_a_trial_ran_with():
    # a constraint is metric - limit ("max") or limit - metric ("min"); a trial stores the
    # limits it ran with, and the release judges its data in full under those
    from tuner import measures
    from tuner.config import RiskConfig

    options = RiskConfig({"dcr_limit": 0.1, "fmr_floor": 0.8, "cap_limit": 0.05})
    limits = measures.limits_of({"dcr": -0.05, "fmr": -0.1, "cap.income": -0.05, "nope": 1.0},
                                options)
    assert limits == {"dcr": 0.1, "fmr": 0.8, "cap.income": 0.05}  # an unknown name has none
    # dcr: in full the excess is 0.12 -> +0.02 over its 0.1
    assert measures.margin_under("dcr", {"dcr_excess": 0.12}, limits["dcr"]) == pytest.approx(
        0.02)
    # fmr (a floor): 0.75 under the floor 0.8 -> +0.05
    assert measures.margin_under("fmr", {"fmr_or_1": 0.75}, limits["fmr"]) == pytest.approx(0.05)
    # a per-target constraint reads its labelled metric; an unknown one is undefined
    assert measures.margin_under("cap.income", {"cap_difference.income": 0.2},
                                 limits["cap.income"]) == pytest.approx(0.15)
    assert math.isnan(measures.margin_under("nope", {}, 0.0))
    assert math.isnan(measures.margin_under("dcr", {}, 0.1))
    assert measures.sampled_constraint("dcr") and not measures.sampled_constraint("copies")
    assert not measures.sampled_constraint("cap.income")
