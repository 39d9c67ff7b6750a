"""Progress of long work: a bar on a terminal, a plain line every tenth where the output is not
one (a log file, a batch job), as pip does; nothing when progress is switched off."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm

STEP = 0.1  # a line per tenth of the work where there is no terminal


@contextmanager
def shown(total: int, *, what: str, unit: str, enabled: bool
          ) -> Iterator[Callable[[int, int], None]]:
    """``progress(done, total)`` for ``total`` pieces of work: a tqdm bar when stderr is a
    terminal, else a line ``{what}: done of total {unit}s (p %), s elapsed`` each time another
    tenth is done (and at the end); nothing when ``enabled`` is false (``--no-progress``)."""
    if not enabled:
        yield lambda done, total: None
        return
    if sys.stderr.isatty():
        bar = tqdm(total=total, desc=what, unit=unit, dynamic_ncols=True)

        def update(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        try:
            yield update
        finally:
            bar.close()
        return
    start, said = time.perf_counter(), [0]

    def line(done: int, total: int) -> None:
        step = int(done / max(total, 1) / STEP + 1e-9) if done < total else int(1 / STEP)
        if done and step > said[0]:
            said[0] = step
            print(f"{what}: {done:,} of {total:,} {unit}s ({done / max(total, 1):.0%}), "
                  f"{time.perf_counter() - start:.0f} s", flush=True)

    yield line
