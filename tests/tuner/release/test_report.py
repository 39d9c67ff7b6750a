"""The report's utility section: marginal plots of the worst-reproduced columns, aggregated
with small cells suppressed (no rare value, minimum or maximum of the training data is drawn),
placed under "Utility" with a sentence saying what was left out."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tests.tuner.release.test_summary import _manifest as whole_manifest
from tuner.release import _plots as plots
from tuner.release import _report as report

RARE = "zz-rare-value"  # occurs once in the training data: must never be drawn
CATEGORIES = ("red-cat", "blue-cat", "green-cat", "grey-cat", RARE)


@pytest.fixture
def frames():
    rng = np.random.default_rng(0)
    n = 400
    train = pd.DataFrame({
        "colour": np.repeat(CATEGORIES, [200, 150, 40, 9, 1]),
        "income": np.r_[rng.normal(50.0, 10.0, n - 1), 1e6],  # one extreme outlier
        "kids": rng.integers(0, 4, n).astype(float),
        "member": rng.random(n) < 0.3,
    })
    synthetic = train.sample(300, replace=True, random_state=1).reset_index(drop=True)
    synthetic.loc[:4, "colour"] = "violet"  # a category the training data lack
    synthetic.loc[5:9, "income"] = np.nan
    return train, synthetic


def _by_column(tables):
    return {t.column: t for t in tables}


def test_rare_categories_are_pooled_and_never_labelled(frames):
    train, synthetic = frames
    t = _by_column(plots.marginal_tables(train, synthetic, {}))["colour"]
    assert t.kind == "bars" and t.labels == ("red-cat", "blue-cat", "green-cat", "other")
    assert t.pooled == 2  # grey (9 records) and the rare value (1), min_count = 10
    # shares of records: training 'other' holds grey and the rare value, the release's
    # holds its new category and its copies of the pooled ones
    assert t.train == pytest.approx((200 / 400, 150 / 400, 40 / 400, 10 / 400))
    assert sum(t.synthetic) == pytest.approx(1.0)
    assert t.synthetic[-1] == pytest.approx(
        synthetic["colour"].isin(["grey-cat", RARE, "violet"]).mean())


def test_min_count_decides_what_is_pooled(frames):
    train, synthetic = frames
    t = _by_column(plots.marginal_tables(train, synthetic, {}, min_count=5))["colour"]
    assert "grey-cat" in t.labels and RARE not in t.labels and t.pooled == 1
    capped = _by_column(plots.marginal_tables(train, synthetic, {}, max_bars=2))["colour"]
    assert capped.labels == ("red-cat", "blue-cat", "other") and capped.pooled == 3


def test_histogram_hides_extremes_and_small_bins(frames):
    train, synthetic = frames
    t = _by_column(plots.marginal_tables(train, synthetic, {}))["income"]
    assert t.kind == "histogram" and len(t.edges) == 21
    low, high = np.quantile(train["income"], [0.01, 0.99])
    assert t.edges[0] == pytest.approx(low) and t.edges[-1] == pytest.approx(high)
    assert t.edges[-1] < 1e5 and t.edges[0] > train["income"].min()  # no min or max drawn
    # the same bins counted independently: values beyond the range go to the outer bins
    expected, _ = np.histogram(np.clip(train["income"], low, high), bins=np.asarray(t.edges))
    small = (expected > 0) & (expected < 10)
    assert small.any() and t.pooled == small.sum()
    counts = np.asarray(t.train) * len(train)
    assert counts == pytest.approx(np.where(small, 0, expected))
    assert sum(t.synthetic) == pytest.approx(1.0)  # everything beyond falls in the outer bins
    assert t.missing_synthetic == pytest.approx(5 / 300) and t.missing_real == 0.0


def test_numbers_with_few_values_are_bars_in_numeric_order(frames):
    train, synthetic = frames
    tables = _by_column(plots.marginal_tables(train, synthetic, {}))
    assert tables["kids"].kind == "bars" and tables["kids"].labels == ("0", "1", "2", "3")
    assert tables["member"].kind == "bars" and set(tables["member"].labels) == {"False", "True"}


def test_worst_columns_first_and_capped(frames):
    train, synthetic = frames
    scores = {"colour": 0.9, "income": 0.5, "kids": 0.99, "member": 0.7}
    tables = plots.marginal_tables(train, synthetic, scores, max_columns=2)
    assert [t.column for t in tables] == ["income", "member"]
    assert tables[0].score == pytest.approx(0.5)
    with pytest.raises(ValueError, match="min_count=0"):
        plots.marginal_tables(train, synthetic, scores, min_count=0)


def test_save_marginals_writes_a_png_and_says_what_was_left_out(frames, tmp_path):
    train, synthetic = frames
    train = train.assign(when=pd.date_range("2020-01-01", periods=len(train), freq="D"))
    synthetic = synthetic.assign(when=train["when"].sample(len(synthetic), random_state=0)
                                 .to_numpy())
    info = plots.save_marginals(train, synthetic, {"colour": 0.1}, tmp_path / "m.png",
                                max_columns=4)
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert info["columns"][0] == "colour" and len(info["columns"]) == 4
    assert info["columns_total"] == 5 and info["pooled_categories"] == {"colour": 2}
    assert info["min_count"] == plots.MIN_COUNT
    text = report.marginals_note(info)
    assert "4 columns with the lowest column-shape scores" in text
    assert "fewer than 10 training records" in text and "2 categories pooled in 1 column)" in text


def _manifest(figures: dict[str, str], marginals: dict | None) -> dict:
    utility = {"score": 0.9, "properties": {"Column Shapes": 0.95, "Column Pair Trends": 0.85},
               "columns": {"colour": 0.9}, "pairs": {"colour ~ income": 0.8}}
    if marginals is not None:
        utility["marginals"] = marginals
    return whole_manifest() | {
        "study": "s", "trial": 3, "synthesizer": "cart", "params": {"max_depth": 4},
        "created_utc": "2026-01-01T00:00:00+00:00", "synthetic_sha256": "ab" * 32,
        "config_sha256": "cd" * 32, "randomness": {"secret": True, "note": "keyed"}, "threads": 1,
        "device": "cpu",
        "gate": {"released_records": 300, "removed_records": 2, "replicated_uniques": "remove",
                 "note": ""},
        "data": {"fingerprint_sha256": "ef" * 32, "rows": 800, "columns": ["colour", "income"],
                 "population_size": 10_000, "population_note": "made up"},
        "split": {"train_fraction": 0.5, "stratify": None, "audit_fraction": 0.0,
                  "n_train": 400, "n_holdout": 400, "n_audit": 0, "rows_file": "split.json"},
        "constraints": {"m": {"metric": "m", "value": 0.1, "limit": 0.2, "limit_key": "m_threshold",
                              "sense": "max", "margin": -0.1, "passed": True}},
        "membership": {"can_bind": 1.0, "expected_members": 30.0, "sampling_fraction": 0.04},
        "report": {"rows": [{"measure": "M", "value": "0.1", "limit": "0.2", "meaning": "..."}],
                   "trials_run": 5, "trials_feasible": 4, "trials_refused": 0,
                   "utility": utility,
                   "figures": figures},
    }


def test_report_puts_the_marginals_under_utility_with_their_note(frames, tmp_path):
    train, synthetic = frames
    info = plots.save_marginals(train, synthetic, {}, tmp_path / "marginals.png")
    figures = {"Adversary F1 against the Hamming threshold": "f1_curve.png",
               "Pairwise rank correlations": "correlations.png",
               "Utility per column": "column_shapes.png",
               "Marginal distributions: training data and release": "marginals.png"}
    for name in figures.values():
        if name != "marginals.png":
            (tmp_path / name).write_bytes((tmp_path / "marginals.png").read_bytes())
    md_path, html_path = report.write(tmp_path, _manifest(figures, info))
    md = md_path.read_text()
    headings = re.findall(r"^#+ (.*)$", md, flags=re.M)
    order = [headings.index(h) for h in (
        "Risk measures", "Adversary F1 against the Hamming threshold", "Utility",
        "Utility per column", "Marginal distributions: training data and release",
        "Pairwise rank correlations", "Caveats: what these measures do not cover")]
    assert order == sorted(order), headings
    assert "fewer than 10 training records" in md and "![marginals.png](marginals.png)" in md
    page = html_path.read_text()
    assert page.count("data:image/png;base64,") == 4 and "<h3>Marginal distributions" in page
    assert "<b>Small cells are not shown</b>" in page
    for text in (md, page):  # no value of the data, rare or not, in the text
        assert not [c for c in CATEGORIES if c in text]


def test_report_of_a_release_without_marginal_plots(tmp_path):
    (tmp_path / "column_shapes.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    md = report.markdown(_manifest({"Utility per column": "column_shapes.png"}, None))
    assert "## Utility" in md and "Small cells" not in md
