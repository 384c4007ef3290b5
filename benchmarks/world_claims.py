"""Every claim of the paper on the world model (issue 34): one command that reproduces them all, one HTML report.

    python benchmarks/world_claims.py --out benchmarks/results              # run what is not done, then the report
    python benchmarks/world_claims.py --out benchmarks/results --only e f   # some claims only
    python benchmarks/world_claims.py --dry-run                             # the steps, their state and cost
    python benchmarks/world_claims.py --out benchmarks/results --report     # only the report, from the results there
    python benchmarks/world_claims.py --profile fast                        # 40 GRPO steps a run, not 100 (below)

Each step is one benchmark script, run in a subprocess with ``--out OUT``; each script resumes by itself (a
training, calibration or evaluation whose output is there is read back, a killed training goes on from its last
checkpoint). A step that exits 0 leaves ``RUNS/STEP.done`` (its wall seconds), so a rerun skips it; delete the
marker to measure it again. When every step has run (or one failed) ``OUT/world_claims.html`` is written from the
results in OUT (``world_claims_report.py``): each claim's goal, whether it is met, its tables and plots.

The minutes beside each step are those of the 2-core CPUs the published results come from: the verifier and generator
steps ((a)–(d)) ran on one with native bf16 (AMX), the rest on one without (the world model in fp32), which trains the
world model ~3–4 times slower (a verifier GRPO step: 11–15 s with AMX, 47 s without, median, measured 2026-12-07). All
of it takes ~14.5 hours there, not the issue's 3, because every GRPO run is 100 steps (verifier 20–26 minutes,
generator 11–24, with AMX) and every model is calibrated on hundreds of held-out proofs. The start of every step is
the bundled ``world-model``; training it again from scratch is ``proofsmith world model --config
configs/world_model.toml`` (156 minutes, docs/results/world-model.md) and is not a step here.

``--profile fast`` (results in benchmarks/results/fast, markers in runs/world-claims-fast) changes only what it must
for every GRPO run to take at most 10 minutes on the AMX CPU: verifier and generator GRPO stop at 40 steps of the full
profile's 100 (runs under runs/fast), (b) compares one seed, (c) reads n = 1…8 from the calibrations' 8 analyses a
proof instead of sampling 16 again, the sharpening analysis is skipped, and (e) runs seed 0 only. Every other step is
the full profile's, with the same runs, so whatever one profile ran the other reads back. Its minutes are estimated
from the full profile's measured rates on the same CPUs (~6 hours in all). Without native bf16 a 40-step verifier run
took 32 minutes and its calibration ~26 (measured 2026-12-07). That run kept a third of the full run's gain in
balanced accuracy on seed 0 (+0.015 [−0.000, +0.031] against +0.046 [+0.028, +0.065]); 40 steps at 2.5 times the
learning rate kept less (+0.008 [−0.016, +0.033]), so the rate stays the full profile's. The fast profile checks that
everything runs; its numbers do not stand in for the full one's (docs/results/index.md, "A fast profile").
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


FAST_RUNS = "runs/fast"
"""Where the fast profile's trainings go: their configs differ from the full profile's, so they must not resume its runs."""
FAST_VERIFIER = ("--runs", FAST_RUNS, "--set", "grpo.max_steps=40", "--scaling-samples", "8", "--no-sharpening")
FAST_STEPS = (
    # Minutes on the CPUs of the full profile's (AMX for (a)–(d)), estimated from its measured rates: a verifier GRPO step
    # 11–15 s, a verifier calibration ~5 min, the start's ~20 min of prerequisites, a generator run 40/100 of its training
    # minutes (reference ~24, checker and self ~11) and a generator calibration ~3. Without AMX, measured 2026-12-07: the
    # prerequisites 43 min, a 40-step verifier run 32 and its calibration ~26 (docs/results/index.md). The generator
    # arms have not run in this profile yet.
    Step("verifier-rl-first-seed", ("a", "b", "c"), "world_verifier_rl.py", ("--seeds", "0", "--arms", "reference", "none",
                                                                             *FAST_VERIFIER), 48),
    Step("verifier-rl-seeds", ("a",), "world_verifier_rl.py",
         ("--seeds", "0", "1", "2", "--arms", "reference", *FAST_VERIFIER), 28),
    Step("verifier-rl-report", ("a", "b", "c"), "world_verifier_rl.py",
         ("--seeds", "0", "1", "2", "--arms", "reference", "none", "--finished-only", *FAST_VERIFIER), 1),
    Step("generator-arms", ("d",), "world_generator_arms.py",
         ("--seeds", "0", "1", "2", "--arms", "checker", "reference", "self", *GENERATOR_ARMS, "--set", "grpo.max_steps=40",
          "--runs", f"{FAST_RUNS}/world-generator"), 86),
    Step("loop", ("e",), "world_model_loop.py", ("--seeds", "0"), 77),
    Step("loop-checker-labels", ("e",), "world_model_loop.py", ("--seeds", "0", "--labeler", "checker"), 35),
    *(step for step in STEPS if step.claims in (("f",), ("ci",))),
)
PROFILES = {"full": STEPS, "fast": FAST_STEPS}
DEFAULTS = {"full": ("benchmarks/results", "runs/world-claims"), "fast": ("benchmarks/results/fast", "runs/world-claims-fast")}
"""Each profile's --out and --runs."""


