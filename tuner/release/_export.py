"""Release candidate (design §9): the best feasible trial, re-created and exported.

The synthetic data are made again and checked by :mod:`tuner.release._recreate`: data that are not
the trial's, or that fail a constraint because the limits changed, stop the export loudly; the
trial's very data failing, scored in full, a constraint it estimated on a sample (DCR) refuse
that trial for good (study attribute ``release_rejected:N``, :class:`ReleaseRejected`), withdraw
its release if it was the released one, and the next best feasible trial is tried.

``release/`` holds the synthetic data, ``manifest.json`` (fingerprint of the data, never the
data; synthesiser, parameters, package versions, every metric and interval, each
constraint and whether it passed) and ``report.md`` with plots. It is written beside and
renamed into place, so it is either absent or complete.
``split.json`` (which rows of the data file were the training records: confidential, for the
custodian to recompute M independently) and ``seeds.json`` (the study's secret, the released
trial's seeds and the audit targets' vulnerability: :mod:`tuner.search._secret`) go to the
study folder, both readable by their owner only, never into ``release/``.

Workers of one study (on one host or many) each export when they finish; a claim made under
a lock that every worker sees (:func:`tuner.search._locks.claim_lock`: PostgreSQL's advisory
lock, or a lock file for the local default) lets exactly one of them export a given best
trial. With an MLflow server, the release folder is also logged as ``release/`` artifacts of
the released trial's run, so that any host can download it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any, Literal, overload

import optuna
from filelock import FileLock

import risk
from tuner._common import attrs
from tuner._common.seeding import SeedPath
from tuner.data import formatted
from tuner.release import _plots as plots
from tuner.release import _report as report
from tuner.release._audit import CUSTODIAN_ONLY, preflight, public, release_audit
from tuner.release._audit import metrics as audit_metrics
from tuner.release._candidates import next_candidate, passed_over, selection
from tuner.release._fake_columns import fake_columns, release_metadata, with_fakes
from tuner.release._manifest import (
    SPLIT_FILE,
    Manifest,
    ReportData,
    manifest,
    read_manifest,
    set_files,
    sha256_file,
)
from tuner.release._recreate import AuditOverBudget, NoFeasibleTrial, ReleaseRejected, recreate
from tuner.release._refusals import (
    OVER_BUDGET_PREFIX,
    audit_budget,
    explain_infeasible,
    revive_over_budget,
    tag_refused,
)
from tuner.scoring import Evaluation, quality_breakdown
from tuner.search import (
    Context,
    Tracker,
    claim_lock,
    encode_secret,
    is_remote,
    pid_alive,
    record_secret,
    rejected,
    risk_utility_plot,
    trials_frame,
)

RELEASED_ATTR = attrs.RELEASED
CLAIM_ATTR = attrs.CLAIM
WHERE_ATTR = attrs.WHERE


@overload
def export(ctx: Context, study: optuna.Study, folder: Path | None = None, *,
           once: Literal[False] = False) -> Path: ...
@overload
def export(ctx: Context, study: optuna.Study, folder: Path | None = None, *,
           once: bool) -> Path | None: ...
def export(ctx: Context, study: optuna.Study, folder: Path | None = None, *,
           once: bool = False) -> Path | None:
    """Re-create the best feasible trial's data and write the release folder atomically.

    With ``once`` (what a worker does when it finishes), the export is claimed first, and
    ``None`` is returned when another worker has already claimed this trial's export (then
    :func:`release_note` says where it is).
    """
    me = f"{socket.gethostname()}:{os.getpid()}"
    folder = folder or ctx.output / "release"
    revive_over_budget(ctx, study)
    tried = 0
    while True:  # the best feasible trial; the next one when its data fail in full
        best = next_candidate(ctx, study)  # not a near twin of one the audit refused
        if best is None:
            raise NoFeasibleTrial(explain_infeasible(study, passed_over(ctx, study)))
        if tried and ctx.deadline is not None and time.monotonic() >= ctx.deadline:
            raise NoFeasibleTrial(
                f"the job's time (study.budget_minutes = {ctx.cfg.study.budget_minutes:g}) ran "
                f"out after {tried} candidate(s) were tried; trial {best.number} is next: run "
                f"`risk-tuner release {ctx.output}` to go on without the budget, or raise "
                "budget_minutes")
        tried += 1
        with claim_lock(ctx, "release-claim"):  # check and claim in one step, for every host
            if best.number in rejected(study):
                continue  # refused by another worker since it was picked
            if once and _exported(study, best.number, folder):
                return None
            study.set_user_attr(CLAIM_ATTR, {"trial": best.number, "by": me})
        try:
            out = _export_or_refuse(ctx, study, best, folder)
            break
        except BaseException as exc:  # noqa: BLE001 - frees the release claim, then re-raises
            with claim_lock(ctx, "release-claim"):  # let the next worker or invocation try
                if study.user_attrs.get(CLAIM_ATTR) == {"trial": best.number, "by": me}:
                    study.set_user_attr(CLAIM_ATTR, {})
            if not isinstance(exc, ReleaseRejected):
                raise
            print(f"release: trial {best.number} refused: {exc}; trying the next best "
                  "feasible trial", flush=True)
    _record_release(ctx, study, best, out, by=me)
    return out


def _export_or_refuse(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
                      folder: Path) -> Path:
    """The claimed trial exported, one writer at a time; a refusal recorded on the study (and
    its MLflow run) before it is raised, and a release refused before withdrawn."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    # invocations working on one study each export at their end: one writer at a time
    with FileLock(str(folder.parent / f".{folder.name}.lock"), timeout=3600):
        _withdraw_refused(ctx, study, folder)  # one refused before, not yet withdrawn
        try:
            return _export(ctx, study, best, folder)
        except ReleaseRejected as exc:
            with claim_lock(ctx, "release-claim"):  # recorded first, whatever follows
                study.set_user_attr(f"{attrs.REJECTED_PREFIX}{best.number}",
                                    str(exc) or type(exc).__name__)
                if isinstance(exc, AuditOverBudget):
                    study.set_user_attr(f"{OVER_BUDGET_PREFIX}{best.number}",
                                        audit_budget(ctx))
            tag_refused(ctx, best, str(exc))
            _withdraw_refused(ctx, study, folder)
            raise


