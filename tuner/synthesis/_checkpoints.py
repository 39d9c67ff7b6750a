"""Checkpointed training of the neural families: the same fit, looked at every few epochs.

CTGAN, TVAE and CopulaGAN train in epochs (the ``ctgan`` package's loops, which SDV calls and
offers no callback for). :func:`synthesize_checkpoints` runs the very fit
:func:`tuner.synthesis._synthesizers.synthesize` runs, and at each epoch count of ``at`` samples
the networks as they stand: the loop's epoch iterator (the ``tqdm`` the ``ctgan`` modules call
around ``range(epochs)``) is replaced, for the fit only, by one that hands over to a callback
between epochs. The sample is drawn as a fit of exactly that many epochs would draw it (the
synthesiser's sampling generator set to the seed, SDV's reverse transforms reset), and every
random state the training reads (Python's, NumPy's and torch's global generators, the networks'
buffers and modes) is put back before training goes on. So the records at checkpoint ``e`` are
the records a plain fit of ``e`` epochs gives for the same seed (tests/tuner/synthesis/
test_checkpoints.py compares them value for value); the release re-creates a checkpoint by
fitting its epochs.

The callback may end training early by raising :class:`StopTraining` (the trial has what it
needs) or any other exception (Optuna's ``TrialPruned``), which passes through.
"""

from __future__ import annotations

import contextlib
import copy
import random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

from tuner.data import TABLE
from tuner.errors import TrialFailed

# the modules of the ctgan package's training loops (ctgan 0.12; CTGAN's also trains CopulaGAN):
# each iterates `tqdm(range(epochs), ...)` and builds its `DataTransformer()`
LOOPS = ("ctgan.synthesizers.ctgan", "ctgan.synthesizers.tvae")
# the networks sampling runs through: their buffers (batch-norm statistics) and train/eval mode
_NETWORKS = ("_generator", "decoder")


