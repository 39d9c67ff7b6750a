"""Errors that tell a bug from bad input (tuner.errors): exit 2 and one line for bad input, a
traceback for anything else, whatever its type looks like."""

from __future__ import annotations

import pytest

import tuner
from risk import RiskInputError
from tests.tuner.conftest import write_config
from tuner import cli
from tuner.config import ConfigError
from tuner.errors import InputError, SynthesisFailed, TrialFailed, TunerError
from tuner.release._recreate import NoFeasibleTrial, ReleaseRejected
from tuner.scoring._evaluation import UnusableSynthesis
from tuner.search._storage import DataChanged, ModeChanged
from tuner.synthesis._partial import PartialSynthesisError


def test_every_expected_error_has_one_base_and_bad_input_is_a_value_error():
    for cls in (ConfigError, DataChanged, ModeChanged):
        assert issubclass(cls, InputError) and issubclass(cls, ValueError)
    for cls in (NoFeasibleTrial, ReleaseRejected, UnusableSynthesis):
        assert issubclass(cls, TunerError) and not issubclass(cls, InputError)
    assert issubclass(InputError, TunerError)
    # what a trial absorbs: its own failures only, never bad input nor a bug's exception type
    for cls in (UnusableSynthesis, SynthesisFailed, PartialSynthesisError):
        assert issubclass(cls, TrialFailed)
    for cls in (InputError, NoFeasibleTrial, ReleaseRejected):
        assert not issubclass(cls, TrialFailed)


def test_a_synthesiser_that_raises_is_the_trials_failure_with_the_cause_kept(monkeypatch):
    import tuner.synthesis._synthesizers as synthesizers_module
    from tuner.data import read_builtin

    def fails(*args, **kwargs):
        raise ZeroDivisionError("inside the library's fit")

    monkeypatch.setattr(synthesizers_module, "fitted", fails)
    train = read_builtin("builtin:fair").head(200)
    with pytest.raises(SynthesisFailed, match="ZeroDivisionError: inside the library") as got:
        synthesizers_module.synthesize("cart", {}, train, seed=1)
    assert isinstance(got.value.__cause__, ZeroDivisionError)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A tiny study with its release, made once for the module."""
    folder = tmp_path_factory.mktemp("errors")
    tuner.tune(write_config(folder, synthesizers=("gaussian_copula",), n_trials=1),
               output=folder / "out")
    assert (folder / "out" / "release" / "manifest.json").exists()
    return folder / "out"


def _raising(exc: BaseException):
    def broken(*args, **kwargs):
        raise exc
    return broken


@pytest.mark.parametrize("exc", [ValueError("broken invariant: 3 != 4"),
                                 KeyError("released_records"),
                                 RuntimeError("pandas said something"),
                                 # frames the tuner built, refused by the risk library: a bug
                                 # of the tuner, not the user's bad input
                                 RiskInputError("`train` has no rows")],
                         ids=["ValueError", "KeyError", "RuntimeError", "RiskInputError"])
@pytest.mark.slow
def test_an_internal_error_in_the_release_path_is_a_traceback(released, monkeypatch, capsys,
                                                              exc):
    # a bare ValueError used to be said as bad input (exit 2, one line, no traceback): a bug
    # must reach the user as Python's traceback (the console script then exits 1)
    monkeypatch.setattr("tuner.release._export.release_audit", _raising(exc))
    with pytest.raises(type(exc)) as caught:
        cli.main(["release", str(released)])
    assert caught.value is exc
    assert "error:" not in capsys.readouterr().err


@pytest.mark.slow  # every test of the module's released study (25 s) is slow
@pytest.mark.parametrize("exc", [InputError("audit.targets = 0: expected >= 1")],
                         ids=["InputError"])
def test_bad_input_met_in_the_release_path_is_one_line_with_exit_2(released, monkeypatch,
                                                                   capsys, exc):
    monkeypatch.setattr("tuner.release._export.release_audit", _raising(exc))
    assert cli.main(["release", str(released)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {exc}" and "Traceback" not in err


def _a_bug_planted(target: str, error: type[Exception], message: str,
                   argv: list[str]) -> tuple[list[str], list[str]]:
    """Run the CLI with ``argv`` in a process of its own, ``target`` (``module.attribute``)
    replaced by a function that raises ``error(message)``; it must exit 1 with the traceback,
    whose last line is the error. Returns the lines of stdout and stderr."""
    import subprocess
    import sys

    module, _, name = target.rpartition(".")
    code = (f"import sys, importlib, tuner.cli\nmodule = importlib.import_module({module!r})\n"
            f"def broken(*a, **k):\n    raise {error.__name__}({message!r})\n"
            f"setattr(module, {name!r}, broken)\nsys.exit(tuner.cli.main({argv!r}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback (most recent call last)" in done.stderr
    err = done.stderr.strip().splitlines()
    assert err[-1] == f"{error.__name__}: {message}", err[-1]
    return done.stdout.splitlines(), err


@pytest.mark.slow
def test_a_bug_in_a_process_exits_1_with_a_traceback(released, tmp_path):
    _a_bug_planted("tuner.release._export.release_audit", ValueError, "broken invariant",
                   ["release", str(released)])


@pytest.mark.slow  # the demo in a process of its own (14 s)
def test_a_bug_in_a_trial_ends_the_demo_with_exit_1_its_traceback_and_no_library_line(
        tmp_path):
    # issue 35: a TypeError planted in the trial's membership measure is a bug: the demo stops
    # at the first trial, says so in the tuner's words, prints the traceback and exits 1;
    # Optuna's own "[W ...] Trial 0 failed with parameters" line is not shown
    out, lines = _a_bug_planted(
        "risk.membership_disclosure", TypeError, "planted bug in the membership measure",
        ["demo", "--trials", "3", "--synthesizers", "cart", "--output", str(tmp_path / "out"),
         "--no-progress"])
    (said,) = [line for line in lines if line.startswith("trial 0 (cart, parameters {")]
    assert said.endswith("raised TypeError, a bug, not a refusal: the study stops (the traceback "
                         "is on the trial's MLflow run too, tag fail_traceback)")
    printed = out + lines
    assert not [line for line in printed if line.startswith(("[W ", "[I ", "[E "))], printed


@pytest.mark.slow  # the released study again (25 s, made in each xdist worker that runs one)
@pytest.mark.parametrize(("exc", "said"), [
    (OSError(28, "No space left on device"), "Free the space"),
    (ConnectionRefusedError(111, "Connection refused"), "can be reached"),
], ids=["full-disk", "store-gone"])
def test_a_fault_of_the_machine_is_one_line_with_exit_1_and_advice_that_fits(
        released, monkeypatch, capsys, exc, said):
    monkeypatch.setattr("tuner.release._export.release_audit", _raising(exc))
    assert cli.main(["release", str(released)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err and "Traceback" not in err


@pytest.mark.slow
def test_another_os_error_is_a_traceback_not_advice_about_the_disk(released, monkeypatch):
    # "free the space or fix permissions" was said for any OSError, a bug's included
    exc = OSError(9, "Bad file descriptor")
    monkeypatch.setattr("tuner.release._export.release_audit", _raising(exc))
    with pytest.raises(OSError) as caught:
        cli.main(["release", str(released)])
    assert caught.value is exc