def _record_release(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
                    out: Path, *, by: str) -> None:
    """Where the release is, on the study and on the trial's MLflow run (tagged released,
    with its audit's verdict and figures; on a server, the folder as the run's artifacts)."""
    where = {"trial": best.number, "by": by, "folder": str(out.resolve())}
    run_id = best.user_attrs.get(attrs.MLFLOW_RUN_ID)
    if run_id:
        tracker = Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output)
        if is_remote(ctx.mlflow_uri):  # the server's artifact store: readable from any host
            tracker.log_folder(run_id, out, "release")
            where["mlflow_artifacts"] = f"runs:/{run_id}/release"
        tracker.mark_released(run_id)
        audited = read_manifest(out / "manifest.json")["audit"]
        tracker.log(run_id, metrics=audit_metrics(dict(audited)),
                    tags={"audit_verdict": audited["verdict"]})
        where["mlflow_run"] = run_id
    study.set_user_attr(WHERE_ATTR, where)
    study.set_user_attr(RELEASED_ATTR, best.number)


def _withdraw_refused(ctx: Context, study: optuna.Study, folder: Path) -> None:
    """Withdraw a release whose trial was refused (exported before its data were scored in
    full): its folder, here or where the study says it was written, moved aside as
    ``NAME.withdrawn-trial-N``; its MLflow run tagged released = false; then no trial counts as
    released. Called under the writers' file lock; a failure stops the export and says what
    must not be published (the refusal is already recorded: the next export tries again)."""
    refused = rejected(study)
    where = study.user_attrs.get(WHERE_ATTR) or {}
    places = {folder} | ({Path(where["folder"])} if where.get("trial") in refused
                         and where.get("folder") else set())
    for place in places:
        manifest_file = place / "manifest.json"
        if not manifest_file.exists():
            continue
        trial = read_manifest(manifest_file, whole=False)["trial"]  # a hand-edited one too
        if trial not in refused:
            continue
        aside = place.with_name(f"{place.name}.withdrawn-trial-{trial}")
        try:
            shutil.rmtree(aside, ignore_errors=True)
            place.rename(aside)
        except OSError as exc:
            raise NoFeasibleTrial(
                f"trial {trial} was refused at release ({refused[trial]}), but its release "
                f"folder {place} could not be moved aside ({exc}): do not publish it; fix "
                "that and run `risk-tuner release` again to withdraw it") from exc
        print(f"release: {place} held trial {trial}'s data, refused: moved to {aside}; do not "
              "publish them", flush=True)
    released = study.user_attrs.get(RELEASED_ATTR)
    if released not in refused:
        return
    run_id = next((t.user_attrs.get(attrs.MLFLOW_RUN_ID) for t in study.get_trials(deepcopy=False)
                   if t.number == released), None)
    if run_id:  # tagged before the attribute is cleared: a failure here is retried next time
        Tracker(ctx.mlflow_uri, ctx.cfg.study.name, ctx.output).mark_withdrawn(run_id)
    study.set_user_attr(RELEASED_ATTR, None)
    study.set_user_attr(WHERE_ATTR, {})