class StopTraining(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a checkpoint callback: training ends here, the checkpoints so far stand."""


class CallbackRaised(Exception):  # noqa: N818 - a carrier, unwrapped by the caller
    """What a checkpoint callback raised (its ``original``), carried through the fit so that
    the synthesiser's failures, and only they, are said as the trial's
    (:func:`tuner.synthesis._synthesizers.failing_as_trial` lets it pass)."""

    def __init__(self, original: Exception) -> None:
        super().__init__(repr(original))
        self.original = original


def rungs(epochs: int, *, first: int, factor: int = 3) -> tuple[int, ...]:
    """The epoch counts a fit of ``epochs`` epochs is looked at: ``first``, ``first * factor``,
    ``first * factor**2``, ... below ``epochs``, and ``epochs`` itself (the geometric rungs of
    successive halving, Jamieson & Talwalkar 2016; Li et al. 2018, Hyperband)."""
    if epochs < 1 or first < 1 or factor < 2:
        raise ValueError(f"rungs need epochs >= 1, first >= 1 and factor >= 2, got {epochs}, "
                         f"{first} and {factor}")
    out: list[int] = []
    step = first
    while step < epochs:
        out.append(step)
        step *= factor
    return (*out, epochs)


# seconds of data transforms restored rather than redone in this process
# (tuner.synthesis._transforms adds to it; kept here, which that module imports)
RESTORED = [0.0]


def restored_seconds() -> float:
    """Seconds of transforms restored rather than redone in this process so far
    (:mod:`tuner.synthesis._transforms`): a fit's timer adds those restored during the fit,
    so that its seconds are what a plain fit takes. The job's budget estimates each audit's
    shadow fits, on tables never seen before, from them (in the acceptance run of issue 46,
    CTGAN trials fitted in 1.0 s with their transforms restored; the release measured 1.1-1.6 s
    a shadow fit and found their audits 3.2-4.9 min where the reserve had kept 2.3 min, and
    nothing was released)."""
    return RESTORED[0]


class _Epochs:
    """What the patched ``tqdm(range(epochs))`` returns: the epochs, with a call between two
    (and after the last) when the count done is a checkpoint; the time spent in the calls is
    kept apart from the training's."""

    def __init__(self, epochs: range, visit: Callable[[int, float], None],
                 at: Sequence[int], started: float,
                 due: Callable[[], bool] | None = None, restored_at: float = 0.0) -> None:
        self.epochs, self.visit, self.at, self.due = epochs, visit, set(at), due
        self.outside = 0.0  # seconds spent in checkpoints, not in training
        self.started = started  # when the fit began (its transforms count as training)
        # restored_seconds() when the fit began: transforms restored since count as training
        self.restored_at = restored_at

    def __iter__(self) -> Iterator[int]:
        for i in self.epochs:
            self._checkpoint(i)  # i epochs are done
            yield i
        self._checkpoint(len(self.epochs))

    def _checkpoint(self, done: int) -> None:
        if done not in self.at:  # not a checkpoint (nor 0: no epoch is done yet)
            if not (done and self.due is not None and self.due()):
                return
            self.due = None  # one checkpoint out of turn: the first epoch it is due after
        # restored transforms count as a plain fit pays them (tuner.synthesis._transforms)
        trained = (time.perf_counter() - self.started - self.outside
                   + restored_seconds() - self.restored_at)
        start = time.perf_counter()
        try:
            self.visit(done, trained)
        finally:
            self.outside += time.perf_counter() - start

    # the loops call these when verbose: nothing to show
    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass


@contextlib.contextmanager
def _epoch_hook(make: Callable[[range], _Epochs]) -> Iterator[list[_Epochs]]:
    """Within the block, the ``ctgan`` loops iterate their epochs through ``make``."""
    modules = loop_modules()
    missing = [m.__name__ for m in modules if not hasattr(m, "tqdm")]
    if missing:
        import ctgan

        raise TrialFailed(f"checkpointed training needs the epoch loop of ctgan 0.12 "
                          f"(installed: {ctgan.__version__}; {missing} have none): set "
                          "[study] checkpoints = false")
    made: list[_Epochs] = []

    def iterate(iterable: range, *args: Any, **kwargs: Any) -> _Epochs:
        made.append(make(iterable))
        return made[-1]

    with in_loops("tqdm", iterate):
        yield made


def loop_modules() -> list[Any]:
    """The modules of :data:`LOOPS`, imported."""
    import importlib

    return [importlib.import_module(name) for name in LOOPS]


@contextlib.contextmanager
def in_loops(name: str, value: Any) -> Iterator[None]:
    """Within the block, the ``ctgan`` loops' modules see ``value`` as their global ``name``
    (for one fit: put back after it, whatever happens)."""
    with contextlib.ExitStack() as stack:
        for module in loop_modules():
            stack.enter_context(mock.patch.object(module, name, value))
        yield


@contextlib.contextmanager
def _untouched(model: Any) -> Iterator[None]:
    """Whatever sampling inside the block changes that training reads, put back after it."""
    states = random.getstate(), np.random.get_state()
    import torch

    torch_state = torch.get_rng_state()
    nets = [getattr(model, n) for n in _NETWORKS if getattr(model, n, None) is not None]
    kept = [(net, copy.deepcopy(net.state_dict()), net.training) for net in nets]
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(torch_state)
        for net, state, training in kept:
            net.load_state_dict(state)
            net.train(training)
        model.set_random_state(None)


def sample_now(synth: Any, num_rows: int, *, seed: int) -> pd.DataFrame:
    """``num_rows`` records of ``synth`` mid-fit, drawn as after a fit of the epochs done so
    far (:func:`tuner.synthesis._synthesizers.fitted` seeds its sampling the same way)."""
    with _untouched(synth._model):
        synth._data_processor.reset_sampling()  # the reverse transforms as right after a fit
        synth._fitted = True  # SDV's sample() refuses an unfitted synthesiser
        try:
            synth._set_random_state(seed)
            return synth.sample(num_rows)[TABLE].reset_index(drop=True)
        finally:
            synth._fitted = False
            synth._data_processor.reset_sampling()


def checkpointed_fit(synth: Any, train: pd.DataFrame, *, seed: int, at: Sequence[int],
                     num_rows: int,
                     each: Callable[[int, pd.DataFrame, float, float], None],
                     due: Callable[[], bool] | None = None) -> int:
    """Fit ``synth`` (an SDV neural synthesiser, built with the last of ``at`` as its epochs)
    on ``train`` inside :func:`tuner.synthesis._synthesizers.fitted`'s seeding, calling
    ``each(epochs_done, records, training_seconds, sampling_seconds)`` at every epoch count of
    ``at``, and once out of turn after the first epoch at whose end ``due()`` is true (the
    job's time is up: the trial stops there rather than at its next rung, which may be
    3 times as many epochs away); return the checkpoints visited. :class:`StopTraining` from
    ``each`` ends the fit there."""
    seen: list[int] = []

    def visit(done: int, trained: float) -> None:
        seen.append(done)
        start = time.perf_counter()
        records = sample_now(synth, num_rows, seed=seed)
        sampled = time.perf_counter() - start
        try:
            each(done, records, trained, sampled)
        except StopTraining:
            raise
        except Exception as exc:  # noqa: BLE001 - carried out of the fit, raised as it was
            raise CallbackRaised(exc) from exc

    started, restored_at = time.perf_counter(), restored_seconds()
    with _epoch_hook(lambda epochs: _Epochs(epochs, visit, at, started, due, restored_at)), \
            contextlib.suppress(StopTraining):
        synth.fit({TABLE: train})
    if not seen:
        raise TrialFailed("checkpointed training saw no epoch of the fit: the ctgan loop "
                          "changed; set [study] checkpoints = false")
    return len(seen)
