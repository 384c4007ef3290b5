"""Import access to the site's build code in ``docs/hooks/`` (MkDocs loads it from that folder, not as a package)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "docs" / "hooks"

if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))