def _exported(study: optuna.Study, trial: int, folder: Path) -> bool:
    """Whether some worker claimed the export of ``trial``; not if that worker was on this host
    and is gone, or wrote to ``folder`` on this host and the folder has been removed since."""
    claim = study.user_attrs.get(CLAIM_ATTR)
    if not (isinstance(claim, dict) and claim.get("trial") == trial):
        return False
    host, _, pid = str(claim.get("by", "")).rpartition(":")
    if host == socket.gethostname() and pid.isdigit() and not pid_alive(int(pid)):
        return False
    where = study.user_attrs.get(WHERE_ATTR)
    here = (isinstance(where, dict) and where.get("trial") == trial
            and where.get("folder") == str(folder.resolve()) and host == socket.gethostname())
    return not here or (folder / "manifest.json").exists()


def release_note(study: optuna.Study) -> str:
    """Where the study's release is (written by which worker, logged to which MLflow run)."""
    where = study.user_attrs.get(WHERE_ATTR)
    claim = study.user_attrs.get(CLAIM_ATTR) or {}
    if not isinstance(where, dict) or where.get("trial") != claim.get("trial"):
        return (f"trial {claim.get('trial')} is being exported by worker {claim.get('by')}; "
                "if that worker died, `risk-tuner release` exports it again")
    note = f"trial {where['trial']}, written by worker {where['by']} to {where['folder']}"
    if "mlflow_artifacts" in where:
        note += (f"; in MLflow as {where['mlflow_artifacts']} (mlflow artifacts download "
                 f"--artifact-uri {where['mlflow_artifacts']} --dst-path DIR)")
    return note


def _figures(ev: Evaluation, ctx: Context, folder: Path) -> dict[str, str]:
    membership = ev.membership
    plots.save_figure(plots.f1_curve(membership.f1_by_threshold, membership.f_naive,
                                     membership.hamming_threshold),
                      folder / "f1_curve.png")
    figures = {"Adversary F1 against the Hamming threshold": "f1_curve.png"}
    keys = list(ctx.cfg.risk.attribute_keys)
    for i, t in enumerate(ctx.cfg.risk.cap_targets):
        kw: dict[str, Any] = dict(keys=keys, target=t, numeric_bins=ctx.cfg.risk.numeric_bins,
                                  missing="category")
        before = risk.cap_per_record(ctx.split.train, ctx.split.train, **kw).to_numpy()
        after = risk.cap_per_record(ctx.split.train, ev.synthetic, **kw).to_numpy()
        safe = re.sub(r"[^\w.\-]", "_", t)  # a column name as a file name ("income [USD]/yr")
        fname = f"cap_scatter_{safe}.png"
        if fname in figures.values():  # two names made alike
            fname = f"cap_scatter_{safe}_{i}.png"
        # the jitter's own seed: an image must not carry the trial's (design §9.2)
        plots.save_figure(plots.cap_scatter(before, after, t, seed=ctx.derive(SeedPath.PLOT, i)),
                          folder / fname)
        figures[f"Record-level CAP of {t!r}: original vs synthetic"] = fname
    plots.save_figure(plots.correlations(ctx.split.train, ev.synthetic),
                      folder / "correlations.png")
    figures["Pairwise rank correlations: training data and release side by side"] = \
        "correlations.png"
    return figures


def _utility(ev: Evaluation, ctx: Context, folder: Path,
             figures: dict[str, str]) -> dict[str, Any]:
    """The Quality Report's breakdown (scores only), its per-column figure, and the marginal
    distributions of the worst-reproduced columns (small cells suppressed)."""
    breakdown = quality_breakdown(ctx.split.train, ev.synthetic)
    plots.save_figure(plots.column_scores(breakdown["columns"], "Column shapes: how well each "
                                          "column's distribution is reproduced"),
                      folder / "column_shapes.png")
    figures["Utility per column"] = "column_shapes.png"
    breakdown["marginals"] = plots.save_marginals(ctx.split.train, ev.synthetic,
                                                  breakdown["columns"], folder / "marginals.png")
    figures["Marginal distributions: training data and release"] = "marginals.png"
    return breakdown


