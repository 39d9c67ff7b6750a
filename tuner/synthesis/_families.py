"""The synthesiser registry: one :class:`SynthesizerSpec` per family, search spaces as data.

Adding a synthesiser is one entry in :data:`SYNTHESIZERS`: how to load its class (lazily, so that
reading a config does not import SDV or torch), its search space (parameter -> Optuna
distribution, design §8) and what it takes (threads, a device, epochs, a seed argument).

A config may *narrow* a space (``[space.ctgan] epochs = [5, 20]`` or a subset of choices), never
widen it (:func:`tuner.synthesis._spaces.narrow`). Values Optuna cannot store (tuples of layer
widths) are
choices of strings decoded by :func:`tuner.synthesis._spaces.decode`. CTGAN asserts
``batch_size % pac == 0``: every batch size offered is divisible by every pac offered, so no trial
can hit that assertion.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import MappingProxyType

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from tuner.errors import InputError


@dataclasses.dataclass(frozen=True)
class SynthesizerSpec:
    """What the tuner needs to know of a synthesiser family.

    ``load`` returns the class (an SDV single-table synthesiser taking ``metadata`` first);
    ``space`` maps each tuned constructor argument to its Optuna distribution. ``takes_threads``:
    the fit runs torch and is reproducible only at a fixed torch thread count (recorded with the
    trial); ``takes_device``: it accepts ``enable_gpu``; ``has_epochs``: it trains in epochs;
    ``seed_argument``: the constructor argument that takes the trial's seed, if any (SDV's own
    synthesisers are seeded through the global generators instead, see
    :mod:`tuner._common.seeding`).
    ``extra``: the optional dependency group (``pyproject.toml``) it needs beyond ``tuner``, and
    ``modules`` the modules that group provides; :meth:`missing` says what to install.
    ``conditioning``: how partial synthesis (:mod:`tuner.synthesis._partial`) draws the synthesised
    columns given the kept ones: ``"native"``, the class's ``sample_remaining_columns``
    conditions exactly; ``"reject"``, the model samples whole records only, and a draw is
    kept where its kept values equal the record's. ``keep_argument``: the constructor argument
    that is told the kept columns before the fit (CART's ``keep``), if any. ``private``: a
    differentially private mechanism whose ``seed_argument`` draws its noise; it takes the
    study's 128-bit noise key there when the study has a secret
    (:func:`tuner._common.seeding.noise_key`: DP assumes coins nobody else can replay).
    ``privacy``: the tuned argument that trades utility for privacy and which way is safer
    (``+1``: larger, as CART's ``min_samples_leaf``, synthpop's ``minbucket``; ``-1``: smaller,
    as the epochs a neural network has to memorise its records in, or a DP epsilon); after the
    membership audit refuses a trial, another of its family is audited only when it is safer
    by ``audit.safer_by`` on it (:mod:`tuner.release._candidates`). ``None``: no argument is
    known to be safer.
    """

    name: str
    summary: str
    load: Callable[[], type]
    space: Mapping[str, BaseDistribution]
    takes_threads: bool = False
    takes_device: bool = False
    has_epochs: bool = False
    seed_argument: str | None = None
    extra: str | None = None
    modules: tuple[str, ...] = ()
    conditioning: str = "reject"
    keep_argument: str | None = None
    private: bool = False
    privacy: tuple[str, int] | None = None

    def missing(self) -> str | None:
        """Why this family cannot run here (its extra is not installed), or None."""
        import importlib.util

        absent = [m for m in self.modules if importlib.util.find_spec(m) is None]
        if not absent:
            return None
        return (f"synthesiser {self.name!r} needs the `{self.extra}` extra (module(s) "
                f"{absent} not installed): python -m pip install -e \".[{self.extra}]\"")


def _sdv(name: str) -> Callable[[], type]:
    def load() -> type:
        import sdv.single_table

        cls: type = getattr(sdv.single_table, name)
        return cls

    return load


def _cart() -> type:
    from tuner.synthesis._cart import CARTSynthesizer

    return CARTSynthesizer


def _dp(name: str) -> Callable[[], type]:
    def load() -> type:
        from tuner.synthesis import _dp as dp

        dp.require()  # a clear ImportError naming the `dp` extra, before any fit
        cls: type = getattr(dp, name)
        return cls

    return load


_LAYERS = ("64x64", "128x128", "256x256")
_PACS = (1, 2, 5, 10)
_BATCHES = (100, 200, 500)  # each divisible by every pac above
_EPOCHS = IntDistribution(1, 300, log=True)
# differentially private families (tuner/synthesis/_dp.py): epsilon tuned, delta fixed (recorded
# with the
# trial's parameters, so in the release's manifest); numeric columns cut into `bins` bins
_EPSILON = FloatDistribution(0.1, 10.0, log=True)
_DELTA = CategoricalDistribution((1e-5,))
_BINS = CategoricalDistribution((8, 16, 32))

_SPECS = (
    SynthesizerSpec(
        "gaussian_copula", "SDV's Gaussian copula", _sdv("GaussianCopulaSynthesizer"),
        # gaussian_kde is orders of magnitude slower on tens of thousands of rows: left out
        {"default_distribution": CategoricalDistribution(("norm", "beta", "truncnorm",
                                                          "uniform"))},
        conditioning="native",  # the copula's conditional normal
    ),
    SynthesizerSpec(
        "cart", "sequential CART, as synthpop's syn(method = 'cart')", _cart,
        {
            "min_samples_leaf": IntDistribution(1, 200, log=True),
            "max_depth": CategoricalDistribution((0, 4, 8, 12, 20)),  # 0 = unlimited
            "visit_order": CategoricalDistribution(("original", "reversed", "random")),
            "smoothing": CategoricalDistribution((False, True)),
        },
        seed_argument="random_state", conditioning="native", keep_argument="keep",
        privacy=("min_samples_leaf", +1),
    ),
    SynthesizerSpec(
        "ctgan", "SDV's CTGAN (conditional GAN)", _sdv("CTGANSynthesizer"),
        {
            "epochs": _EPOCHS,
            "batch_size": CategoricalDistribution(_BATCHES),
            "pac": CategoricalDistribution(_PACS),
            "generator_dim": CategoricalDistribution(_LAYERS),
            "discriminator_dim": CategoricalDistribution(_LAYERS),
            "generator_lr": FloatDistribution(5e-5, 1e-3, log=True),
            "discriminator_lr": FloatDistribution(5e-5, 1e-3, log=True),
            "embedding_dim": CategoricalDistribution((64, 128)),
        },
        takes_threads=True, takes_device=True, has_epochs=True, privacy=("epochs", -1),
    ),
    SynthesizerSpec(
        "copulagan", "SDV's CopulaGAN (CTGAN on copula-transformed columns)",
        _sdv("CopulaGANSynthesizer"),
        {
            "epochs": _EPOCHS,
            "batch_size": CategoricalDistribution(_BATCHES),
            "pac": CategoricalDistribution(_PACS),
            "generator_dim": CategoricalDistribution(_LAYERS),
            "discriminator_dim": CategoricalDistribution(_LAYERS),
            "default_distribution": CategoricalDistribution(("norm", "beta", "truncnorm")),
        },
        takes_threads=True, takes_device=True, has_epochs=True, privacy=("epochs", -1),
    ),
    SynthesizerSpec(
        "tvae", "SDV's TVAE (variational autoencoder)", _sdv("TVAESynthesizer"),
        {
            "epochs": _EPOCHS,
            "batch_size": CategoricalDistribution(_BATCHES),
            "compress_dims": CategoricalDistribution(_LAYERS),
            "decompress_dims": CategoricalDistribution(_LAYERS),
            "embedding_dim": CategoricalDistribution((64, 128)),
            "l2scale": FloatDistribution(1e-6, 1e-3, log=True),
            "loss_factor": FloatDistribution(1.0, 4.0),
        },
        takes_threads=True, takes_device=True, has_epochs=True, privacy=("epochs", -1),
    ),
    SynthesizerSpec(
        "mst", "MST, (epsilon, delta)-DP marginals on a spanning tree (McKenna et al. 2021)",
        _dp("MSTSynthesizer"), {"epsilon": _EPSILON, "delta": _DELTA, "bins": _BINS},
        seed_argument="random_state", extra="dp", modules=("mbi", "jax"), private=True,
        privacy=("epsilon", -1),
    ),
    SynthesizerSpec(
        "aim", "AIM, (epsilon, delta)-DP adaptive marginals (McKenna et al. 2022)",
        _dp("AIMSynthesizer"), {"epsilon": _EPSILON, "delta": _DELTA, "bins": _BINS},
        seed_argument="random_state", extra="dp", modules=("mbi", "jax"), private=True,
        privacy=("epsilon", -1),
    ),
)

_REGISTRY: dict[str, SynthesizerSpec] = {s.name: s for s in _SPECS}
SYNTHESIZERS: Mapping[str, SynthesizerSpec] = MappingProxyType(_REGISTRY)


def register(spec: SynthesizerSpec) -> None:
    """Add a family of your own (its class an SDV single-table synthesiser) for this process:
    configs may then name it, and trials, releases and the release audit fit it. Processes the
    tuner starts itself (``workers > 1``, ``[audit] jobs > 1``) import the registry anew, so
    register it in a module they import too, or keep those at 1."""
    if spec.name in _REGISTRY:
        raise InputError(f"a synthesiser family named {spec.name!r} is registered already")
    _REGISTRY[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a family added by :func:`register` (the built-in ones stay)."""
    if name in {s.name for s in _SPECS}:
        raise InputError(f"{name!r} is a built-in synthesiser family")
    _REGISTRY.pop(name, None)
