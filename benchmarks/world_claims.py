"""Every claim of the paper on the world model (issue 34): one command that reproduces them all, one HTML report.

    python benchmarks/world_claims.py --out benchmarks/results              # run what is not done, then the report
    python benchmarks/world_claims.py --out benchmarks/results --only e f   # some claims only
    python benchmarks/world_claims.py --dry-run                             # the steps, their state and cost
    python benchmarks/world_claims.py --out benchmarks/results --report     # only the report, from the results there

Each step is one benchmark script, run in a subprocess with ``--out OUT``; each script resumes by itself (a
training, calibration or evaluation whose output is there is read back, a killed training goes on from its last
checkpoint). A step that exits 0 leaves ``RUNS/STEP.done`` (its wall seconds), so a rerun skips it; delete the
marker to measure it again. When every step has run (or one failed) ``OUT/world_claims.html`` is written from the
results in OUT (``world_claims_report.py``): each claim's goal, whether it is met, its tables and plots.

The minutes beside each step were measured on the 2-core CPU without native bf16 (fp32 world model) that the
results come from; all of it takes ~14.5 hours there, not the issue's 3, because every GRPO run is 100 steps
(verifier 20–26 minutes, generator 11–24) and every model is calibrated on hundreds of held-out proofs. The start
of every step is the bundled ``world-model``; training it again from scratch is ``proofsmith world model --config
configs/world_model.toml`` (156 minutes, docs/results/world-model.md) and is not a step here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.atomic import write_text_atomic  # noqa: E402

REPORT = "world_claims.html"


@dataclass(frozen=True)
class Step:
    """One benchmark script run of the reproduction."""

    name: str
    """Its marker's name (RUNS/NAME.done)."""
    claims: tuple[str, ...]
    """The issue's claims it measures: a-f, or ci (the learning tests)."""
    script: str
    """The script under benchmarks/."""
    arguments: tuple[str, ...]
    """Its arguments, less --out."""
    minutes: int
    """Its wall minutes on the CPU the results come from (see the module docstring)."""

    def __post_init__(self) -> None:
        if not self.name or not set(self.claims) <= set(CLAIMS):
            raise ValueError(f"step {self.name!r}: claims must be among {CLAIMS}, not {self.claims}")
        if not (REPO / "benchmarks" / self.script).is_file():
            raise ValueError(f"step {self.name!r}: no script benchmarks/{self.script}")

    def command(self, out: Path) -> list[str]:
        return [sys.executable, str(REPO / "benchmarks" / self.script), "--out", str(out), *self.arguments]


CLAIMS = ("a", "b", "c", "d", "e", "f", "ci")
GENERATOR_ARMS = ("--unit", "group", "--set", "grpo.learning_rate=1e-5", "--tag", "lr1e-5")
STEPS = (
    # Every arm's first seed (reference, none: (b); checker, checker_work: R_meta from the truth), then (c) on the
    # reference arm's seed 0, then its seeds 1 and 2 ((a)'s three), then the report of all the finished runs.
    Step("verifier-rl-first-seed", ("a", "b", "c"), "world_verifier_rl.py", ("--seeds", "0"), 195),
    Step("verifier-rl-seeds", ("a",), "world_verifier_rl.py", ("--seeds", "0", "1", "2", "--arms", "reference"), 65),
    Step("verifier-rl-report", ("a", "b", "c"), "world_verifier_rl.py", ("--seeds", "0", "1", "2", "--finished-only"), 2),
    Step("generator-arms", ("d",), "world_generator_arms.py",
         ("--seeds", "0", "1", "2", "--arms", "checker", "reference", "self", *GENERATOR_ARMS), 180),
    Step("loop", ("e",), "world_model_loop.py", ("--seeds", "0", "1", "2"), 230),
    Step("loop-checker-labels", ("e",), "world_model_loop.py", ("--seeds", "0", "1", "2", "--labeler", "checker"), 105),
    Step("test-time", ("f",), "world_test_time.py",
         ("--name", "world_model_test_time", "--world", "runs/world-lm-long/world", "--model", "world-model", "--split", "test_in",
          "--per-template", "5", "--max-model-len", "1024", "--max-tokens", "640", "--runs", "runs/world-model-test-time"), 40),
    Step("tiny-generator-learning", ("ci",), "tiny_generator_learning.py", (), 8),
    Step("tiny-verifier-learning", ("ci",), "tiny_verifier_learning.py", ("--recipe", "held-out"), 20),
    Step("tiny-verifier-learning-few", ("ci",), "tiny_verifier_learning.py", ("--recipe", "few"), 25),
)


def chosen(only: list[str] | None) -> list[Step]:
    return [step for step in STEPS if not only or set(step.claims) & set(only)]


def state(step: Step, runs: Path) -> str:
    marker = runs / f"{step.name}.done"
    return f"done ({json.loads(marker.read_text(encoding='utf-8'))['seconds'] / 60:.0f} min)" if marker.exists() else "to run"


def steps_table(steps: list[Step], runs: Path, out: Path) -> str:
    from world_claims_report import table

    rows = [[step.name, " ".join(step.claims), " ".join(["python", f"benchmarks/{step.script}", "--out", str(out), *step.arguments]),
             step.minutes, state(step, runs)] for step in steps]
    return table(["step", "claims", "command", "minutes here", "state"], rows)


def run(step: Step, runs: Path, out: Path) -> None:
    """Run one step to its end (its progress on this stderr) and leave its marker; a failure is a one-line error."""
    print(f"[world claims] {step.name} ({', '.join(step.claims)}; ~{step.minutes} min here)", file=sys.stderr, flush=True)
    started = time.monotonic()
    result = subprocess.run(step.command(out), cwd=REPO)
    if result.returncode != 0:
        raise SystemExit(f"error: step {step.name} failed (exit {result.returncode}): "
                         f"{' '.join(step.command(out))}; rerun this command to resume")
    write_text_atomic(runs / f"{step.name}.done", json.dumps({"seconds": round(time.monotonic() - started, 1)}) + "\n")


def write_report(out: Path, runs: Path) -> Path:
    from world_claims_report import page
    from world_runs import MACHINE

    path = out / REPORT
    write_text_atomic(path, page(out, steps_table(list(STEPS), runs, out), MACHINE))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where every script's results and world_claims.html go")
    parser.add_argument("--runs", default="runs/world-claims", help="where the steps' done-markers go")
    parser.add_argument("--only", nargs="+", choices=CLAIMS, help="run only the steps of these claims (ci: the learning tests)")
    parser.add_argument("--dry-run", action="store_true", help="list the steps, their commands and state; run nothing")
    parser.add_argument("--report", action="store_true", help="run nothing: write the report from the results in --out")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    steps = chosen(args.only)
    if args.dry_run:
        for step in steps:
            print(f"{step.name:28} {' '.join(step.claims):6} ~{step.minutes:3} min  {state(step, runs):14} "
                  f"benchmarks/{step.script} --out {out} {' '.join(step.arguments)}")
        print(f"{sum(step.minutes for step in steps if state(step, runs) == 'to run')} minutes to run here")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    try:
        if not args.report:
            if any(state(step, runs) == "to run" and step.claims != ("ci",) for step in steps):
                from world_runs import draw_world

                try:
                    draw_world()  # every world step reads it; a fresh clone has none (the ci steps use the test fixture's)
                except subprocess.CalledProcessError as error:
                    raise SystemExit(f"error: drawing the world failed (exit {error.returncode}); rerun this command") from None
            for step in steps:
                if state(step, runs) == "to run":
                    run(step, runs, out)
    finally:
        print(f"wrote {write_report(out, runs)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
