"""MkDocs hook: Sphinx cross-reference roles in docstrings shown as code.

The docstrings of ``risk`` and ``tuner`` name other objects the Sphinx way
(``:func:`membership_disclosure```); mkdocstrings renders the backquoted name as code and leaves
the role's text in front of it (":func:membership_disclosure"). This hook drops the role text
from the rendered pages, leaving the name as code.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj):(?=<code>)")


def on_post_page(output: str, **kwargs: Any) -> str:
    """The page's HTML without the role prefixes before ``<code>`` names."""
    return ROLE.sub("", output)
