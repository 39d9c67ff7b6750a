"""The release's summary block (issue #28): M against its threshold, the copy ceiling, every
constraint with its metric and limit, the audit's verdict when there is one; the same lines at
the top of report.md and report.html as in the terminal."""

from __future__ import annotations

import copy
import html

import pytest

from tuner import measures
from tuner.release import _report as report
from tuner.release._summary import TITLE, WIDTH, summary

# what every 0.1.0 manifest holds beside the figures a test is about: a release that was not
# audited, no fakes, no value protection, no codebook, no audit set
EVERY_RELEASE = {
    "selection": {"mode": "single", "rule": "the lowest loss", "reason": "the lowest loss",
                  "refused": {}, "passed_over": {}},
    "audit": {"verdict": "not audited", "summary": "not audited: audit.enabled = false",
              "tpr_limit": 0.05, "audit_set": {"available": False, "note": "none sealed"},
              "membership": {"ran": False, "why": "audit.enabled = false"},
              "winners_curse": {}, "intruder": {}},
    "fakes": {}, "protection": {}, "domain": {}, "released_columns": [],
    "metadata_file": "metadata.json",
}


def _manifest(**changes) -> dict:
    """A whole 0.1.0 manifest (every key the type requires), with ``changes`` on top."""
    m = {
        "study": "adult-demo", "trial": 11, "synthesizer": "cart",
        "gate": {"released_records": 2498, "removed_records": 2, "replicated_uniques": "remove",
                 "note": "2 records equal to a training-unique one removed"},
        "config": {"m_threshold": 0.2, "copy_limit": 0.05, "dcr_limit": 0.1, "cap_limit": 0.05,
                   "utility_metric": "quality_report", "keys": [f"c{i}" for i in
                                                                             range(15)]},
        "metrics": {"utility": 0.97471, "m": -0.05208, "m_copy_ceiling": 0.77450,
                    "copies_difference": 0.0008, "dcr_excess": 0.082,
                    "cap_difference.income": 0.013},
        "membership": {"m": -0.05208, "m_spread_low": -0.0960, "m_spread_high": -0.0103,
                       "m_spread_level": 0.95, "m_ci_low": -0.0712, "m_ci_high": -0.0215,
                       "m_ci_level": 0.95, "repeats": 100.0, "can_bind": 1.0,
                       "warning": "", "m_threshold": 0.2, "hamming_threshold": 0.0,
                       "expected_members": 134.9, "sampling_fraction": 0.0512},
        "created_utc": "2026-01-01T00:00:00+00:00", "synthetic_sha256": "ab" * 32,
        "config_sha256": "cd" * 32, "randomness": {"secret": True, "note": "keyed"},
        "threads": 1, "device": "cpu", "params": {"max_depth": 4},
        "data": {"fingerprint_sha256": "ef" * 32, "rows": 5000, "columns": ["age", "income"],
                 "population_size": 48842, "population_note": "Adult"},
        "split": {"train_fraction": 0.5, "stratify": None, "audit_fraction": 0.0,
                  "n_train": 2500, "n_holdout": 2500, "n_audit": 0, "rows_file": "split.json"},
        "report": {"rows": [{"measure": "M", "value": "-0.05", "limit": "<= 0.2",
                             "meaning": "..."}],
                   "trials_run": 12, "trials_feasible": 8, "trials_refused": 1, "figures": {}},
        "versions": {"python": "3.11.7"}, "synthetic_file": "synthetic.csv",
    } | copy.deepcopy(EVERY_RELEASE)
    m["constraints"] = {name: measures.constraint_record(name, margin, m["metrics"], m["config"])
                        for name, margin in (("m", -0.25208), ("copies", -0.0492),
                                             ("dcr", -0.018), ("cap.income", -0.037))}
    for key, value in changes.items():
        m[key] = value
    return m


def _said(lines: list[str]) -> str:
    """The block's text with its line breaks undone (wrapping happens at spaces)."""
    return " ".join(line.strip() for line in lines)


