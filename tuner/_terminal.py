"""What ``risk-tuner`` prints at the terminal: the trials' table, the release's summary block,
the warning that M cannot bind, and where the results are and how to open them
(:mod:`tuner.cli` decides when)."""

from __future__ import annotations

from pathlib import Path

from tuner._common import attrs


def print_table(tuned) -> None:  # noqa: ANN001
    """The trials as a table, the released one marked, the c.* columns explained."""
    frame = tuned.trials_frame()
    if frame.empty:
        print("no finished trial yet")
        return
    frame["released"] = frame["released"].map({True: "<== released", False: ""})
    cols = ["number", "state", "synthesizer", "utility", "m", "loss", "feasible"]
    # feasible as scored, failed in full at release (tuner.release._export)
    if frame["refused"].any():
        frame["refused"] = frame["refused"].map({True: "refused", False: ""})
        cols.append("refused")
    cols += ["front"] if "front" in frame else []  # Pareto mode: the feasible front
    cols += [c for c in frame.columns if c.startswith("c.")] + ["released"]
    with_pd = frame[cols].round(4)
    print(with_pd.to_string(index=False))
    if any(c.startswith("c.") for c in cols):
        print("c.NAME: constraint NAME's margin, its metric minus its [risk] limit (or the "
              "limit minus it, for a floor); a trial is feasible when every one is <= 0. "
              "The release's report gives each metric and limit.")


def print_membership_warning(study) -> None:  # noqa: ANN001
    """Say once when M cannot bind (too few members per attack set): the gate decides then."""
    for t in study.get_trials(deepcopy=False):
        warning = t.user_attrs.get(attrs.M_WARNING)
        if warning:
            from tuner.measures import cannot_bind

            print(f"\nWARNING: {cannot_bind(warning)}")
            return


def print_release_summary(folder: Path) -> None:
    """The release's summary block (:func:`tuner.release.summary_lines`, the top of its report)."""
    from tuner.release import read_manifest, summary_lines

    lines = summary_lines(read_manifest(folder / "manifest.json"))
    print(f"\n{lines[0]}\n" + "\n".join(f"  {line}" for line in lines[1:]))


def print_results(cfg, ctx, release_dir: Path | None, note: str = "") -> None:  # noqa: ANN001
    from sqlalchemy.engine import make_url

    from tuner.search import is_remote, ui_command

    out = cfg.study.output.resolve()
    storage = ctx.storage_url
    if "://" in storage and "@" in storage:  # never print a password
        storage = make_url(storage).render_as_string(hide_password=True)
    print("\nResults")
    print(f"  output folder : {out}")
    print(f"  Optuna storage: {storage}")
    print(f"  MLflow store  : {ctx.mlflow_uri}")
    if release_dir is not None:
        print(f"  release       : {release_dir.resolve()} (synthetic.csv, manifest.json, "
              "report.html for the review board)")
    elif note:
        print(f"  release       : exported by another worker: {note}")
    print("Open the MLflow UI on them with:")
    print(f"  {ui_command(ctx.mlflow_uri, out)}")
    where = ctx.mlflow_uri if is_remote(ctx.mlflow_uri) else "http://127.0.0.1:5000"
    print(f"  then browse {where}/#/experiments?workflowType=machine_learning (experiment "
          f"{cfg.study.name!r}: one parent run per invocation, a nested run per trial; the run "
          "tagged released = true is the release)")
