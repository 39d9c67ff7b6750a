"""The ``risk-tuner`` command: run a study, the embedded demo, a report of trials, or a release.

Its exit codes are :data:`EXIT_CODES` (printed by ``--help``, tabled in docs/usage.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from tuner._common import stopping
from tuner._common.quiet import quiet_libraries
from tuner._terminal import (
    print_membership_warning,
    print_release_summary,
    print_results,
    print_table,
)

DESCRIPTION = "risk-tuner: run a study, the embedded demo, a report of trials, or a release."

EXIT_OK, EXIT_ERROR, EXIT_CONFIG, EXIT_NO_RELEASE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command Ctrl-C stopped


def _run(cfg, *, progress: bool) -> int:  # noqa: ANN001
    from tuner.api import start
    from tuner.config import UNBOUNDED
    from tuner.release import NoFeasibleTrial, export_release, release_note

    mode = (f"; Pareto mode (maximise U, minimise M), release pick "
            f"{cfg.study.pareto_pick!r}" if cfg.study.mode == "pareto" else "")
    trials = (f"{cfg.study.budget_minutes:g} minutes for trials and audit"
              if cfg.study.trial_budget == UNBOUNDED else f"{cfg.study.trial_budget} trials")
    print(f"study {cfg.study.name!r}: synthesisers {', '.join(cfg.study.synthesizers)}, budget "
          f"{trials}, {cfg.study.workers} worker(s){mode}; output "
          f"{cfg.study.output.resolve()}")
    tuned, ctx = start(cfg, progress=progress)  # an unreadable data file: a ValueError naming it
    try:
        folder = export_release(ctx, tuned.optuna_study, once=True)  # one worker of many exports
    except NoFeasibleTrial as exc:
        print_table(tuned)
        print_membership_warning(tuned.optuna_study)
        print_results(cfg, ctx, None)
        print(f"\nNO RELEASE CANDIDATE.\n{exc}", file=sys.stderr)
        return EXIT_NO_RELEASE
    print_table(tuned)
    if folder is None:  # another worker exported it: its summary is in its folder
        print_membership_warning(tuned.optuna_study)
    else:  # says whether M can bind, with the warning's reason when it cannot
        print_release_summary(folder)
    print_results(cfg, ctx, folder, "" if folder else release_note(tuned.optuna_study))
    return EXIT_OK


class _UsageError(Exception):
    """A command line argparse refuses (said in one line, exit 2)."""


# what each exit status means (docs/usage.md has the table with what is said and what to do)
EXIT_CODES = """exit status:
  0    done: the release exported, or report/release did its work
  1    a fault of the machine (full disk, read-only folder, a server gone): one line;
       or a bug: Python's traceback (please report it)
  2    bad configuration, arguments or input, before any trial: one line naming it
  3    no release candidate: no trial met every constraint, or each was refused
  130  interrupted (Ctrl-C); run the same command again to resume
  143  stopped by SIGTERM (kill, timeout, a batch scheduler): as Ctrl-C, its processes ended"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: {message}")