def test_summary_says_m_the_ceiling_and_every_constraint_with_its_limit():
    lines = summary(_manifest())
    said = _said(lines)
    assert lines[0] == TITLE and all(len(line) <= WIDTH for line in lines)
    assert "Release: trial 11 (cart) of study 'adult-demo': 2,498 records, U = 0.9747" in said
    assert "Study: 12 trials run, 8 met every constraint, 1 of them refused at release" in said
    assert "Membership disclosure M = -0.0521, must be <= 0.2: passed" in said
    assert "(an intruder holding 15 quasi-identifiers of a person, matched exactly (h = 0)" in said
    # the confidence interval, named so, with its level, what varies and what is held fixed
    # (issue 44, item 7); the attack-set spread under its own name
    assert ("95% confidence interval for M: -0.0712 to -0.0215, over the draw of the holdout "
            "and of the attack sets, for this release, these bins and N (the release was "
            "chosen on the same holdout)") in said
    assert ("Spread over attack sets (not a confidence interval): 95% of the 100 attack sets "
            "on the holdout gave -0.0960 to -0.0103") in said
    assert "m_decision" not in said
    assert ("a verbatim copy of the training records would score M = 0.7745 > 0.2, so M binds "
            "here") in said
    assert "Constraints: all 4 passed" in said
    for line in ("copies_difference = 0.0008, must be <= 0.05 (copy_limit): passed",
                 "dcr_excess = 0.0820, must be <= 0.1 (dcr_limit): passed",
                 "cap_difference.income = 0.0130, must be <= 0.05 (cap_limit): passed",
                 "m = -0.0521, must be <= 0.2 (m_threshold): passed"):
        assert line in said, line
    # a release that was not audited says so, and why, on its last line
    assert lines[-1] == "Release audit: not audited: audit.enabled = false"


def test_the_upper_decision_is_said_with_its_constraint():
    m = _manifest()
    m["config"]["m_decision"] = "upper"
    m["metrics"]["m_ci_high"] = -0.0215
    m["constraints"]["m_upper"] = measures.constraint_record("m_upper", -0.2215, m["metrics"],
                                                             m["config"])
    said = _said(summary(m))
    assert '(m_decision = "upper": its upper end must be <= 0.2 too)' in said
    assert "m_ci_high = -0.0215, must be <= 0.2 (m_threshold): passed" in said


def test_a_membership_without_the_interval_shows_the_spread_by_its_name():
    m = _manifest()
    for key in ("m_ci_low", "m_ci_high", "m_ci_level"):
        del m["membership"][key]
    said = _said(summary(m))
    assert "confidence interval for M" not in said
    assert "Spread over attack sets (not a confidence interval): 95% of the 100" in said


def test_a_failed_constraint_and_a_blind_m_are_said_plainly():
    warning = ("a verbatim copy of the training data scores M = 0.173 <= 0.2 under this "
               "attack: more quasi-identifiers would let M see copies.")
    m = _manifest()
    m["metrics"] |= {"m_copy_ceiling": 0.1726, "dcr_excess": 0.13}
    m["membership"] |= {"can_bind": 0.0, "warning": warning}
    m["constraints"]["dcr"] = measures.constraint_record("dcr", 0.03, m["metrics"], m["config"])
    said = _said(summary(m))
    assert "would score M = 0.1726 <= 0.2" in said and "M binds" not in said
    assert "M cannot bind here: A verbatim copy of the training data scores M = 0.173" in said
    assert "The release gate's measures (exact and near copies" in said
    assert "Constraints: 1 of 4 FAILED (dcr)" in said
    assert "dcr_excess = 0.1300, must be <= 0.1 (dcr_limit): FAILED" in said


def test_too_few_members_keep_m_from_binding_whatever_the_ceiling():
    m = _manifest()
    m["membership"] |= {"can_bind": 0.0, "warning": "M cannot bind: 4 members per attack set."}
    said = _said(summary(m))
    assert "would score M = 0.7745 > 0.2" in said and "so M binds" not in said
    # said once, not "M CANNOT BIND here: M cannot bind: ..." (issue 47 item 7)
    assert "M cannot bind here: 4 members per attack set." in said
    assert said.lower().count("cannot bind") == 1


