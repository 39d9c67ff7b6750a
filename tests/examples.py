"""How many examples a property test draws: every one asked for in CI, a fifth before a commit.

The hypothesis tests compare each vectorised computation with a slow, obviously correct version
on many random inputs; that is most of the quick lane's time (``pytest -m "not slow"``). Under
``.ci/run`` (``RISK_TUNER_REQUIRE_DATA=1``), or with ``RISK_TUNER_EXAMPLES=full``, each test
draws the number it asks for; otherwise a fifth of it, at least 10.
"""

from __future__ import annotations

import os

from tests.data import REQUIRE

FULL = os.environ.get(REQUIRE) == "1" or os.environ.get("RISK_TUNER_EXAMPLES") == "full"


def examples(n: int) -> int:
    """``max_examples`` for a test that asks for ``n`` (module docstring)."""
    return n if FULL else max(10, n // 5)
