"""The release report's audit section (design §13): what the intruder knew, what it achieved on
the most exposed people, the epsilon lower bound, and the audit set beside the holdout.
Rendered from the manifest's ``audit`` entry alone (no data), as the rest of the report; and the
verdict's one-paragraph summary that entry carries (:func:`verdict_summary`)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from tuner.release._manifest import Audit, Manifest

ATTACK_NAMES = {"distance": "distance to the closest synthetic record",
                "domias": "DOMIAS density ratio of synthetic to holdout data (van Breugel et "
                          "al. 2023)",
                "classifier": "a random forest on counts of synthetic records near the target "
                              "and matching it on subsets of its columns (TAPAS' queries)"}


def design_said(mem: dict[str, Any]) -> str:
    """The audit's design, and why it ran when ``auto`` fell back to the shared game."""
    design = f"{mem['design'].replace('_', '-')} game"
    why = mem.get("design_why", "")
    if why.startswith("audit.design = 'auto'") and mem["design"] == "shared":
        return f"{design}, because the per-target game would exceed audit.max_minutes"
    return design


def persons_said(mem: dict[str, Any]) -> str:
    """The per-person test in words: how many people were tested and flagged, at which level
    (never who)."""
    persons = mem.get("persons")
    if not persons:
        return "no per-person test recorded"
    flagged, signalled = persons["flagged"], persons.get("signalled")
    # a manifest written before the size part counts no signal: said without it
    said = (f"tested one by one, {'none' if not flagged else flagged} of the "
            f"{persons['tested']} {'was' if flagged == 1 else 'were'} significantly exposed "
            f"beyond audit.tpr_limit (family-wise level {persons['alpha']:.0%}, Holm"
            + (f"; {signalled} with a signal not shown beyond it)" if signalled is not None
               else ")"))
    if mem.get("release_members_called") is None:
        return said
    return (f"{said}; on the release itself {mem['release_members_called']} of them scored "
            f"as members at the 1% FPR threshold (about "
            f"{mem['release_members_expected']:.1f} would by chance)")


def held_said(mem: dict[str, Any]) -> str:
    """The bound the release was judged by: the pooled TPR's one-sided upper bound over the
    test fits at the config's confidence, and, where the candidates spend the audit's 95 %
    (``audit.attempts`` above 1), over how many."""
    bound = mem.get("pooled_decision")
    if not bound:
        return ""
    spent = (f", the 95% spent over {bound['attempts']} candidates"
             if bound.get("attempts", 1) > 1 else "")
    return f"; one-sided {bound['confidence']:.1%} upper bound {bound['upper']:.1%}{spent}"


def epsilon_said(mem: dict[str, Any]) -> str:
    """The empirical epsilon as it is: a positive bound, or no evidence at this power (never
    ">= 0.00", which reads as "no leak")."""
    bound, ceiling = mem["epsilon_lower_bound"], mem.get("epsilon_ceiling", math.nan)
    if bound > 0:
        return (f"empirical epsilon >= {bound:.2f} for replace-one neighbours, >= "
                f"{bound / 2:.2f} for add/remove-one (delta = 0, 95% confidence, both "
                f"directions of the test; these settings can show at most {ceiling:.2f})")
    return (f"no evidence of a positive epsilon at this power (delta = 0; these settings can "
            f"show at most {ceiling:.2f})")


def verdict_summary(verdict: str, check: dict[str, Any], mem: dict[str, Any],
                    limit: float) -> str:
    """The audit's verdict in one paragraph (the manifest's ``audit.summary``)."""
    parts = []
    if mem.get("ran"):
        lo, hi = mem["tpr_at_1pct_interval"]
        parts.append(
            f"an intruder who knows the generator detected the {mem['targets']} most exposed "
            f"people in {mem['tpr_at_1pct']:.1%} of the shadow releases trained on them, at a "
            f"1% false-positive rate fixed on other shadow releases (95% interval "
            f"{lo:.1%}-{hi:.1%}{held_said(mem)}; limit {limit:.0%}); {persons_said(mem)}; "
            f"largest per-target AUC {mem['max_auc']:.2f}; {epsilon_said(mem)}; "
            f"{design_said(mem)}")
    elif mem.get("partial") and check.get("identification"):
        ident = check["identification"]
        members, others = ident["members"], ident["non_members"]
        parts.append(
            f"partial synthesis, so no membership audit (membership is disclosed by design); "
            f"identification risk: an intruder matches {members['emr_share']:.1%} of the "
            f"training records to their own released row (true match rate "
            f"{members['tmr']:.1%}), and {others['emr_share']:.1%} of the audit records put "
            f"through the same model ({others['tmr']:.1%})")
    else:
        parts.append(f"no membership audit ({mem.get('why', 'not run')})")
    if check.get("available"):
        parts.append(f"the gate holds on {check['n_audit']:,} records no trial saw" if not
                     check["failed"] else "the gate fails on records no trial saw")
    else:
        parts.append("no sealed audit set")
    return f"{verdict}: " + "; ".join(parts) + "."


