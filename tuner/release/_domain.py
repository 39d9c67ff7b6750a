"""What the release's domain came from, and what a DP family's epsilon covers as released.

The manifest's ``domain`` entry (:func:`record`) and the report's section on it
(:func:`blocks`): the codebook's file and each column's kind, the columns whose domain was
read from the data, and for a differentially private family (MST, AIM) whether the release
is DP as released (:func:`tuner.synthesis.dp_as_released`) and what its guarantee covers:
one run of the mechanism on the training records. What it does not cover is said plainly:
the choice of the released trial among the study's trials and of its parameters, made on
measures of the confidential holdout (a private choice costs privacy: Papernot & Steinke,
"Hyperparameter tuning with Renyi differential privacy", ICLR 2022; Annamalai, Ganev & De
Cristofaro, USENIX Security 2024, on the metadata and pre-processing that void a DP
generator's guarantee in practice).
"""

from __future__ import annotations

from typing import Any

from tuner.search import Context
from tuner.synthesis import SYNTHESIZERS, dp_as_released

COVERS = ("(epsilon = {eps:g}, delta = {delta:g})-differential privacy (neighbours: add or "
          "remove one record) covers one "
          "run of {family} on the training records, over a domain from the codebook "
          "({source}: no category, range or share of missing values read from the data, and "
          "no filter after the mechanism). Not covered: the number of released records (the "
          "training records' count), and the choice of this trial and its parameters among "
          "the study's trials, made on measures of the confidential holdout: that selection "
          "is not private (Papernot & Steinke, ICLR 2022, give what a private one costs).")
NOT_DP = ("NOT differentially private as released: the domain of {columns} was read from the "
          "training data ([data] dp_domain = \"data\"), so each category present, each range "
          "and the share of missing values tell what they are, and the gate's removal of "
          "copies reads the training data too. Give those columns in [data] codebook for a "
          "release that is DP as released.")


def record(ctx: Context, family: str, params: dict[str, Any]) -> dict[str, Any]:
    """The manifest's ``domain`` entry (module docstring; column names and kinds only)."""
    book = ctx.split.domain  # None in partial synthesis
    train = ctx.split.train
    read = book.uncovered(train) if book else list(map(str, train.columns))
    out: dict[str, Any] = {"codebook": book.record() if book else None, "read_from_data": read}
    if SYNTHESIZERS[family].private:
        private = dp_as_released(family, book, train)
        out["dp"] = {"as_released": private, "covers": COVERS.format(
            eps=float(params.get("epsilon", 0)), delta=float(params.get("delta", 0)),
            family=family, source=book.source if book else "") if private else
            NOT_DP.format(columns=read)}
    return out


def blocks(domain: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The report's section on the domain (kinds of block as :mod:`tuner.release._report`)."""
    if not domain:
        return []
    book = domain.get("codebook")
    read = domain.get("read_from_data") or []
    said = (f"From the codebook {book['source']}: {len(book['columns'])} column(s) "
            f"({', '.join(f'{c} ({k})' for c, k in book['columns'].items())}); value "
            "protection leaves them alone (their domain is public)." if book else
            "No codebook ([data] codebook): every column's categories and range come from the "
            "data, as value protection leaves them.")
    if read and book:
        said += f" Read from the data: {', '.join(read)}."
    out: list[tuple[str, Any]] = [("h2", "Domain: what is public"), ("p", said)]
    if "dp" in domain:
        out.append(("p", ("**DP as released.** " if domain["dp"]["as_released"] else "**")
                    + domain["dp"]["covers"] + ("" if domain["dp"]["as_released"] else "**")))
    return out
