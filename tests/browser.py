"""Headless Chromium for the tests that check what a real browser renders.

The rule for every such test: without Chromium it skips, with the reason in pytest's
summary, unless the ``CI`` environment variable is set; under CI (``.ci/run`` sets it and
installs Chromium) a missing Chromium is a failure, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL_HINT = ("apt-get update && apt-get install -y --no-install-recommends chromium "
                "(CI's .ci/run installs it when missing)")
BINARIES = ("chromium", "chromium-browser", "google-chrome")


def skip_or_fail(needed: str) -> None:
    """Skip with ``needed`` as the reason, or fail with it when ``CI`` is set."""
    if os.environ.get("CI"):  # CI installs what the tests need: missing there is a failure, not a skip
        pytest.fail(needed, pytrace=False)
    pytest.skip(f"{needed} (skipped because CI is not set)")


def chromium(*args: str, profile: Path, purpose: str) -> str:
    """Run headless Chromium with ``args`` and a fresh profile; its stdout. ``purpose`` says what needs it."""
    binary = next(filter(None, map(shutil.which, BINARIES)), None)
    if binary is None:
        skip_or_fail(f"Chromium is needed to check that {purpose}; install it with: {INSTALL_HINT}")
    # --no-sandbox: Chromium refuses to start as root (CI containers) with its sandbox on.
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               f"--user-data-dir={profile}", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"chromium failed ({result.returncode}): {result.stderr[-2000:]}"
    return result.stdout
