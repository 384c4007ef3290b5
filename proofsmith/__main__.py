"""``python -m proofsmith``: the same entry point as the console script."""

from proofsmith.cli import main

raise SystemExit(main())
