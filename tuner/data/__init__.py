"""The custodian's table: reading it, its dates, its direct identifiers, the study's split.

Read a CSV, Parquet or built-in table (``_read``); parse date columns as datetimes and write
them back in the input's format (``_dates``); drop the declared direct identifiers and refuse
undeclared ones, all named in one message (``_identifiers``); read SDV metadata and say which
columns are released as fake values (``_metadata``), and draw those values (``_fakes``); split
the records once, seeded,
into training, holdout and the sealed audit set; build SDV metadata that holds column names
and sdtypes only, never a value of the data.
top- and bottom-code extremes and merge rare categories before any fit (``_protect``);
read the codebook, the public domain of each column (``_codebook``).
Modules: ``_read``, ``_codebook``, ``_dates``, ``_identifiers`` (by name and uniqueness; by
content in ``_content``), ``_metadata``, ``_fakes``, ``_protect``.
"""

from __future__ import annotations

from tuner.data._codebook import Codebook, Domain, read_codebook
from tuner.data._content import content_reason
from tuner.data._dates import ambiguous_dates, detect_format, formatted, read_dates
from tuner.data._fakes import REDRAWS, fill, key_problems
from tuner.data._identifiers import (
    CHOICES,
    drop_identifiers,
    findings,
    name_reason,
    quasi_warnings,
    refusal,
)
from tuner.data._metadata import (
    STATISTICAL,
    Declared,
    conflicts,
    follow,
    merged_formats,
    missing_columns,
    read_metadata,
)
from tuner.data._protect import PROTECTED, Protection, protect
from tuner.data._read import (
    BUILTIN,
    CATEGORY_LIMIT,
    DEMO_TABLE,
    TABLE,
    Split,
    fingerprint,
    frame_problems,
    metadata_for,
    read_builtin,
    read_table,
    sdtype,
    split,
)

__all__ = [
    "BUILTIN", "CATEGORY_LIMIT", "CHOICES", "Codebook", "Domain", "read_codebook",
    "DEMO_TABLE", "PROTECTED", "REDRAWS", "STATISTICAL",
    "TABLE", "Declared", "Protection", "Split", "conflicts", "fill", "follow", "merged_formats",
    "key_problems", "missing_columns", "protect",
    "read_metadata", "content_reason", "ambiguous_dates",
    "detect_format", "drop_identifiers", "findings", "fingerprint", "formatted", "frame_problems",
    "metadata_for", "name_reason", "quasi_warnings", "read_builtin", "read_dates", "read_table",
    "refusal", "sdtype", "split",
]