def _pct(x: float) -> str:
    return f"{x:.1%}" if math.isfinite(x) else "undefined"


def _ci(pair: list[float] | None, fmt: str = "{:+.4f}") -> str:
    return "" if not pair else f" [{fmt.format(pair[0])}, {fmt.format(pair[1])}]"


def _membership(a: Audit) -> list[tuple[str, Any]]:
    mem, who = a["membership"], a["intruder"]
    if not mem.get("ran"):
        return [("p", f"**No membership audit ran**: {mem.get('why', 'not run')}.")]
    design = ("per target: each target's own shadow tables, as Stadler et al. (2022) and "
              "Meeus et al. (2023) play the game" if mem["design"] == "per_target" else
              "shared: every shadow table holds each target with probability one half, as "
              "LiRA's shadow models (Carlini et al. 2022); cheaper, and weaker when the most "
              "exposed records resemble each other")
    lo, hi = mem["tpr_at_1pct_interval"]
    lo10, hi10 = mem["tpr_at_10pct_interval"]
    fpr_ci = mem.get("fpr_at_1pct_interval")
    best = (mem["best_attack_auc_max"], mem["best_attack_auc_median"]) \
        if "best_attack_auc_max" in mem else None
    ceiling = mem.get("epsilon_ceiling", math.nan)
    claim = ""
    if "claimed_epsilon" in a:
        in_game = a.get("claimed_epsilon_in_game", 2 * a["claimed_epsilon"])
        claim = (f" (claimed epsilon {a['claimed_epsilon']:g} for neighbours that differ by "
                 f"adding or removing one record; this game replaces one, where the claim "
                 f"guarantees at most {in_game:g})")
    rows = [
        ("pooled TPR at 1 % FPR", f"{_pct(mem['tpr_at_1pct'])} [{_pct(lo)}, {_pct(hi)}] "
                                  f"(FPR reached {_pct(mem['fpr_at_1pct'])}"
                                  + (f" [{_pct(fpr_ci[0])}, {_pct(fpr_ci[1])}]" if fpr_ci
                                     else "") + ")",
         f"upper bound <= {a['tpr_limit']}" + held_said(mem)),
        ("pooled TPR at 10 % FPR", f"{_pct(mem['tpr_at_10pct'])} [{_pct(lo10)}, {_pct(hi10)}]",
         ""),
        *([("people tested one by one (own TPR at 1 % FPR and a randomisation test, Holm)",
            f"{mem['persons']['flagged']} of {mem['persons']['tested']} significantly exposed "
            f"beyond the limit" + (f" ({mem['persons']['signalled']} with a signal not shown "
                                   f"beyond it)" if "signalled" in mem["persons"] else ""),
            f"nobody, at family-wise level {mem['persons']['alpha']:g}")]
          if mem.get("persons") else []),
        ("per-target AUC (attack chosen on calibration runs)",
         f"most exposed {mem['max_auc']:.3f}, median {mem['median_auc']:.3f}", ""),
        *([("diagnostic: per-target AUC of the best of the three attacks",
            f"largest {best[0]:.3f}, median {best[1]:.3f}",
            "chosen after seeing the test runs: biased upwards")] if best else []),
        ("empirical epsilon lower bound", (f"{mem['epsilon_lower_bound']:.3f}"
                                           if mem["epsilon_lower_bound"] > 0 else
                                           "no evidence of a positive epsilon at this power")
         + claim,
         "the larger of ln(TPR lower / FPR upper) and ln(TNR lower / FNR upper) at 1 % FPR "
         "(Jagielski et al. 2020), delta = 0, replace-one neighbours (half of it for "
         "add/remove-one), at 95 % confidence (the two one-sided 97.5 % bounds, Bonferroni)"
         + (f"; the most these settings can show is {ceiling:.2f}" if math.isfinite(ceiling)
            else "")),
    ]
    skipped = (f" The classifier could not be trained for {mem['classifier_skipped']} "
               "target(s)." if mem.get("classifier_skipped") else "")
    return [
        ("p", f"**What the intruder knew**: the synthesiser ({who['family']}) and its tuned "
              f"parameters, {who['auxiliary_records']:,} holdout records as auxiliary data, and "
              "each target's whole record. **Targets**: the "
              f"{mem['targets']} training records farthest from their 5 nearest neighbours "
              "(Meeus et al. 2023), never shown. **Game**: "
              f"{mem['shadows']} shadow tables of {mem['shadow_size']:,} records per target, half "
              f"with the target, {mem['fits']:,} fits in {mem['seconds']:.0f} s; design "
              f"{design}" + (f" (chosen by {mem['design_why']})" if mem.get("design_why")
                             else "") + ". **Figures**: each target's runs are split by fit "
              "into calibration and test; on calibration the attack is chosen and the "
              "threshold fixed; hits are counted on the test runs only, and the intervals "
              "are over the test fits, valid whatever one fit's runs do together ("
              f"{mem.get('interval_method', 'betting over fits')}). "
              "**Attacks**, the best on calibration per target: "
              + "; ".join(ATTACK_NAMES.get(x, x) for x in mem["attacks"]) + "." + skipped),
        ("table", pd.DataFrame(rows, columns=["figure", "value [95 % interval]", "limit"])),
        ("img", "audit_auc.png"),
    ]