def chosen(only: list[str] | None, profile: str = "full") -> list[Step]:
    return [step for step in PROFILES[profile] if not only or set(step.claims) & set(only)]


def state(step: Step, runs: Path) -> str:
    marker = runs / f"{step.name}.done"
    return f"done ({json.loads(marker.read_text(encoding='utf-8'))['seconds'] / 60:.0f} min)" if marker.exists() else "to run"


def steps_table(steps: list[Step], runs: Path, out: Path, profile: str = "full") -> str:
    import html

    from world_claims_report import table

    command = f"python benchmarks/world_claims.py --profile {profile} --out {out} --runs {runs}"
    rows = [[step.name, " ".join(step.claims), " ".join(["python", f"benchmarks/{step.script}", "--out", str(out), *step.arguments]),
             step.minutes, state(step, runs)] for step in steps]
    return (f"<p>Profile <b>{profile}</b>, all of it, resuming: <code>{html.escape(command)}</code>. Its steps:</p>"
            + table(["step", "claims", "command", "minutes here", "state"], rows))


def run(step: Step, runs: Path, out: Path) -> None:
    """Run one step to its end (its progress on this stderr) and leave its marker; a failure is a one-line error."""
    print(f"[world claims] {step.name} ({', '.join(step.claims)}; ~{step.minutes} min here)", file=sys.stderr, flush=True)
    started = time.monotonic()
    result = subprocess.run(step.command(out), cwd=REPO)
    if result.returncode != 0:
        raise SystemExit(f"error: step {step.name} failed (exit {result.returncode}): "
                         f"{' '.join(step.command(out))}; rerun this command to resume")
    write_text_atomic(runs / f"{step.name}.done", json.dumps({"seconds": round(time.monotonic() - started, 1)}) + "\n")


def write_report(out: Path, runs: Path, profile: str = "full") -> Path:
    from world_claims_report import page
    from world_runs import MACHINE

    path = out / REPORT
    write_text_atomic(path, page(out, steps_table(list(PROFILES[profile]), runs, out, profile), MACHINE))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="full", choices=list(PROFILES),
                        help="full: the published results (~14.5 h); fast: 40 GRPO steps a run, a smoke check (see above)")
    parser.add_argument("--out", help="where every script's results and world_claims.html go (default: the profile's, above)")
    parser.add_argument("--runs", help="where the steps' done-markers go (default: the profile's, above)")
    parser.add_argument("--only", nargs="+", choices=CLAIMS, help="run only the steps of these claims (ci: the learning tests)")
    parser.add_argument("--dry-run", action="store_true", help="list the steps, their commands and state; run nothing")
    parser.add_argument("--report", action="store_true", help="run nothing: write the report from the results in --out")
    args = parser.parse_args()
    out, runs = Path(args.out or DEFAULTS[args.profile][0]), Path(args.runs or DEFAULTS[args.profile][1])
    steps = chosen(args.only, args.profile)
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
        print(f"wrote {write_report(out, runs, args.profile)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