def _count(text: str) -> int:
    """An argument that is a whole number >= 1 (--trials, --workers)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must name a folder, got {text!r}")
    return Path(text)


def _check_paths(cfg, output_key: str) -> None:  # noqa: ANN001
    """The data file is a file and the output folder can be a folder: said before any work."""
    from tuner.config import ConfigError

    data = cfg.data.path
    if not str(data).startswith("builtin:") and data.is_dir():
        raise ConfigError(f"data.path = {str(data)!r} is a folder; give the CSV or Parquet file")
    out = cfg.study.output
    for path in (out, *out.parents):
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{output_key} = {str(out)!r}: {str(path)!r} is a file, not a "
                              "folder; give a folder for the study's output")


def _check_device(cfg) -> None:  # noqa: ANN001
    """``device = "cuda"`` needs a GPU that torch sees (else CPU would be used without a word)."""
    if cfg.study.device == "cuda":
        import torch

        from tuner.config import ConfigError

        if not torch.cuda.is_available():
            raise ConfigError("study.device = 'cuda', but torch sees no CUDA device here; use "
                              "device = 'cpu', or a torch built for CUDA on a machine with a GPU")


def _check_run_file(directory: Path) -> None:
    """An output folder's ``run.json`` is the one ``run`` wrote (not truncated or edited)."""
    import json

    from tuner.config import ConfigError

    run_file = directory / "run.json"
    if not (directory.is_dir() and run_file.is_file()):
        return
    try:
        info = json.loads(run_file.read_text(encoding="utf-8"))
        str(info["study"]), Path(info["overrides"]["output"])  # noqa: B018
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{run_file} is not the run file risk-tuner writes ({type(exc).__name__}"
                          f": {exc}); run the study's config again (risk-tuner run CONFIG) to "
                          "write it, or give the config instead of the folder") from None


def _check_study(tuned, args) -> None:  # noqa: ANN001
    """The study named (by --study, run.json or the config) is in its storage."""
    import optuna

    from tuner.config import ConfigError
    from tuner.search import open_storage, shown_url

    key = "--study" if getattr(args, "study", None) else "study.name"
    url = tuned.storage_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).is_file():
        raise ConfigError(f"{key} = {tuned.name!r}: there is no Optuna storage "
                          f"{url[len('sqlite:///'):]!r}; has the study been run?")
    names = optuna.get_all_study_names(open_storage(url))
    if tuned.name not in names:
        raise ConfigError(f"{key} = {tuned.name!r}: no such study in the Optuna storage "
                          f"{shown_url(tuned.storage_url)} (studies there: {names}); has it "
                          "been run?")


def _failure(exc: Exception) -> int:
    """One line for an error that is not a bug: exit 1 for a fault of the machine (a full disk,
    a read-only folder) or a store that went away (a refused or timed-out connection), 2 for
    bad input (:class:`tuner.errors.InputError`, a missing file);
    anything else is raised: a bug gives Python's traceback and exit 1, however much it looks
    like bad input (a bare ``ValueError``, or the ``risk`` library's ``RiskInputError`` about
    frames the tuner built: where the user's data enter, the tuner checks them itself and says
    an ``InputError``)."""
    from tuner._common.faults import fault_of
    from tuner.errors import InputError

    fault = None if isinstance(exc, InputError) else fault_of(exc)
    if fault is not None:
        print(f"error: {fault}; nothing was released. Free the space or fix the folder's "
              "permissions, then run the same command again to resume", file=sys.stderr)
        return EXIT_ERROR
    if isinstance(exc, (ConnectionError, TimeoutError)):  # a store went away mid-run
        print(f"error: {type(exc).__name__}: {exc}; nothing was released. Check that the "
              "storage and the MLflow server can be reached, then run the same command again "
              "to resume", file=sys.stderr)
        return EXIT_ERROR
    if isinstance(exc, (InputError, *_INPUT_ERRORS)):
        if isinstance(exc, OSError) and exc.filename:
            print(f"error: {exc.strerror}: {str(exc.filename)!r}", file=sys.stderr)
        else:
            print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    raise exc


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("risk-tuner")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


_INPUT_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, FileExistsError)


TUNER_MODULES = ("optuna", "sdv", "mlflow", "torch", "sdmetrics", "matplotlib")


def _missing_extra() -> list[str]:
    """The tuner's dependencies that are not installed (a core-only install has ``risk``)."""
    from importlib.util import find_spec

    return [m for m in TUNER_MODULES if find_spec(m) is None]


