"""The release's report for a disclosure-review board: ``report.md`` and ``report.html``.

Both are rendered from ``manifest.json`` and the figures beside it, nothing else, so
``risk-tuner report DIR --write`` can make them again without the confidential data. Every
enabled measure of :data:`tuner.measures.MEASURES` contributes its rows (value, limit, one
sentence of what it means); the constraints follow with whether each passed; then the utility
breakdown and the caveats. The blocks (:func:`_blocks`) go through the Jinja2 templates in
``templates/`` (``report.md.j2``, ``report.html.j2``); the HTML page embeds its figures, so it
can be mailed alone. No real record is ever written here (a test scans every file the tuner
writes).
"""

from __future__ import annotations

import base64
import functools
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pandas as pd

from tuner import measures
from tuner.release import _domain as domain
from tuner.release import _report_audit as report_audit
from tuner.release._manifest import Constraint, Manifest, Selection
from tuner.release._summary import limit_text, summary, trials_text
from tuner.scoring import Evaluation

CAVEATS = (
    "The measures are empirical: they test the attacks named above on this release, against "
    "these training and holdout records. They do not bound what every possible intruder can do "
    "(that is what differential privacy offers, and none is claimed here).",
    "Membership disclosure M assumes the intruder holds a target's quasi-identifiers exactly as "
    "recorded; linkage with other data or knowledge of rare values is not modelled.",
    "Attribute disclosure covers the configured keys and targets only; other combinations of "
    "known and sensitive variables have not been measured.",
    "Exact copies and replicated uniques compare whole records; a record that differs only in a "
    "column the intruder does not need can still identify a person.",
    "The synthesiser's model is not released (it holds training values). Keep `split.json` "
    "(which records were in training) confidential: with it, membership is no longer a guess.",
)


UTILITY_FIGURES = ("column_shapes.png", "marginals.png", "correlations.png")  # in this order


