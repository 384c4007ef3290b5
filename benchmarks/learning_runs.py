"""What the tiny learning benchmarks share: one GRPO run per (learning rate, seed), measured after, and the result file.

Each learning rate is run for every seed, the trained model measured by ``measure`` (its
``final/``), and a record kept per run; the second learning rate is 1e-30 by convention, the
trainer that cannot learn (the configs refuse 0). Used by ``tiny_generator_learning.py`` and
``tiny_verifier_learning.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CANNOT_LEARN = 1e-30
"""The learning rate of the control runs: what a trainer that does not learn gives."""


def runs_per_seed(command: Callable[[Path, int, float], list[str]], scratch: Path, seeds: Sequence[int],
                  learning_rate: float, measure: Callable[[Path], dict[str, Any]]) -> list[dict[str, Any]]:
    """For ``learning_rate`` and then ``CANNOT_LEARN``, each seed: ``proofsmith`` with ``command(run_dir, seed,
    rate)``, then ``measure(run_dir / "final")`` merged into the run's record (with its training seconds)."""
    records = []
    for rate in (learning_rate, CANNOT_LEARN):
        for seed in seeds:
            run_dir = scratch / f"run-{rate}-{seed}"
            started = time.monotonic()
            subprocess.run([sys.executable, "-m", "proofsmith", *command(run_dir, seed, rate)], cwd=REPO, check=True,
                           stdout=subprocess.DEVNULL)
            seconds = round(time.monotonic() - started, 1)
            record = {"learning_rate": rate, "seed": seed, **measure(run_dir / "final"), "train_s": seconds}
            print(f"lr {rate:g} seed {seed}: {json.dumps(record)}")
            records.append(record)
    return records


def write_result(out: str, name: str, results: dict[str, Any]) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {folder / name}")