def write_split(ctx: Context) -> Path:
    """The custodian-only list of training, holdout and audit rows, in the study folder,
    readable by its owner only (it tells who was in the training data)."""
    path = ctx.output / SPLIT_FILE
    content = json.dumps({
        "note": "CONFIDENTIAL, custodian-only: 0-based row positions of the data file used for "
                "training (members), as holdout (every trial's constraints) and as the sealed "
                "audit set (read only at release). Never share it with the release.",
        "train_rows": ctx.split.train_positions.tolist(),
        "holdout_rows": ctx.split.holdout_positions.tolist(),
        "audit_rows": ctx.split.audit_positions.tolist()})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
    os.chmod(path, 0o600)  # a file made before, with wider rights
    return path


def _export(ctx: Context, study: optuna.Study, best: optuna.trial.FrozenTrial,
            folder: Path) -> Path:
    planned = preflight(ctx, study, best)  # a trial too slow to audit: passed over unrefitted
    ev = recreate(ctx, best)
    fakes, faked = fake_columns(ctx, ev.synthetic)  # before the audit: a failure costs nothing
    audited = release_audit(ctx, study, best, ev, planned=planned)  # refuses when it fails
    staging = folder.with_name(f".{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        # dates in the input's format (tuner.data), a missing one an empty field; the fake
        # columns (SDV metadata's PII) in their place, the same in every set of a partial one
        released = with_fakes(ctx, ev.synthetic, fakes)
        formatted(released, ctx.date_formats).to_csv(staging / "synthetic.csv", index=False)
        for name, one in zip(set_files(len(ev.sets))[1:], ev.sets[1:], strict=True):
            formatted(with_fakes(ctx, one, fakes), ctx.date_formats).to_csv(
                staging / name, index=False)  # partial: 2..m
        (staging / "metadata.json").write_text(json.dumps(release_metadata(ctx, released),
                                                          indent=2))
        figures = _figures(ev, ctx, staging)
        if audited["membership"].get("ran"):  # the audit section shows it, not the figures list
            plots.save_figure(plots.audit_aucs(audited["membership"]), staging / "audit_auc.png")
        if curves := plots.curves_of(study.get_trials(deepcopy=False), best.number):
            plots.save_figure(plots.learning_curves(curves), staging / "learning_curves.png")
            figures["Learning curves of the neural trials: the loss at each checkpoint"] = \
                "learning_curves.png"
        frame = trials_frame(study)
        chosen = selection(ctx, study, best)
        if chosen["mode"] == "pareto":
            complete = frame[frame["state"] == "COMPLETE"]
            plots.save_figure(risk_utility_plot(
                complete, threshold=ctx.cfg.risk.m_threshold, front=tuple(chosen["front"]),
                released=best.number, title="Pareto mode: the feasible front and the release"),
                staging / "pareto_front.png")
            figures["Utility against M: the feasible front and the released point"] = \
                "pareto_front.png"
        report_data: ReportData = {
            "rows": report.measure_rows(ev, ctx.cfg.risk, ctx.cfg.utility.metric),
            "trials_run": len(frame),
            "trials_feasible": int(frame["feasible"].sum()) if len(frame) else 0,
            "trials_refused": int(frame["refused"].sum()) if len(frame) else 0,
            "utility": _utility(ev, ctx, staging, figures), "figures": figures,
        }
        digest = sha256_file(staging / "synthetic.csv")
        content: Manifest = manifest(ev, ctx, best, digest, report_data, selection=chosen,
                                     audit=public(audited), fakes=faked,
                                     released_columns=list(map(str, released.columns)))
        if ev.sets:
            content["partial"]["sha256"] = {name: sha256_file(staging / name)
                                            for name in set_files(len(ev.sets))}
        (staging / "manifest.json").write_text(json.dumps(content, indent=2, default=str))
        report.write(staging, json.loads(json.dumps(content, default=str)))
        write_split(ctx)
        mem = audited.get("membership", {})
        record_secret(ctx.output, ctx.cfg.study.name, secret=encode_secret(ctx.secret),
                      seed=ctx.cfg.study.seed, public_seed=ctx.secret is None,
                      release={"trial": best.number, "trial_seed": ev.seed,
                               "synthetic_sha256": digest}
                      | {f"audit_{k}": mem[k] for k in CUSTODIAN_ONLY if k in mem})
        old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
        if folder.exists():
            folder.rename(old)
        staging.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:  # noqa: BLE001 - removes the half-written staging folder, re-raises
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder

