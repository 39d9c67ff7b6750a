"""docs/config.md is the config reference generated from the code, and says every key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tuner import measures
from tuner.config import SECTIONS, reference

ROOT = Path(__file__).resolve().parents[3]


def test_the_committed_page_is_what_the_code_generates():
    page = (ROOT / "docs" / "config.md").read_text()
    assert page == reference(), ("docs/config.md is stale: python -m tuner.config "
                                 "> docs/config.md")


def test_every_key_has_its_line_and_its_help():
    page = reference()
    for section, cls in SECTIONS:
        assert f"## [{section}]" in page
        for f in dataclasses.fields(cls):
            assert f.metadata.get("help"), (section, f.name)  # no key without a word of help
            assert f"| `{f.name}` |" in page, (section, f.name)
    for key, opt in measures.options().items():
        assert opt.help and f"| `{key}` |" in page, key