def _count(n: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"


def marginals_note(info: dict[str, Any]) -> str:
    """What the marginal plots show, and what they leave out so that no rare value shows."""
    k, shown = info["min_count"], info["columns"]
    pooled, bins = info.get("pooled_categories", {}), info.get("suppressed_bins", {})
    which = (f"The {_count(len(shown), 'column')} with the lowest column-shape scores, worst first"
             if len(shown) < info["columns_total"] else f"All {len(shown)} columns, worst first")
    return (f"{which} (score in each title): the share of records in each category or bin, "
            "training data (blue) against the release (orange). **Small cells are not "
            f"shown**: a category or value with fewer than {k} training records is never drawn "
            "on its own but pooled into 'other' with every category beyond the "
            f"{info.get('max_bars', 12)} most frequent ({_count(sum(pooled.values()), 'category')} "
            f"pooled in {_count(len(pooled), 'column')}); "
            "histograms span the training data's 1st to 99th percentile, values beyond are "
            "counted in the outer bins (so no minimum or maximum is drawn), and a bin with "
            f"fewer than {k} training records is drawn empty for the training data "
            f"({_count(sum(bins.values()), 'bin')} in {_count(len(bins), 'column')}).")


def measure_rows(ev: Evaluation, risk_options: Any, utility_metric: str) -> list[dict[str, str]]:
    """One row per reported number, from the registry's report functions."""
    rows = [measures.ReportRow(f"utility U ({utility_metric})", f"{ev.utility:.4f}", "",
                               "1: the release reproduces the training data's distributions."),
            measures.ReportRow("risk-utility loss", f"{ev.loss.loss:.4f}", "",
                               "-w(M) U, minimised by the study (El Emam et al. 2022).")]
    for name, outcome in ev.outcomes.items():
        spec = measures.MEASURES[name]
        if spec.report is not None:
            for label, result in outcome.results.items():
                rows += spec.report(label, result, risk_options)
    return [dict(r.__dict__) for r in rows]


def _selection(chosen: Selection) -> list[tuple[str, Any]]:
    """Why this trial was released, and the trials refused at release before it."""
    refused = [("p", f"Refused at release: trial {n}: {why}.")
               for n, why in chosen["refused"].items()]
    if passed := chosen["passed_over"]:  # counted, the first few said (hundreds in a study)
        first = "; ".join(f"trial {n}: {why}" for n, why in list(passed.items())[:3])
        refused.append(("p", f"Not audited: {len(passed)} feasible trial(s) no safer than one "
                              f"the membership audit refused ({first}"
                              f"{'; ...' if len(passed) > 3 else ''})."))
    if chosen["mode"] == "pareto":
        return [("h2", "Why this trial"),
                ("p", f"{chosen['reason']} The study maximised U and minimised M with every "
                      "constraint enforced; the feasible front is trial(s) "
                      f"{', '.join(map(str, chosen['front']))}."), *refused]
    return [("h2", "Why this trial"), ("p", f"Rule: {chosen['rule']}; {chosen['reason']}."),
            *refused]


def _fakes(fakes: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The columns released as fake values (SDV metadata's PII and keys), how each was made."""
    if not fakes or not fakes.get("columns"):
        return []
    return [("h2", "Fake columns: no real value"), ("p", f"{fakes['note']}; {fakes['redraws']}."),
            ("table", pd.DataFrame([
                {"column": c, "sdtype": f["sdtype"], "made with": f["made_with"],
                 "checked against the real values": "yes" if f["checked_against_real"] else
                 "no (drawn from a list)", "drawn again": f["values_drawn_again"]}
                for c, f in fakes["columns"].items()]))]


def _protection(protection: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """What value protection coded before any fit (counts only, never a value)."""
    if not protection:
        return []
    if not protection.get("k"):
        return [("h2", "Value protection: off"),
                ("p", "Extremes and rare categories reached the models as they are "
                      "(data.protect_k = 0, or partial synthesis).")]
    rows = [{"column": c, "coded": v["coded"],
             **{f"values changed ({part})": n for part, n in v["changed"].items()}}
            for c, v in protection["columns"].items()]
    return [("h2", "Value protection before any fit"),
            ("p", f"k = {protection['k']}: {protection['method']}. The thresholds are the "
                  "training records'; the holdout and the audit set are coded alike."
                  + ("" if rows else " No value needed coding.")),
            *([("table", pd.DataFrame(rows))] if rows else [])]


def _blocks(manifest: Manifest) -> list[tuple[str, Any]]:
    """The report as a list of (kind, content): h1, h2, p, pre, table (DataFrame), img (file)."""
    r, trial = manifest["report"], manifest["trial"]
    mem, data, sp = manifest["membership"], manifest["data"], manifest["split"]
    first = summary(manifest)  # the block the terminal prints too, word for word
    out: list[tuple[str, Any]] = [
        ("h1", f"Release of study {manifest['study']!r}: {manifest['synthesizer']} "
               f"(trial {trial})"),
        ("h2", first[0]), ("pre", "\n".join(first[1:])),
        ("table", pd.DataFrame([
            ("created (UTC)", manifest["created_utc"]),
            ("SHA-256 of synthetic.csv", manifest["synthetic_sha256"]),
            ("released records", manifest["gate"]["released_records"]),
            ("data", f"fingerprint {data['fingerprint_sha256'][:16]}..., {data['rows']} "
                     f"records, population N = {data['population_size']}"
                     + (f" ({data['population_note']})" if data['population_note'] else "")),
            ("split", f"{sp['n_train']:,} training / {sp['n_holdout']:,} holdout"
                      + (f" / {sp['n_audit']:,} sealed audit (never seen by a trial)"
                         if sp['n_audit'] else "")),
            ("study", trials_text(r)),
            ("synthesiser", f"{manifest['synthesizer']}, parameters "
                            f"{json.dumps(manifest['params'])}, {manifest['threads']} "
                            f"thread(s), {manifest['device']}"),
            ("randomness", manifest["randomness"]["note"]),
            ("config SHA-256", manifest["config_sha256"]),
        ], columns=["", "value"])),
        *_selection(manifest["selection"]),
        *_fakes(manifest["fakes"]),
        *_protection(manifest["protection"]),
        *domain.blocks(manifest["domain"]),
        ("h2", "Decision: every constraint"),
        ("table", _decision(manifest["constraints"])),
        *report_audit.blocks(manifest),
        ("h2", "Risk measures"),
        ("table", pd.DataFrame(r["rows"])),
    ]
    if not mem.get("can_bind", True):
        out.append(("p", f"**{measures.cannot_bind(mem['warning'])}**"))
    out.append(("p", f"Members expected per attack set of M: {mem['expected_members']:.1f} "
                     f"(t = {mem['sampling_fraction']:.4f}). {manifest['gate']['removed_records']} "
                     "synthetic records equal to a record unique in the training data were "
                     f"removed before scoring (policy: {manifest['gate']['replicated_uniques']})."))
    u = r.get("utility")
    figures = r["figures"].items()
    for title, name in figures:  # the risk figures, below the risk measures
        if name not in UTILITY_FIGURES:
            out += [("h3", title), ("img", name)]
    if u:
        out += [("h2", "Utility"),
                ("p", f"SDMetrics Quality Report {u['score']:.4f}: " + ", ".join(
                    f"{k} {v:.4f}" for k, v in u["properties"].items()) + ". The weakest "
                    "column pairs: " + ", ".join(
                    f"{k} {v:.3f}" for k, v in sorted(
                        ((k, v) for k, v in u["pairs"].items() if math.isfinite(v)),
                        key=lambda kv: kv[1])[:5]) + ".")]
    for title, name in sorted((f for f in figures if f[1] in UTILITY_FIGURES),
                              key=lambda f: UTILITY_FIGURES.index(f[1])):
        out += [("h3", title), ("img", name)]
        if name == "marginals.png" and u and "marginals" in u:
            out.append(("p", marginals_note(u["marginals"])))
    out += [("h2", "Caveats: what these measures do not cover"),
            *[("li", c) for c in CAVEATS]]
    return out


def _grouped(blocks: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The blocks as the templates read them: consecutive items ("li") as one list ("ul")."""
    out: list[dict[str, Any]] = []
    for kind, content in blocks:
        if kind == "li" and out and out[-1]["kind"] == "ul":
            out[-1]["entries"].append(content)
        elif kind == "li":
            out.append({"kind": "ul", "entries": [content]})
        else:
            out.append({"kind": kind, "content": content})
    return out


def _inline(text: str) -> markupsafe.Markup:
    """A paragraph's text escaped, with its ``**bold**`` spans (the one markup it holds) bold."""
    parts = str(markupsafe.escape(text)).split("**")
    return markupsafe.Markup("".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts)))


@functools.cache
def _templates() -> jinja2.Environment:
    """The report's templates (``tuner/release/templates``): HTML autoescaped, an undefined
    name an error rather than an empty string."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tuner.release", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            default_for_string=False),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.filters["inline"] = _inline
    env.filters["md_table"] = lambda table: table.to_markdown(index=False)
    return env


def markdown(manifest: Manifest) -> str:
    """``report.md``: the blocks through ``templates/report.md.j2``."""
    text = _templates().get_template("report.md.j2").render(blocks=_grouped(_blocks(manifest)))
    return text.rstrip("\n") + "\n"


def page(manifest: Manifest, folder: Path) -> str:
    """``report.html``, self-contained: the blocks through ``templates/report.html.j2``, the
    figures embedded as data URIs."""
    blocks = _blocks(manifest)
    images = {name: base64.b64encode((folder / name).read_bytes()).decode()
              for kind, name in blocks if kind == "img"}
    return _templates().get_template("report.html.j2").render(
        blocks=_grouped(blocks), images=images, study=manifest["study"])


def write(folder: Path, manifest: Manifest) -> list[Path]:
    """``report.md`` and ``report.html`` in ``folder`` (which holds the manifest's figures)."""
    md, page_path = folder / "report.md", folder / "report.html"
    md.write_text(markdown(manifest))
    page_path.write_text(page(manifest, folder))
    return [md, page_path]


def _decision(constraints: Mapping[str, Constraint]) -> pd.DataFrame:
    """Every constraint as the manifest stores it: the metric's value against its limit, and
    the margin the study minimised the violation of (passes when <= 0)."""
    return pd.DataFrame([{
        "constraint": name, "metric": c.get("metric", ""),
        "value": measures.format_number(c["value"]) if "value" in c else "",
        "limit": limit_text(c) if "limit" in c else "",
        "margin (<= 0 passes)": f"{c['margin']:+.4f}",
        "passed": "yes" if c["passed"] else "NO"} for name, c in constraints.items()])
