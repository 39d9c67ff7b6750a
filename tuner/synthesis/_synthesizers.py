"""Building, fitting and sampling the synthesisers of
:data:`tuner.synthesis._families.SYNTHESIZERS`."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import joblib
import pandas as pd

from tuner._common.faults import fault_of
from tuner._common.seeding import seeded
from tuner.data import TABLE, Codebook, metadata_for
from tuner.errors import SynthesisFailed, TrialFailed
from tuner.synthesis._checkpoints import CallbackRaised, checkpointed_fit, restored_seconds
from tuner.synthesis._families import SYNTHESIZERS
from tuner.synthesis._spaces import decode
from tuner.synthesis._transforms import remembered


def _clips(name: str, domain: Codebook | None, frame: pd.DataFrame) -> bool:
    """Whether ``name``'s records are clipped to :func:`bounds` rather than by the family
    (a codebook range for a column of ``frame``, and a family that can switch its own off)."""
    if domain is None or SYNTHESIZERS[name].private or not domain.ranges(frame):
        return False
    return "enforce_min_max_values" in inspect.signature(SYNTHESIZERS[name].load()).parameters


def dp_as_released(name: str, domain: Codebook | None, frame: pd.DataFrame) -> bool:
    """Whether ``name`` is a differentially private family whose whole domain over the
    columns of ``frame`` comes from the codebook (or is declared public there): nothing its
    release shows beyond the mechanism's output is read from the data, so no data-dependent
    filter may follow it (the gate's removal of copies reads the confidential table)."""
    return SYNTHESIZERS[name].private and domain is not None and not domain.uncovered(frame)


def bounds(name: str, domain: Codebook | None, train: pd.DataFrame) -> Codebook | None:
    """The ranges ``name``'s records are clipped to after sampling where :func:`build`
    switched the family's own clipping off for the codebook's sake: the codebook's, and the
    other numeric and date columns' training ranges (what the family's clipping did); None
    where the family clips as it always does."""
    if not _clips(name, domain, train):
        return None
    assert domain is not None
    return domain.bounding(train)


def _within(bound: Codebook | None, records: pd.DataFrame) -> pd.DataFrame:
    return records if bound is None else bound.clip(records)


@dataclasses.dataclass(frozen=True)
class Synthesis:
    """Synthetic data and how long it took."""

    synthetic: pd.DataFrame
    fit_seconds: float
    sample_seconds: float


def build(name: str, params: dict[str, Any], frame: pd.DataFrame, *, seed: int,
          device: str = "cpu", keep: Sequence[str] = (), noise_key: int | None = None,
          domain: Codebook | None = None) -> Any:
    """A synthesiser ``name`` with decoded ``params`` for a table shaped like ``frame``;
    ``keep``: the columns partial synthesis will give it (told to a family that takes them
    before the fit, :attr:`tuner.synthesis._families.SynthesizerSpec.keep_argument`);
    ``noise_key``: the 128-bit key a differentially private family draws its noise from in
    place of ``seed`` (:attr:`~tuner.synthesis._families.SynthesizerSpec.private`).
    ``domain``: the codebook; a private family takes it whole (its categories and bins), any
    other has its own clipping to the training range switched off where the codebook gives a
    range (the records are clipped to :func:`bounds` instead)."""
    spec = SYNTHESIZERS[name]
    kwargs = decode(params)
    if domain is not None and spec.private:
        kwargs["domain"] = domain
    elif _clips(name, domain, frame):
        kwargs["enforce_min_max_values"] = False
    if spec.takes_device:
        kwargs["enable_gpu"] = device == "cuda"
    if spec.seed_argument:
        kwargs[spec.seed_argument] = noise_key if spec.private and noise_key is not None \
            else seed
    if keep and spec.keep_argument:
        kwargs[spec.keep_argument] = list(keep)
    return spec.load()(metadata_for(frame), **kwargs)


def synthesize(
    name: str,
    params: dict[str, Any],
    train: pd.DataFrame,
    *,
    seed: int,
    num_rows: int | None = None,
    device: str = "cpu",
    threads: int = 1,
    noise_key: int | None = None,
    domain: Codebook | None = None,
) -> Synthesis:
    """Fit on ``train`` and sample ``num_rows`` (default ``len(train)``), reproducibly;
    ``domain``: the codebook (:func:`build`, :func:`bounds`).

    Fit runs with Python, NumPy and torch seeded from ``seed`` and torch limited to ``threads``
    threads; sampling uses the synthesiser's own seeded generator. joblib runs sequentially
    here (same data as its default process pool): CTGAN's data transformer calls
    ``Parallel(n_jobs=-1)`` on tables over 500 rows, and that pool oversubscribes the cores
    given to this worker and, in a spawned worker process, keeps it from exiting until the
    pool's 300 s idle timeout. Threads are no alternative: the transforms seed NumPy's global
    generator, and concurrent ones changed the synthetic data. ``noise_key``: see :func:`build`.
    """
    with failing_as_trial(name, params):
        synth = build(name, params, train, seed=seed, device=device, noise_key=noise_key,
                      domain=domain)
        bound = bounds(name, domain, train)
        with fitted(synth, train, seed=seed, threads=threads) as fit_seconds:
            start = time.perf_counter()
            synthetic = _within(bound, synth.sample(num_rows or len(train))[TABLE])
            sample_seconds = time.perf_counter() - start
    return Synthesis(synthetic.reset_index(drop=True), fit_seconds, sample_seconds)


def synthesize_checkpoints(
    name: str,
    params: dict[str, Any],
    train: pd.DataFrame,
    *,
    seed: int,
    at: Sequence[int],
    each: Callable[[int, Synthesis], None],
    num_rows: int | None = None,
    device: str = "cpu",
    threads: int = 1,
    domain: Codebook | None = None,
    due: Callable[[], bool] | None = None,
) -> int:
    """:func:`synthesize` of a neural family looked at after each epoch count of ``at`` (its
    last the fit's epochs), and once after the first epoch at whose end ``due()`` is true:
    ``each(epochs, synthesis)`` gets the records a plain fit of that many epochs gives
    (:mod:`tuner.synthesis._checkpoints`) and the training's seconds so far, and may end
    training by raising :class:`~tuner.synthesis._checkpoints.StopTraining`; what else it
    raises passes as it is. Returns the checkpoints visited."""
    if not SYNTHESIZERS[name].has_epochs:
        raise ValueError(f"{name!r} does not train in epochs: it has no checkpoints")

    bound = bounds(name, domain, train)

    def visit(done: int, records: pd.DataFrame, trained: float, sampled: float) -> None:
        each(done, Synthesis(_within(bound, records), trained, sampled))

    try:
        with failing_as_trial(name, params):
            synth = build(name, {**params, "epochs": at[-1]}, train, seed=seed, device=device,
                          domain=domain)
            with training(seed, threads=threads):
                return checkpointed_fit(synth, train, seed=seed, at=at,
                                        num_rows=num_rows or len(train), each=visit,
                                        due=due)
    except CallbackRaised as exc:
        raise exc.original from None


@contextlib.contextmanager
def failing_as_trial(name: str, params: dict[str, Any]) -> Iterator[None]:
    """An exception the synthesiser raises inside the block (SDV's, torch's, a DP library's:
    these parameters do not fit these data) as :class:`tuner.errors.SynthesisFailed`, the one
    kind a trial absorbs, with the library's exception as its cause. A fault of the machine (a
    full disk) and a :class:`tuner.errors.TrialFailed` already said pass as they are."""
    try:
        yield
    except (TrialFailed, CallbackRaised):
        raise
    except Exception as exc:  # noqa: BLE001 - any library's error in a fit is the trial's, wrapped with its cause
        if fault_of(exc) is not None:
            raise
        # the parameters are the trial's own record; left out here, the same failure reads
        # the same in every trial (the no-release message counts them)
        raise SynthesisFailed(f"{name} could not be fitted or sampled with these parameters: "
                              f"{type(exc).__name__}: {exc}") from exc


@contextlib.contextmanager
def fitted(synth: Any, train: pd.DataFrame, *, seed: int, threads: int) -> Iterator[float]:
    """Fit ``synth`` on ``train`` reproducibly and yield the fit's seconds; sampling inside
    the block is seeded too (the synthesiser's own generator set to ``seed``). Python, NumPy
    and torch are seeded from ``seed``, torch limited to ``threads`` threads and joblib run
    sequentially (see :func:`synthesize`)."""
    with training(seed, threads=threads):
        start, restored = time.perf_counter(), restored_seconds()
        synth.fit({TABLE: train})
        # what a plain fit takes: the transforms restored count (tuner.synthesis._transforms)
        fit_seconds = time.perf_counter() - start + restored_seconds() - restored
        synth._set_random_state(seed)  # SDV's own hook for the sampling generator
        yield fit_seconds


@contextlib.contextmanager
def training(seed: int, *, threads: int) -> Iterator[None]:
    """Where every fit runs: Python, NumPy and torch seeded from ``seed``, torch limited to
    ``threads`` threads, joblib sequential (see :func:`synthesize`), and the neural families'
    data transforms fitted once per training table (:mod:`tuner.synthesis._transforms`: the
    records are a plain fit's)."""
    with seeded(seed, threads=threads), joblib.parallel_config(backend="sequential"), \
            remembered():
        yield