def _audit_set(a: Audit) -> list[tuple[str, Any]]:
    check = a["audit_set"]
    if not check.get("available"):
        return [("p", f"**No sealed audit set**: {check['note']}.")]
    table = pd.DataFrame([{
        "constraint": r["constraint"],
        "holdout (chose the release)": f"{r['holdout']:+.4f}{_ci(r['holdout_interval'])}",
        "audit set (no trial saw it)": f"{r['audit']:+.4f}{_ci(r['audit_interval'])}",
        "margin on the audit set": f"{r['audit_margin']:+.4f}",
        "passed": "yes" if r["passed"] else "NO"} for r in check["rows"]])
    return [("p", f"The gate's holdout-based measures on {check['n_audit']:,} sealed records "
                  f"beside the {check['n_holdout']:,} holdout records that scored every trial "
                  "(95 % intervals; M's is its spread over the attack's repeats). The holdout "
                  "chose this release among many trials, so its numbers flatter it; a "
                  "positive difference in the audit column is that winner's curse." +
                  _rescaled(check)),
            ("table", table), *_identification(check)]


def _rescaled(check: dict[str, Any]) -> str:
    """The sentence for the rows put on the holdout's scale (DCR's excess), or nothing."""
    rows = [r for r in check["rows"] if "audit_unscaled" in r]
    if not rows:
        return ""
    said = ", ".join(f"{r['constraint']} {r['audit_unscaled']:+.4f}" for r in rows)
    return (f" DCR's excess is shown on the holdout's scale: the same leak gives a smaller "
            f"excess against fewer reference records, so the audit set's value is multiplied "
            f"by (1 - b_holdout) / (1 - b_audit), b = n_train / (n_train + n_reference) "
            f"(as computed: {said}).")


def _identification(check: dict[str, Any]) -> list[tuple[str, Any]]:
    """Partial synthesis: identification risk of members beside non-members."""
    ident = check.get("identification")
    if not ident:
        return []
    rows = [{"records": who, "n": f"{int(r['records']):,}",
             "expected match risk (share)": _pct(r["emr_share"]),
             "true match rate": _pct(r["tmr"])}
            for who, r in (("training records, in the release", ident["members"]),
                           ("audit records, put through the same model", ident["non_members"]))]
    return [("p", "**Identification risk on the sealed audit set** (Reiter et al.'s expected "
                  "match risk and true match rate, the intruder and matching of the gate): "
                  "the audit records never reached the model, so their rate is what the kept "
                  "columns give away by themselves; the training records' rate above it is "
                  "what the model adds."),
            ("table", pd.DataFrame(rows))]


def blocks(manifest: Manifest) -> list[tuple[str, Any]]:
    """The report's audit section (every release has one: ``not audited`` says why)."""
    a = manifest["audit"]
    return [("h2", f"Release audit: {a['verdict']}"), ("p", a["summary"]),
            ("h3", "Per-record membership audit that knows the generator"), *_membership(a),
            ("h3", "The gate on the sealed audit set"), *_audit_set(a)]