def test_partial_synthesis_says_what_m_does_not_measure():
    partial = {"synthesized": ["income"], "kept": ["age"], "sets": 1, "files": ["set_1.csv"],
               "conditioning": "each kept record's own values", "rejection_draws": 0,
               "identification": None, "note": ""}
    said = _said(summary(_manifest(partial=partial)))
    assert "Partial synthesis: every row carries its own record's kept values" in said
    assert "Partial synthesis" not in _said(summary(_manifest()))


@pytest.mark.parametrize(("audit", "line"), [
    ({"verdict": "refused", "summary": "TPR at 1 % FPR up to 0.09 > 0.05."},
     "Release audit: refused: TPR at 1 % FPR up to 0.09 > 0.05."),
    ({"verdict": "not run", "summary": ""}, "Release audit: not run"),
    ({"verdict": "passed", "summary": "passed: no target caught."},
     "Release audit: passed: no target caught."),  # a verdict the sentence repeats, said once
])
def test_the_audit_verdict_is_one_line_when_the_manifest_has_one(audit, line):
    lines = summary(_manifest(audit=EVERY_RELEASE["audit"] | audit))
    assert lines[-1] == line


def test_a_manifest_that_lacks_a_key_is_refused_not_guessed_at():
    m = _manifest()
    del m["config"]
    del m["report"]["trials_run"]
    with pytest.raises(ValueError, match=r"not a whole release manifest: it lacks config, "
                                         r"report.trials_run \(every release"):
        summary(m)


def test_a_release_without_a_copy_ceiling_says_so_and_the_limit_is_the_stored_one():
    m = _manifest()
    del m["metrics"]["m_copy_ceiling"]
    said = _said(summary(m))
    assert "Copy ceiling: not computed for this release" in said
    # the limit is the one stored with the constraint, not the config's (issue 47 item 2)
    assert "copies_difference = 0.0008, must be <= 0.05 (copy_limit): passed" in said
    m["constraints"]["copies"]["limit"] = 0.04
    assert "copies_difference = 0.0008, must be <= 0.04 (copy_limit)" in _said(summary(m))
    m["constraints"]["retired_measure"] = {"margin": -0.5, "passed": True}
    assert "retired_measure margin -0.5000, must be <= 0: passed" in " ".join(
        " ".join(summary(m)).split())


def test_a_constraint_is_stored_with_its_metric_value_and_limit():
    # the figures a review board reads, not only the margin the study minimised (issue 47)
    metrics = {"dcr_excess": 0.082, "m": -0.05, "emr": 0.01}
    config = {"dcr_limit": 0.1, "m_threshold": 0.2}
    assert measures.constraint_record("dcr", -0.018, metrics, config) == {
        "metric": "dcr_excess", "value": 0.082, "limit": 0.1, "limit_key": "dcr_limit",
        "sense": "max", "margin": -0.018, "passed": True}
    assert measures.constraint_record("m", 0.01, metrics, config)["passed"] is False
    assert measures.constraint_record("retired", -1.0, metrics, config) == {
        "margin": -1.0, "passed": True}


def test_a_file_that_is_not_a_manifest_is_a_clear_error():
    with pytest.raises(ValueError, match=r"not a release manifest: it has no 'study' \(keys: "
                                         r"\['trial'\]\)"):
        summary({"trial": 3})


def test_the_report_opens_with_the_same_lines(tmp_path):
    m = _manifest()
    lines = summary(m)
    md_path, html_path = report.write(tmp_path, m)
    md = md_path.read_text()
    block = "```text\n" + "\n".join(lines[1:]) + "\n```"
    assert f"## {TITLE}\n\n{block}" in md
    assert md.index(block) < md.index("| created (UTC)") < md.index("## Decision")
    page = html_path.read_text()
    # word for word once the page's escapes are read back (the template escapes ' as &#39;)
    first = page.split("<h2>", 2)[1]
    assert first.startswith(f"{TITLE}</h2>\n<pre>")
    assert html.unescape(first.split("<pre>", 1)[1].split("</pre>", 1)[0]) == "\n".join(lines[1:])
