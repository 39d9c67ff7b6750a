"""A room's exports, imported on first use (PEP 562), so that importing a room costs nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` for ``exports``: name -> "module" (the name in
    that module) or "module:attr" (another name there).

    Nothing is cached: each ``room.name`` reads the module's attribute again, so that a name
    patched in its module (as tests/tuner/search/test_distributed.py's worker patches
    ``_evaluation.evaluate``, which the objective calls as ``scoring.evaluate``) is patched
    through the room too."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            module, _, attr = exports[name].partition(":")
            return getattr(importlib.import_module(f"{package}.{module}"), attr or name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
