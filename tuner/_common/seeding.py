"""One seed flowing through everything, and the one place that touches global random state.

SDV's fit draws from NumPy's and torch's global generators, and CTGAN/TVAE are reproducible
only with Python, NumPy and torch seeded *and* the same torch thread count. ``seeded`` sets
all of them for the duration of a block and restores the previous states afterwards.

It also runs NumPy's and SciPy's BLAS on one thread: OpenBLAS splits its sums by thread count,
so the same fit gave other last digits with 2 threads than with 1 (a Gaussian copula with
truncated normal marginals: 338 of 3,183 values of a 7-decimal column differed by one unit),
and the release, re-created on a machine with another core count (or under a Dask worker's
``OPENBLAS_NUM_THREADS=1``), was refused as "not the data it scored".
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import random
import secrets
from collections.abc import Iterator

import numpy as np

SECRET_BITS = 128
"""Bits of OS randomness in a study's secret (design §9.2): beyond any exhaustive search."""


@enum.unique
class SeedPath(enum.IntEnum):
    """The study's seed paths, in one table: the first component of :func:`derive`'s path,
    naming what a seed is for; every component of the tuner asks for its seed by one of these
    names (the numbers are those studies always used, so a public seed still makes the same
    split, trials and release)."""

    SPLIT = 0  # the split (:func:`split_seed`: with a secret, a 128-bit key of its own)
    SAMPLER = 1  # TPE's proposals (the worker slot after it)
    TRIAL = 2  # each trial's fit and a DP mechanism's noise (the trial's number after it)
    AUDIT = 13  # the release audit of a trial (its number after it; design §13)
    PLOT = 17  # the report's scatter-plot jitter (the plot's index after it)
    FAKE = 19  # fake values in place of direct identifiers (column, draw after it)


def new_secret() -> int:
    """A study's secret: :data:`SECRET_BITS` bits from the operating system's CSPRNG."""
    return secrets.randbits(SECRET_BITS)


def _keyed(secret: int, seed: int, path: tuple[int, ...], nbytes: int) -> int:
    """BLAKE2b keyed with ``secret`` (a pseudorandom function: without the key its outputs
    tell nothing of it, nor of each other) over the seed and the path."""
    message = b"".join(int(v).to_bytes(32, "big", signed=True) for v in (seed, *path))
    key = secret.to_bytes(SECRET_BITS // 8, "big")
    return int.from_bytes(hashlib.blake2b(message, key=key, digest_size=nbytes).digest(), "big")


def derive(seed: int, *path: int, secret: int | None = None) -> int:
    """A 32-bit seed for the component at ``path`` (e.g. trial number) of the study ``seed``.

    Without ``secret`` (a study with ``public_seed = true``, and studies made before secrets):
    NumPy's ``SeedSequence([seed, *path])``, so whoever knows the seed makes the same split
    and fits. With the study's ``secret``: keyed BLAKE2b, so nobody without the secret can
    rebuild the split, a fit or a mechanism's noise, whatever seed they guess (design §9.2).
    """
    if secret is None:
        return int(np.random.SeedSequence([seed, *path]).generate_state(1, dtype=np.uint32)[0])
    return _keyed(secret, seed, path, 4)


def split_seed(seed: int, secret: int | None = None) -> int:
    """The seed of the study's split: with a secret, a 128-bit key (a 32-bit seed could be
    found by trying all 2**32 splits against the release); without, the public 32-bit seed
    ``derive(seed, SeedPath.SPLIT)`` studies always used."""
    key = noise_key(seed, SeedPath.SPLIT, secret=secret)
    return derive(seed, SeedPath.SPLIT) if key is None else key


def noise_key(seed: int, *path: int, secret: int | None = None) -> int | None:
    """The 128-bit key of a differentially private mechanism's noise at ``path``, or None
    without a secret (the mechanism then draws from the 32-bit trial seed, as it always did).

    DP's guarantee assumes the intruder cannot regenerate the noise (Dwork & Roth 2014, §3:
    the mechanism's coins are private); a 32-bit seed can be searched exhaustively by anyone
    who can run the fit, a 128-bit key derived from the secret cannot."""
    return None if secret is None else _keyed(secret, seed, path, SECRET_BITS // 8)


@contextlib.contextmanager
def seeded(seed: int, *, threads: int | None = None) -> Iterator[None]:
    """Seed Python, NumPy and torch (and fix torch's thread count) inside the block; NumPy's
    and SciPy's BLAS run one thread there, whatever the machine (module docstring)."""
    import torch
    from threadpoolctl import threadpool_limits

    py_state = random.getstate()
    np_state = np.random.get_state()
    torch_state = torch.random.get_rng_state()
    old_threads = torch.get_num_threads()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        torch.random.set_rng_state(torch_state)
        torch.set_num_threads(old_threads)
