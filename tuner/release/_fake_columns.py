"""The release's fake columns and its SDV metadata (issue 33, item 3).

The columns SDV metadata declares PII or keys left the table before the split
(:func:`tuner.search._context.prepare`): no trial, measure or audit saw them, and the trial's
data, re-created and checked (:mod:`tuner.release._recreate`), are the data without them. Here
they are filled, one fake value per released record (:func:`tuner.data.fill`, seeded from the
study's seed and secret at ``SeedPath.FAKE``, so a release made again is the same file), and put
back at their place in the input's column order. ``metadata.json`` describes the released table
in SDV's single-table form with names, sdtypes and datetime formats only: nothing of the data's
values, nor of the user's metadata file beyond those (its ``regex_format`` is not copied).
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from tuner._common.seeding import SeedPath
from tuner.data import REDRAWS, STATISTICAL, fill, sdtype
from tuner.search import Context

NOTE = ("fake values, drawn without looking at the real ones (but their missing share), one per "
        "released record; those with many possible values were checked: none equals a real "
        "value of the column. Names and places are drawn from Faker's lists: one may equal a "
        "real name by chance, unlinked to that person")


def fake_columns(ctx: Context, synthetic: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The fake columns for ``synthetic`` (one value per record) and what the manifest says of
    them; empty without SDV metadata or fake columns."""
    declared = ctx.declared
    if declared is None or not declared.fakes:
        return pd.DataFrame(index=synthetic.index), {}
    n = len(synthetic)
    train = ctx.pii.iloc[ctx.split.train_positions]
    out, said = {}, {}
    for col, fake in declared.fakes.items():
        values, redrawn = fill(fake, ctx.pii[col], n,
                               seed_of=functools.partial(ctx.derive, SeedPath.FAKE,
                                                         ctx.order.index(col)),
                               missing_share=float(train[col].isna().mean()) if len(train) else 0)
        out[col] = values.set_axis(synthetic.index)
        numeric = pd.api.types.is_numeric_dtype(ctx.pii[col])
        said[col] = {"sdtype": fake.sdtype, "made_with": fake.how(numeric=numeric),
                     "checked_against_real": fake.checked, "unique": fake.unique,
                     "values_drawn_again": redrawn}
    return pd.DataFrame(out, index=synthetic.index), {
        "columns": said, "note": NOTE, "redraws": f"a fake equal to a real value is drawn "
        f"again, up to {REDRAWS} times, before the release fails"}


def with_fakes(ctx: Context, synthetic: pd.DataFrame, fakes: pd.DataFrame) -> pd.DataFrame:
    """``synthetic`` with the ``fakes`` columns, in the input's column order."""
    if fakes.shape[1] == 0:
        return synthetic
    joined = pd.concat([synthetic, fakes.set_axis(synthetic.index)], axis=1)
    return joined[[c for c in ctx.order if c in joined.columns]]


def release_metadata(ctx: Context, released: pd.DataFrame) -> dict[str, Any]:
    """SDV single-table metadata of ``released``: each column's name, sdtype (the user's
    metadata's where it gives one, else the tuner's, :func:`tuner.data.sdtype`) and a date
    column's format; ``"pii": true`` on fake Faker columns. No value, range or regex."""
    declared = ctx.declared
    sdtypes = declared.sdtypes if declared else {}
    fakes = declared.fakes if declared else {}
    columns: dict[str, dict[str, Any]] = {}
    for col in map(str, released.columns):
        kind = sdtypes.get(col) or sdtype(released[col])
        if col in ctx.date_formats:
            columns[col] = {"sdtype": "datetime", "datetime_format": ctx.date_formats[col]}
        elif col in fakes:  # a key of a statistical sdtype is made as an id
            columns[col] = {"sdtype": "id"} if kind in (*STATISTICAL, "id") else \
                {"sdtype": kind, "pii": True}
        else:  # a Faker sdtype declared "pii": false is synthesised as a category; an ordinal
            # one's order would be values: said as a category
            columns[col] = {"sdtype": kind if kind in STATISTICAL and kind != "ordinal"
                            else "categorical"}
    return {"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "columns": columns}
