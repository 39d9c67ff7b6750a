"""MkDocs hook: Sphinx cross-reference roles in docstrings become links to the API pages.

The docstrings of ``risk`` and ``tuner`` name other objects the Sphinx way
(``:func:`membership_disclosure```); mkdocstrings renders the backquoted name as code and leaves
the role's text in front of it (":func:membership_disclosure"). This hook turns each role into a
cross-reference that mkdocs-autorefs resolves once every page is rendered: a link to where the
object is documented on the page (as written, under the page's package, ``risk`` or ``tuner``, or
under one of its modules: ``tune`` is ``tuner.api.tune``), else to the qualified name wherever
another page documents it; an object no page documents (a private helper, a constant) stays
code, without the role's text.
"""

from __future__ import annotations

import html
import re
from typing import Any

ROLE = re.compile(
    r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj):<code>(?P<name>[^<]+)</code>")
PACKAGES = ("risk", "tuner")


def _package(page: Any) -> str:
    """The package whose docstrings the page renders (``tuner`` for api-tuner.md)."""
    return "tuner" if "tuner" in str(page.file.src_uri) else "risk"


def _reference(match: re.Match[str], package: str, documented: set[str]) -> str:
    shown = match["name"]
    name = html.unescape(shown).lstrip("~").removesuffix("()")
    qualified = name if name.startswith(tuple(f"{p}." for p in PACKAGES)) else f"{package}.{name}"
    # documented on this page: as written, qualified, or under a module (tuner.api.tune for tune)
    found = sorted((i for i in documented if i in (name, qualified) or i.endswith(f".{name}")),
                   key=len)
    return (f'<autoref identifier="{html.escape(found[0] if found else qualified)}" optional>'
            f"<code>{shown}</code></autoref>")


def on_page_content(output: str, page: Any, **kwargs: Any) -> str:
    """The page's HTML with every role a cross-reference (resolved later by autorefs)."""
    package = _package(page)
    documented = set(re.findall(r'id="((?:risk|tuner)\.[\w.]+)"', output))
    return ROLE.sub(lambda m: _reference(m, package, documented), output)
