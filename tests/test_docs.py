"""The documentation site builds with every warning an error, and the README's links hold."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strict(tmp_path):
    # mkdocs' strict mode: a broken link, anchor or page left out of the nav, or a docstring
    # griffe cannot parse, fails the build. Not --quiet: it silences the warnings strict mode
    # counts, and the build passed with 55 of them
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert api.count("membership_disclosure") > 2  # the API page rendered the docstrings
    # every public name of risk has its entry (cap and disclosure are modules and functions)
    import risk
    missing = [n for n in risk.__all__ if n.islower() and f'id="risk.{n}"' not in api
               and f'id="risk.{n}.{n}"' not in api]
    assert not missing, missing
    # no Sphinx role is left as text on any page; the docstrings' roles became links
    role = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj):")
    pages = {p.relative_to(tmp_path): role.findall(p.read_text())
             for p in (tmp_path / "site").rglob("*.html")}
    assert not {p: found for p, found in pages.items() if found}
    tuner_api = (tmp_path / "site" / "api-tuner" / "index.html").read_text()
    assert api.count("autorefs-internal") > 20 and tuner_api.count("autorefs-internal") > 3


def test_every_link_of_the_readme_is_a_file_of_the_repository():
    text = (ROOT / "README.md").read_text()
    links = [m for m in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
             if not m.startswith(("http://", "https://"))]
    assert len(links) > 10
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing


def test_the_readme_is_a_front_page():
    # what it is, the two commands, the demo's output, one config, one risk example, links
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 170, len(lines)
    for needed in ("risk-tuner demo", "python -m pytest", "[data]", "import risk",
                   "docs/usage.md", "docs/config.md", "docs/audit.md"):
        assert any(needed in line for line in lines), needed


def test_the_readmes_config_parses_with_no_old_key():
    import re
    import tomllib
    import warnings

    from tuner import config

    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert blocks
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a renamed key would warn
        for block in blocks:
            config.parse(tomllib.loads(block), base=ROOT)


def test_every_file_path_the_docs_name_exists():
    # a module moved between rooms leaves its old path in prose: every `tuner/...py`,
    # `risk/...py`, `experiments/...` or `tests/...py` path in README.md and docs/ is a file
    pattern = re.compile(r"`((?:tuner|risk|experiments|tests)/[\w./-]+\.(?:py|toml|json|md|csv))`")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    stale = sorted({(p.name, m) for p in pages for m in pattern.findall(p.read_text())
                    if not (ROOT / m).exists() and "NAME" not in m})  # NAME: a pattern
    assert not stale, stale
