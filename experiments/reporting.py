"""Small helpers the experiments share: Markdown tables, resumable CSV results, timing."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats


def timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    """Result of ``fn`` and the median wall time of ``repeats`` calls (the benchmarks' rule)."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def markdown_table(frame: pd.DataFrame, *, floatfmt: str = ".3f") -> str:
    """``frame`` as a GitHub Markdown table (pandas' ``to_markdown``), floats formatted with
    ``floatfmt`` and missing values left blank."""
    shown = frame.astype(object).where(frame.notna(), None)
    return shown.to_markdown(index=False, floatfmt=floatfmt, missingval="", tablefmt="github")


def write_section(path: Path, name: str, text: str) -> None:
    """Put ``text`` in the block of ``path`` marked as ``name``, leaving other blocks alone.

    Several scripts share one results file (``experiments/benchmarks/RESULTS.md``); each owns
    a block between ``<!-- begin NAME -->`` and ``<!-- end NAME -->``, replaced when the script
    runs again and appended when new.
    """
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    block = f"{begin}\n{text.strip()}\n{end}\n"
    old = path.read_text() if path.exists() else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        new = head + block + ("\n" + tail if tail else "")  # one blank line between blocks
    else:
        new = old + ("\n" if old and not old.endswith("\n\n") else "") + block
    path.write_text(new)


def append_rows(path: Path, rows: Iterable[dict[str, object]]) -> None:
    """Append ``rows`` to the CSV at ``path`` (header written when the file is new), their
    columns in the order of the file's header: a value is matched by name, never by position
    (a column the rows lack is left empty). A column the header lacks is refused: it would
    land under another."""
    frame = pd.DataFrame(list(rows))
    if frame.empty:
        return
    if path.exists():
        header = list(pd.read_csv(path, nrows=0).columns)
        extra = sorted(set(frame.columns) - set(header))
        if extra:
            raise ValueError(f"{path}: the rows have column(s) {extra} its header lacks; "
                             "start a new file")
        frame = frame.reindex(columns=header)
    frame.to_csv(path, mode="a", header=not path.exists(), index=False)


def share_with_interval(flags: pd.Series) -> str:
    """``"k of n [a, b]"``: how many of ``flags`` hold and the exact (Clopper & Pearson 1934)
    95 % interval of that share."""
    k, n = int(flags.sum()), int(flags.size)
    if n == 0:
        return "0 of 0"
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k} of {n} [{ci.low:.2f}, {ci.high:.2f}]"
