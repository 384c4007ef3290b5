"""The documentation site builds with ``mkdocs build --strict``, loads nothing remote, and renders in Chromium.

``--strict`` turns every warning the config asks for into a failure: a broken link or anchor,
or a page missing from the nav. The built site must work offline, so no page, stylesheet or
script may reach for a remote host, checked twice: in the files, and in Chromium's network
log while it renders the pages. MkDocs comes with the ``docs`` extra; without it these tests
skip unless ``CI`` is set (then they fail), as the browser tests do without Chromium.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import chromium, skip_or_fail

REPO = Path(__file__).resolve().parents[2]
REMOTE_HOSTS = ("fonts.googleapis", "fonts.gstatic", "cdn.jsdelivr", "unpkg.com")
REMOTE_REFERENCE = re.compile(r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)
CSS_REMOTE = re.compile(r"""(?:@import|url\()\s*["']?(?:https?:)?//""", re.I)
THEME_LAZY_LOADS = ("https://unpkg.com/resize-observer-polyfill", "https://unpkg.com/mermaid@")
"""What the Material theme's script fetches only on demand: a polyfill for browsers without ResizeObserver, and
mermaid for pages with a mermaid diagram. Neither happens here (no diagram is mermaid; Chromium has ResizeObserver),
and the network log below checks that nothing is fetched."""
PAGES_TO_OPEN = {"index.html": ("Home", "proofsmith"), "reference/cli.html": ("Commands and flags", "Command-line reference")}
"""Page -> (its title in the nav, its first heading)."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built once with ``mkdocs build --strict`` into a temporary folder."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        skip_or_fail("MkDocs and the Material theme are needed to build the documentation; install them with: "
                     "pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
                             "--site-dir", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return out


def test_strict_build_writes_every_page_and_the_generated_reference(site: Path) -> None:
    for page in ("index.html", "getting-started.html", "design.html", "reference/cli.html", "reference/config.html",
                 "reference/records.html", "results/index.html"):
        assert (site / page).is_file(), page
    assert any((site / "results" / "plots").glob("*.png")), "no plot was taken out of benchmarks/results/*.html"
    assert not (site / "hooks").exists(), "the build's own code was published"


def test_no_page_stylesheet_or_script_reaches_a_remote_host(site: Path) -> None:
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css", ".js"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(site)
        if path.suffix == ".html":
            assert not REMOTE_REFERENCE.search(text), f"{where} loads something from a remote host"
        if path.suffix == ".css":
            assert not CSS_REMOTE.search(text), f"{where} imports something from a remote host"
        if path.suffix == ".js":
            text = "".join(re.split("|".join(map(re.escape, THEME_LAZY_LOADS)), text))
        for host in REMOTE_HOSTS:
            assert host not in text, f"{where} names {host}"
    for page in site.rglob("*.html"):
        assert 'class="mermaid' not in page.read_text(encoding="utf-8"), f"{page}: a mermaid diagram makes the theme fetch mermaid"


class PrimaryNavigation(HTMLParser):
    """The text of the theme's primary navigation (``<nav class="md-nav md-nav--primary">``) in a page."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.found = False
        self.depth = 0
        self.parts: list[str] = []
        self.feed(dom)
        self.text = " ".join(" ".join(self.parts).split())

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "nav":
            return
        if self.depth:
            self.depth += 1
        elif "md-nav--primary" in (dict(attrs).get("class") or "").split():
            self.found, self.depth = True, 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.parts.append(data)


def page_requests(net_log: Path) -> list[str]:
    """The http(s) URLs the pages asked for, from Chromium's network log (the browser's own update and account
    checks carry no page origin as initiator, and are left out)."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [event["params"]["url"] for event in log["events"]
            if event["type"] == start_job and event.get("params", {}).get("url", "").startswith(("http:", "https:"))
            and event["params"].get("initiator") != "not an origin"]


@pytest.mark.parametrize(("page", "titles"), PAGES_TO_OPEN.items())
def test_chromium_renders_the_page_with_its_navigation(site: Path, tmp_path: Path, page: str, titles: tuple[str, str]) -> None:
    nav_title, heading = titles
    url = (site / page).as_uri()
    net_log = tmp_path / "netlog.json"
    dom = chromium("--dump-dom", "--virtual-time-budget=5000", f"--log-net-log={net_log}", url,
                   profile=tmp_path / "profile", purpose=f"the documentation site renders ({page})")
    navigation = PrimaryNavigation(dom)
    assert navigation.found, "the Material navigation is missing"
    for section in ("Getting started", "Guides", "Reference", "Results", "Design", "Commands and flags"):
        assert section in navigation.text, f"the navigation lacks {section!r}"
    assert re.search(rf"<title>{re.escape(nav_title)} - proofsmith</title>|<title>proofsmith</title>", dom)
    assert re.search(rf"<h1[^>]*>{re.escape(heading)}", dom), f"the page's heading {heading!r} is missing"
    assert 'class="md-search' in dom, "the theme's script did not build the page (no search widget)"
    assert page_requests(net_log) == [], "the page fetched something from the network"

    shot = tmp_path / "page.png"
    chromium(f"--screenshot={shot}", "--window-size=1280,900", url, profile=tmp_path / "profile",
             purpose=f"the documentation site renders ({page})")
    from PIL import Image

    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20, "the screenshot is nearly blank"
    # Kept for a person to look at: in $PYTEST_OUTPUT when set, else where pytest keeps this test's tmp_path.
    kept = Path(os.environ["PYTEST_OUTPUT"]) / f"site-{page.replace('/', '-')}.png" if os.environ.get("PYTEST_OUTPUT") else shot
    if kept != shot:
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, kept)
    print(f"screenshot of {page}: {kept}")
