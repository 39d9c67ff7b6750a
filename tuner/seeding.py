"""One seed flowing through everything, and the one place that touches global random state.

SDV's fit draws from NumPy's and torch's global generators, and CTGAN/TVAE are reproducible
only with Python, NumPy and torch seeded *and* the same torch thread count. ``seeded`` sets
all of them for the duration of a block and restores the previous states afterwards.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np


def derive(seed: int, *path: int) -> int:
    """A 32-bit seed for the component at ``path`` (e.g. trial number) of the study ``seed``."""
    return int(np.random.SeedSequence([seed, *path]).generate_state(1, dtype=np.uint32)[0])


@contextlib.contextmanager
def seeded(seed: int, *, threads: int | None = None) -> Iterator[None]:
    """Seed Python, NumPy and torch (and fix torch's thread count) inside the block."""
    import torch

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
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        torch.random.set_rng_state(torch_state)
        torch.set_num_threads(old_threads)