def _add_study_options(p: argparse.ArgumentParser) -> None:
    """The options of ``run`` and ``demo``: each overrides one key of the config."""
    p.add_argument("--trials", type=_count, help="trial budget (overrides study.n_trials)")
    p.add_argument("--output", type=_folder, help="output folder (overrides study.output)")
    p.add_argument("--workers", type=_count, help="worker processes on this machine")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--mode", choices=("single", "pareto"),
                   help="single: minimise the risk-utility loss; pareto: maximise U and "
                        "minimise M, release the front point study.pareto_pick picks "
                        "(overrides study.mode)")
    p.add_argument("--synthesizers", nargs="+", metavar="NAME",
                   help="synthesiser families to search, e.g. cart gaussian_copula mst aim "
                        "(overrides study.synthesizers)")
    p.add_argument("--public-seed", action="store_true",
                   help="a new study without a secret: its split and fits follow from "
                        "study.seed alone, so anyone can reproduce them (public data only; "
                        "sets study.public_seed)")


def _parser() -> _Parser:
    """``risk-tuner`` and its commands: run, demo, report, release, dashboard."""
    parser = _Parser(prog="risk-tuner", description=DESCRIPTION, epilog=EXIT_CODES,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run or resume the study of a TOML config")
    p_run.add_argument("config", help="the study's TOML config (docs/config.md lists its keys)")
    p_demo = sub.add_parser("demo", help="run the embedded demo (5,000 people of UCI Adult)")
    for p in (p_run, p_demo):
        _add_study_options(p)
    p_demo.set_defaults(output=None)
    p_report = sub.add_parser("report", help="the trials of an output folder (no data needed), "
                              "the released one marked; --write makes report.md/html again")
    p_report.add_argument("directory", nargs="?",
                          help="output folder, or the study's TOML config")
    p_report.add_argument("--storage", help="or: the Optuna storage URL (e.g. PostgreSQL) ...")
    p_report.add_argument("--study", help="... and the study's name (study.name)")
    p_report.add_argument("--write", action="store_true",
                          help="write release/report.md and report.html again from the manifest")
    p_release = sub.add_parser("release", help="export the release candidate of a folder or "
                               "a TOML config (re-creates the data: needs the data file)")
    p_release.add_argument("directory", help="output folder, or the study's TOML config")
    p_dash = sub.add_parser("dashboard", help="optuna-dashboard on a study, with the best "
                            "feasible trial as the best (no data needed)")
    p_dash.add_argument("directory", nargs="?", help="output folder, or the study's TOML config")
    p_dash.add_argument("--storage", help="or: an Optuna storage URL (every study in it)")
    p_dash.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p_dash.add_argument("--port", type=int, default=8080, help="port to listen on")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``risk-tuner``: the parsed command run, every way it can end said in one line and an exit
    code (the table of ``--help``)."""
    try:
        args = _parser().parse_args(argv)
    except _UsageError as exc:
        print(f"error: {exc} (risk-tuner --help, or risk-tuner COMMAND --help)", file=sys.stderr)
        return EXIT_CONFIG
    missing = _missing_extra()
    if missing:
        print(f"error: the tuner needs {', '.join(missing)}, which are not installed (the core "
              "install has the `risk` library only). Install the tuner's extra: "
              "python -m pip install torch==2.13.0 && python -m pip install 'risk-tuner[tuner]' "
              "(or -e '.[tuner]' in a checkout)", file=sys.stderr)
        return EXIT_CONFIG
    quiet_libraries()
    return _guarded(args)


def _guarded(args: argparse.Namespace) -> int:
    """:func:`_command`, with each way it can stop said once and mapped to its exit code."""
    from tuner.release import NoFeasibleTrial

    try:
        with stopping.terminating_as_interrupt():
            return _command(args)
    except NoFeasibleTrial as exc:
        print(f"NO RELEASE CANDIDATE.\n{exc}", file=sys.stderr)
        return EXIT_NO_RELEASE
    except stopping.Terminated:
        print("stopped by SIGTERM (kill, timeout or a batch scheduler): the trial or audit "
              "running was cut short and the processes it started were ended; run the same "
              "command again to resume", file=sys.stderr)
        return stopping.EXIT_TERMINATED
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - _failure says a fault or bad input in one line and re-raises anything else (a bug keeps its traceback)
        return _failure(exc)


def _command(args: argparse.Namespace) -> int:
    """The parsed command, run; its errors are said by :func:`_guarded`."""
    if args.command in ("run", "demo"):
        return _run_study(args)
    if args.command == "dashboard":
        from tuner.dashboard import run_command

        run_command(args.directory, storage_url=args.storage, host=args.host, port=args.port)
        return EXIT_OK
    if args.command == "report" and (release := _release_only(args)) is not None:
        return _report_release(release, write=args.write)
    tuned = _loaded(args)
    if args.command == "report":
        return _report(tuned, write=args.write)
    folder = tuned.release()
    print(f"release written to {folder.resolve()} (trial {tuned.released_trial})")
    print_release_summary(folder)
    return EXIT_OK


def _run_study(args: argparse.Namespace) -> int:
    """``run`` and ``demo``: the config with the command line's overrides, checked, run."""
    from tuner.api import load_config

    output = args.output
    if args.command == "demo" and output is None:
        output = Path("demo-output")
    cfg = load_config(args.config if args.command == "run" else None,
                      n_trials=args.trials, output=output, workers=args.workers,
                      mode=args.mode, synthesizers=tuple(args.synthesizers)
                      if args.synthesizers else None,
                      public_seed=True if args.public_seed else None)
    _check_paths(cfg, "--output" if args.output is not None else "study.output")
    _check_device(cfg)
    return _run(cfg, progress=not args.no_progress)


def _loaded(args: argparse.Namespace):  # noqa: ANN202 - a TunedStudy, imported late
    """The study ``report`` or ``release`` names: a folder, a config, or a storage URL and a
    study's name; checked to hold what the command needs."""
    from tuner.api import load
    from tuner.config import ConfigError

    storage, study = getattr(args, "storage", None), getattr(args, "study", None)
    if storage or study:
        if not (storage and study):
            raise ConfigError("report --storage URL needs --study NAME (the study's "
                              "study.name), and --study needs --storage")
        tuned = load(args.directory, storage=storage, study=study)
    elif args.directory is None:
        raise ConfigError("report needs an output folder, a config, or --storage and --study")
    else:
        _check_run_file(Path(args.directory))
        tuned = load(args.directory)
    _check_study(tuned, args)
    return tuned


def _release_only(args: argparse.Namespace) -> Path | None:
    """The release folder ``report DIR`` names when DIR holds a release and no study: the
    release folder itself, or an output folder with ``release/`` and no ``run.json`` (copied
    to a review board without the study's stores)."""
    if args.directory is None or args.storage or args.study:
        return None
    folder = Path(args.directory)
    if (folder / "manifest.json").is_file():
        return folder
    if not (folder / "run.json").exists() and (folder / "release" / "manifest.json").is_file():
        return folder / "release"
    return None


def _report_release(release: Path, *, write: bool) -> int:
    """``report`` of a release without its study: its summary, and with ``write`` its reports
    made again from ``manifest.json`` alone (no trials table: the study is not here)."""
    from tuner.release import read_manifest, write_report

    print(f"{release}: a release without its study (no trials table); from manifest.json")
    print_release_summary(release)
    if write:
        for path in write_report(release, read_manifest(release / "manifest.json")):
            print(f"wrote {path}")
    return EXIT_OK


def _report(tuned, *, write: bool) -> int:  # noqa: ANN001
    """``report``: the trials' table, the release's summary, and with ``write`` its reports
    made again from the manifest."""
    print_table(tuned)
    released = tuned.release_folder
    if released is not None and (released / "manifest.json").exists():
        print_release_summary(released)
    if write:
        for path in tuned.write_report():
            print(f"wrote {path}")
    return EXIT_OK
