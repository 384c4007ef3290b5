"""The plots of the benchmark reports, taken out of the committed HTML as PNG files for the results pages.

Contract: every ``<img alt='ALT' src='data:image/png;base64,...'>`` in
``benchmarks/results/*.html`` becomes ``results/plots/STEM-ALT.png`` (ALT in lower case, runs of
other characters as one hyphen). The reports are the source of truth (a rerun of a benchmark
rewrites them), so the site never holds a copy that can go stale.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from markdown_text import anchor

_IMAGE = re.compile(r"""<img\s+alt=(['"])(?P<alt>[^'"]*)\1\s+src=(['"])data:image/png;base64,(?P<data>[A-Za-z0-9+/=]+)\3""")
PLOTS_DIR = "results/plots"


def plots(results: Path) -> dict[str, bytes]:
    """Site path -> PNG bytes for every embedded plot of the reports in ``results``."""
    found: dict[str, bytes] = {}
    for report in sorted(results.glob("*.html")):
        for match in _IMAGE.finditer(report.read_text(encoding="utf-8")):
            found[f"{PLOTS_DIR}/{report.stem}-{anchor(match['alt'])}.png"] = base64.b64decode(match["data"])
    return found
