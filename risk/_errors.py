"""The error every risk measure raises for a malformed input (``risk.RiskInputError``)."""

from __future__ import annotations


class RiskInputError(ValueError):
    """Raised when an input to a risk measure is malformed."""
