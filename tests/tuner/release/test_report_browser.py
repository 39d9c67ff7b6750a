"""The HTML report as a reader sees it: a real release's ``report.html`` opened in headless
Chromium at a laptop's and a narrow window's width, every figure loaded and no table wider than
the page, and a screenshot taken (issue 47 item 5). A page made wrong on purpose (a missing
image, a table too wide) is caught by the same look, so the look can fail.

Chromium is Debian's package (``.ci/run`` installs it and sets RISK_TUNER_REQUIRE_BROWSER=1, so
that in CI its absence fails rather than skips)."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import tuner
from tests.tuner.conftest import write_config

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("RISK_TUNER_REQUIRE_BROWSER") != "1":
    pytest.skip("headless Chromium is not installed (apt-get install chromium)",
                allow_module_level=True)

# what the page reports of itself once loaded: appended to a copy, never to the release
PROBE = """<script>
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth;
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    width, scroll: document.documentElement.scrollWidth,
    images: [...document.images].map(i => ({alt: i.alt, loaded: i.complete && i.naturalWidth > 0})),
    tables: [...document.querySelectorAll("table")].map((t, k) => ({
      k, right: Math.ceil(t.getBoundingClientRect().right), scroll: t.scrollWidth,
      client: t.clientWidth}))});
  document.body.appendChild(out);
});
</script>"""
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def _chromium(page: Path, tmp: Path, width: int, *extra: str) -> str:
    assert CHROMIUM is not None, "RISK_TUNER_REQUIRE_BROWSER=1 but no chromium on PATH"
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}",
                           f"--window-size={width},1200", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def look(page: Path, tmp: Path, width: int) -> dict[str, Any]:
    """What the page says of itself in a window ``width`` pixels wide, and what is wrong."""
    probed = tmp / f"probed-{page.name}"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = _chromium(probed, tmp, width, "--virtual-time-budget=5000", "--dump-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S)
    assert found, "the page never finished loading: " + dom[-500:]
    seen = json.loads(html.unescape(found.group(1)))
    seen["missing images"] = [i["alt"] for i in seen["images"] if not i["loaded"]]
    seen["too wide"] = [t["k"] for t in seen["tables"]
                        if t["right"] > seen["width"] or t["scroll"] > t["client"]]
    return seen


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    study = tuner.tune(write_config(folder, synthesizers=("cart",), n_trials=2), progress=False)
    assert study.release_folder is not None
    return study.release_folder


@pytest.mark.parametrize("width", [1280, 700])
def test_a_real_report_shows_every_figure_and_no_table_wider_than_the_page(release, tmp_path,
                                                                            width):
    seen = look(release / "report.html", tmp_path, width)
    assert len(seen["images"]) >= 4 and len(seen["tables"]) >= 4, seen
    assert seen["missing images"] == [], seen
    assert seen["too wide"] == [] and seen["scroll"] <= seen["width"], seen
    shot = tmp_path / "report.png"
    _chromium(release / "report.html", tmp_path, width, f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_the_look_catches_a_missing_image_and_a_table_too_wide(tmp_path):
    wide = "x" * 400  # one word no table can wrap
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body style='max-width:600px'>"
                    "<img alt='gone.png' src='gone.png'>"
                    f"<table><tr><td style='white-space:nowrap'>{wide}</td></tr></table>"
                    "<table><tr><td>fits</td></tr></table></body></html>")
    seen = look(page, tmp_path, 700)
    assert seen["missing images"] == ["gone.png"] and seen["too wide"] == [0], seen
